//! A server started with an HTTP address, and minimal HTTP/1.1 clients: one keep-alive TCP
//! connection each (`TCP_NODELAY`), `Content-Length` or chunked bodies, JSON or SSE answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::{Burst, Call, Era, Samples, call_request, check_call};

pub struct Server {
    child: Child,
    addr: String,
    /// `tools/call` requests answered so far, by every client (counted after each measurement).
    calls: AtomicU64,
    /// What the clients call (default: the suite's `add`).
    call: Call,
}

impl Server {
    /// Starts `binary ARGS... ADDR` on a free loopback port and waits until it accepts.
    pub fn start(binary: &Path, args: &[String]) -> Server {
        Server::start_with_env(binary, args, &[])
    }

    /// [`start`](Self::start) with these environment variables set too.
    pub fn start_with_env(binary: &Path, args: &[String], env: &[(String, String)]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port();
        let addr = format!("127.0.0.1:{port}");
        let child = crate::command(binary)
            .args(args)
            .arg(&addr)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .env("RUST_LOG", "off")
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < deadline, "{} did not listen on {addr}", binary.display());
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, addr, calls: AtomicU64::new(0), call: Call::add() }
    }

    /// What the clients call from now on.
    pub fn set_call(&mut self, call: Call) {
        self.call = call;
    }

    /// `tools/call add`, one at a time, on one connection.
    pub fn sequential(&self, era: Era, warmup: usize, calls: usize) -> Samples {
        let mut client = Client::open(&self.addr, era, &self.call);
        let mut samples = Vec::with_capacity(calls);
        let mut measured_from = Instant::now();
        for i in 0..warmup + calls {
            if i == warmup {
                measured_from = Instant::now();
            }
            let begin = Instant::now();
            client.call_add();
            if i >= warmup {
                samples.push(begin.elapsed());
            }
        }
        let took = measured_from.elapsed();
        self.calls.fetch_add(client.next_id, Ordering::Relaxed);
        Samples::new(samples, took)
    }

    /// `clients` connections calling `tools/call add` in parallel.
    pub fn parallel(&self, era: Era, clients: usize, calls_each: usize) -> Burst {
        let barrier = Barrier::new(clients + 1);
        std::thread::scope(|scope| {
            for _ in 0..clients {
                scope.spawn(|| {
                    let mut client = Client::open(&self.addr, era, &self.call);
                    for _ in 0..50 {
                        client.call_add();
                    }
                    barrier.wait();
                    for _ in 0..calls_each {
                        client.call_add();
                    }
                    barrier.wait();
                    self.calls.fetch_add(client.next_id, Ordering::Relaxed);
                });
            }
            barrier.wait();
            let begin = Instant::now();
            barrier.wait();
            Burst::new(clients * calls_each, begin.elapsed())
        })
    }
}

impl Server {
    /// How many `tools/call` requests this server has answered (warm-ups included).
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

impl Drop for Server {
    /// SIGTERM first (servers stop gracefully, a profiler wrapping one writes its data), then
    /// SIGKILL after a while.
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Client {
    reader: BufReader<Conn>,
    writer: Conn,
    host: String,
    era: Era,
    session: Option<String>,
    next_id: u64,
    call: Call,
}

/// A client's connection: blocking, or (`poll`) non-blocking and retried, the thread yielding
/// the CPU in between, so that it never sleeps in the kernel.
struct Conn {
    stream: TcpStream,
    poll: bool,
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.stream.read(buf) {
                Err(e) if self.poll && e.kind() == std::io::ErrorKind::WouldBlock => std::thread::yield_now(),
                other => return other,
            }
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        loop {
            match self.stream.write(buf) {
                Err(e) if self.poll && e.kind() == std::io::ErrorKind::WouldBlock => std::thread::yield_now(),
                other => return other,
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}

struct Answer {
    status: u16,
    session: Option<String>,
    /// The JSON-RPC message (an SSE answer's `data`).
    message: String,
}

impl Client {
    fn open(addr: &str, era: Era, call: &Call) -> Client {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        let poll = crate::POLL.load(Ordering::Relaxed);
        stream.set_nonblocking(poll).expect("O_NONBLOCK");
        let mut client = Client {
            reader: BufReader::with_capacity(
                64 * 1024,
                Conn { stream: stream.try_clone().expect("clone"), poll },
            ),
            writer: Conn { stream, poll },
            host: addr.to_owned(),
            era,
            session: None,
            next_id: 0,
            call: call.clone(),
        };
        if era != Era::Stateless {
            let answer = client.post(
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-bench","version":"1"}}}"#,
                "initialize",
            );
            assert!(
                answer.status == 200 && answer.message.contains("\"result\""),
                "initialize: {}",
                answer.message
            );
            client.session = answer.session;
            let answer = client.post(
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "notifications/initialized",
            );
            assert!(answer.status == 202 || answer.status == 200, "initialized: {}", answer.status);
        }
        client
    }

    fn call_add(&mut self) {
        self.next_id += 1;
        let id = self.next_id;
        let answer = self.post(&call_request(id, self.era, &self.call), "tools/call");
        assert_eq!(answer.status, 200, "{}", answer.message);
        check_call(&answer.message, id, &self.call);
    }

    fn post(&mut self, body: &str, method: &str) -> Answer {
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        match self.era {
            Era::Handshake | Era::HandshakeSameBytes => {
                if let Some(session) = &self.session {
                    head.push_str(&format!(
                        "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
                    ));
                }
            }
            Era::Stateless => {
                head.push_str(&format!("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"));
                if method == "tools/call" {
                    head.push_str(&format!("Mcp-Name: {}\r\n", self.call.name));
                }
            }
        }
        head.push_str("\r\n");
        head.push_str(body);
        self.writer.write_all(head.as_bytes()).expect("send");
        self.read_answer()
    }

    fn read_answer(&mut self) -> Answer {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("status line");
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {line:?}"));
        let (mut length, mut chunked, mut sse, mut session) = (None, false, false, None);
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("header");
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let Some((name, value)) = header.split_once(':') else { continue };
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "content-type" => sse = value.starts_with("text/event-stream"),
                "mcp-session-id" => session = Some(value.to_owned()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line).expect("chunk size");
                let size = usize::from_str_radix(line.trim_end().split(';').next().unwrap_or("0"), 16)
                    .expect("chunk size");
                let start = body.len();
                body.resize(start + size, 0);
                self.reader.read_exact(&mut body[start..]).expect("chunk");
                line.clear();
                self.reader.read_line(&mut line).expect("chunk end");
                if size == 0 {
                    break;
                }
            }
        } else if let Some(length) = length {
            body.resize(length, 0);
            self.reader.read_exact(&mut body).expect("body");
        }
        let text = String::from_utf8(body).expect("UTF-8 body");
        let message = if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|d| d.starts_with('{'))
                .unwrap_or_default()
                .to_owned()
        } else {
            text
        };
        Answer { status, session, message }
    }
}
