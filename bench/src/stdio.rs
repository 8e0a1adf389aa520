//! A server started as a child process and spoken to over its stdin/stdout pipes, the way a host
//! starts a stdio MCP server.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{Burst, Call, Era, STATELESS_META, Samples, call_request, check_call};

pub struct Server {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    era: Era,
    next_id: u64,
    line: String,
    /// What `sequential` and `pipelined` call (default: the suite's `add`).
    call: Call,
    /// From the start of the process to the answer to its first request.
    pub started: Duration,
}

impl Server {
    /// Starts `binary`, and opens the conversation: `initialize` (2025-11-25) or `server/discover`
    /// (2026-07-28).
    pub fn start(binary: &Path, args: &[String], era: Era) -> Server {
        Server::start_with_env(binary, args, &[], era)
    }

    /// [`start`](Self::start) with these environment variables set too.
    pub fn start_with_env(binary: &Path, args: &[String], env: &[(String, String)], era: Era) -> Server {
        let begin = Instant::now();
        let mut child = crate::command(binary)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env("RUST_LOG", "off")
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let input = BufWriter::new(child.stdin.take().expect("stdin"));
        let output = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
        let mut server = Server {
            child,
            input,
            output,
            era,
            next_id: 0,
            line: String::new(),
            call: Call::add(),
            started: Duration::ZERO,
        };
        let opening = match era {
            Era::Handshake | Era::HandshakeSameBytes => server.request(
                "initialize",
                r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-bench","version":"1"}}"#,
            ),
            Era::Stateless => server.request("server/discover", &format!(r#"{{"_meta":{STATELESS_META}}}"#)),
        };
        server.started = begin.elapsed();
        assert!(
            opening.contains("\"result\""),
            "{}: the opening request failed: {opening}",
            binary.display()
        );
        if era != Era::Stateless {
            server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        }
        server
    }

    fn send(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).expect("write to the server");
        self.input.write_all(b"\n").expect("write to the server");
        self.input.flush().expect("write to the server");
    }

    fn receive(&mut self) -> &str {
        self.line.clear();
        let n = self.output.read_line(&mut self.line).expect("read from the server");
        assert!(n > 0, "the server closed its output");
        &self.line
    }

    /// One request, its answer's text (notifications in between are skipped).
    pub fn request(&mut self, method: &str, params: &str) -> String {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#));
        let expected = format!("\"id\":{id}");
        loop {
            let line = self.receive();
            if line.contains(&expected) {
                return line.to_owned();
            }
        }
    }

    /// What `sequential` and `pipelined` call from now on.
    pub fn set_call(&mut self, call: Call) {
        self.call = call;
    }

    /// Resident memory now and at its peak (`VmRSS`, `VmHWM`), in KiB.
    pub fn memory(&self) -> (u64, u64) {
        memory_of(self.child.id())
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How many requests (with an id) this conversation has sent: its opening and every call.
    pub fn requests(&self) -> u64 {
        self.next_id
    }

    /// `tools/call add`, one at a time.
    pub fn sequential(&mut self, warmup: usize, calls: usize) -> Samples {
        let mut samples = Vec::with_capacity(calls);
        let begin_all = Instant::now();
        let mut measured_from = begin_all;
        for i in 0..warmup + calls {
            if i == warmup {
                measured_from = Instant::now();
            }
            self.next_id += 1;
            let id = self.next_id;
            let request = call_request(id, self.era, &self.call);
            let begin = Instant::now();
            self.send(&request);
            self.line.clear();
            let n = self.output.read_line(&mut self.line).expect("read from the server");
            let took = begin.elapsed();
            assert!(n > 0, "the server closed its output");
            check_call(&self.line, id, &self.call);
            if i >= warmup {
                samples.push(took);
            }
        }
        Samples::new(samples, measured_from.elapsed())
    }

    /// `tools/call add` with `window` requests in flight.
    pub fn pipelined(&mut self, calls: usize, window: usize) -> Burst {
        let first = self.next_id + 1;
        self.next_id += calls as u64;
        let era = self.era;
        let call = &self.call;
        let (tokens, take) = mpsc::sync_channel::<()>(window);
        for _ in 0..window {
            tokens.send(()).expect("token");
        }
        let begin = Instant::now();
        std::thread::scope(|scope| {
            let input = &mut self.input;
            scope.spawn(move || {
                for id in first..first + calls as u64 {
                    take.recv().expect("token");
                    input.write_all(call_request(id, era, call).as_bytes()).expect("write");
                    input.write_all(b"\n").expect("write");
                    input.flush().expect("write");
                }
            });
            let mut line = String::new();
            for _ in 0..calls {
                line.clear();
                let n = self.output.read_line(&mut line).expect("read");
                assert!(n > 0, "the server closed its output");
                assert!(
                    line.contains(&call.expect)
                        && line.contains("\"result\"")
                        && !line.contains("\"isError\":true"),
                    "unexpected answer: {line}"
                );
                let _ = tokens.try_send(());
            }
        });
        Burst::new(calls, begin.elapsed())
    }

    /// `tools/list` (one page), one at a time.
    pub fn list_tools(&mut self, rounds: usize) -> Samples {
        let params = match self.era {
            Era::Handshake => "{}".to_owned(),
            Era::Stateless | Era::HandshakeSameBytes => format!(r#"{{"_meta":{STATELESS_META}}}"#),
        };
        let mut samples = Vec::with_capacity(rounds);
        let all = Instant::now();
        for _ in 0..rounds + 2 {
            let begin = Instant::now();
            let answer = self.request("tools/list", &params);
            samples.push(begin.elapsed());
            assert!(answer.contains("\"tools\""), "tools/list failed: {}", &answer[..answer.len().min(300)]);
        }
        samples.drain(..2); // warm-up
        Samples::new(samples, all.elapsed())
    }

    /// The `result` of `tools/list`, as text.
    pub fn tools_list_text(&mut self) -> String {
        let answer = self.request("tools/list", "{}");
        let value: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
        value["result"].to_string()
    }

    /// Resident memory now (after a moment's rest) and at its peak, in KiB; ends the server.
    pub fn finish(mut self) -> (u64, u64) {
        std::thread::sleep(Duration::from_millis(200));
        let figures = self.memory();
        // End of input: the server finishes and exits (a profiler wrapping it writes its data).
        drop(self.input);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        figures
    }
}

/// Resident memory of process `pid` now and at its peak (`VmRSS`, `VmHWM`), in KiB (0 when gone).
pub fn memory_of(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
