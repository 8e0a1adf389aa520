//! Soak benchmark: a million calls over stdio and over Streamable HTTP with 64 concurrent
//! clients, mixing normal calls, cancellations and disconnects; reports throughput, latency,
//! protocol errors and the server's memory over time (see `bench/soak.md`, `scripts/soak.sh`).
//!
//! ```sh
//! scripts/soak.sh                                        # both transports, 1,000,000 calls each
//! cargo run --release --example bench_soak -- --calls 20000 --transport http
//! cargo run --release --example bench_soak -- --echo-only   # baseline: no cancellations, no disconnects
//! ```
//!
//! The same binary is the server and the driver. `bench_soak serve-stdio` serves two tools over
//! stdio, `bench_soak serve-http` over HTTP on 127.0.0.1 (printing `listening ADDR`, stopping when
//! its stdin ends); the driver (no subcommand) spawns itself as the server, drives it with
//! `--clients` concurrent workers, and samples the child's `VmRSS`/`VmHWM` in `/proc`.
//!
//! * stdio (one client: one connection): the workers pipeline requests on it; 94% `echo` (timed),
//!   5% `hold` of 5 s cancelled 1 ms later with `notifications/cancelled` (no answer may come),
//!   1% `hold` of 1 ms answered normally. Stdio has no disconnect (the connection is the process).
//! * HTTP: each worker has its own keep-alive connection and session; 92% `echo` (timed), 1%
//!   2026-07-28 stateless `echo` calls, 3% `hold` of 5 s on a second connection cancelled from the
//!   main one (the hold's POST must end with 202 and no body), 3% `hold` on a fresh connection
//!   dropped 1 ms later, 1% session churn (DELETE, then a new `initialize`).
//!
//! Exits with 1 when a protocol error was seen or the server's RSS grew by more than 10% from the
//! end of the warm-up (10% of the calls) to the end.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mcp_tools::{HttpOptions, Server, tool};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::unix::pipe;
use tokio::sync::{Barrier, mpsc, oneshot};

// ---------------------------------------------------------------------------------------------
// The server.

/// `echo` calls served, and `hold` calls started, run to the end (short or long) or dropped
/// (cancelled): printed on stderr when the server stops, read by the driver.
static ECHOED: AtomicU64 = AtomicU64::new(0);
static HOLDS_STARTED: AtomicU64 = AtomicU64::new(0);
static HOLDS_FINISHED_SHORT: AtomicU64 = AtomicU64::new(0);
static HOLDS_FINISHED_LONG: AtomicU64 = AtomicU64::new(0);
static HOLDS_DROPPED: AtomicU64 = AtomicU64::new(0);

/// Counts a `hold` call that ends without finishing (its future dropped: cancelled).
struct HoldGuard {
    finished: Option<u64>,
}

impl Drop for HoldGuard {
    fn drop(&mut self) {
        let counter = match self.finished {
            None => &HOLDS_DROPPED,
            Some(ms) if ms >= 1000 => &HOLDS_FINISHED_LONG,
            Some(_) => &HOLDS_FINISHED_SHORT,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Echo the text back.
#[tool]
async fn echo(
    /// The text to send back.
    text: String,
) -> String {
    ECHOED.fetch_add(1, Ordering::Relaxed);
    text
}

/// Sleep `ms` milliseconds, then answer with `ms`.
#[tool]
async fn hold(
    /// How long to sleep, in milliseconds.
    ms: u64,
) -> u64 {
    HOLDS_STARTED.fetch_add(1, Ordering::Relaxed);
    let mut guard = HoldGuard { finished: None };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    guard.finished = Some(ms);
    ms
}

const STATS_PREFIX: &str = "soak-server-stats";

fn server_stats() -> String {
    format!(
        "{STATS_PREFIX} echo={} hold_started={} hold_finished_short={} hold_finished_long={} hold_dropped={}",
        ECHOED.load(Ordering::Relaxed),
        HOLDS_STARTED.load(Ordering::Relaxed),
        HOLDS_FINISHED_SHORT.load(Ordering::Relaxed),
        HOLDS_FINISHED_LONG.load(Ordering::Relaxed),
        HOLDS_DROPPED.load(Ordering::Relaxed),
    )
}

fn soak_server() -> Server {
    Server::builder().name("soak").version("1").build().expect("a valid catalog")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a Tokio runtime")
}

fn serve_stdio() -> ExitCode {
    let result = runtime().block_on(async { soak_server().serve_stdio().await });
    eprintln!("{}", server_stats());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("serve-stdio: {e}");
            ExitCode::FAILURE
        }
    }
}

fn serve_http() -> ExitCode {
    let result = runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        println!("listening {}", listener.local_addr()?);
        std::io::stdout().flush()?;
        // Stops when the driver closes our stdin.
        let shutdown = async {
            let mut stdin = tokio::io::stdin();
            let mut buf = [0u8; 256];
            while let Ok(1..) = stdin.read(&mut buf).await {}
        };
        // Sessions are deleted as they churn: at most `--clients` live at once.
        let options = HttpOptions::new().max_sessions(4096);
        soak_server().serve_http_on(listener, options, shutdown).await
    });
    eprintln!("{}", server_stats());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("serve-http: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What the driver measures.

/// SplitMix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The server process's memory and resources, from `/proc/PID`.
#[derive(Clone, Copy, Default)]
struct Mem {
    rss_kib: u64,
    hwm_kib: u64,
    threads: u64,
    fds: u64,
}

fn mem_of(pid: u32) -> Mem {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as u64);
    Mem { rss_kib: field("VmRSS:"), hwm_kib: field("VmHWM:"), threads: field("Threads:"), fds }
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

#[derive(Clone, Copy)]
enum Kind {
    Echo,
    Stateless,
    HoldShort,
    Cancel,
    CancelResent,
    Disconnect,
    Churn,
}

const KINDS: usize = 7;

impl Kind {
    fn describe(self) -> String {
        let delay = CANCEL_DELAY_MS.load(Ordering::Relaxed);
        match self {
            Kind::Echo => "`echo` calls (timed)",
            Kind::Stateless => "2026-07-28 stateless `echo` calls (no session)",
            Kind::HoldShort => "`hold` 1 ms, answered",
            Kind::Cancel => return format!("`hold` 5 s, cancelled {delay} ms later (no answer)"),
            Kind::CancelResent => {
                "`hold` 5 s, cancelled twice: the first cancellation overtook the call (sent on the other connection), sent again after 500 ms"
            }
            Kind::Disconnect => "`hold` 5 s, connection dropped 1 ms later",
            Kind::Churn => "session churn (DELETE, then a new initialize)",
        }
        .to_owned()
    }
}

struct Point {
    label: &'static str,
    t: f64,
    done: u64,
    mem: Mem,
}

/// One transport's run: the work handed out, what happened, and the samples taken.
struct Run {
    pid: u32,
    calls: u64,
    next: AtomicU64,
    done: AtomicU64,
    ids: AtomicU64,
    kinds: [AtomicU64; KINDS],
    errors: AtomicU64,
    error_samples: Mutex<Vec<String>>,
    t0: OnceLock<Instant>,
    end: OnceLock<Instant>,
    checkpoints: Mutex<Vec<Point>>,
    timeline: Mutex<Vec<Point>>,
}

impl Run {
    fn new(pid: u32, calls: u64) -> Arc<Run> {
        Arc::new(Run {
            pid,
            calls,
            next: AtomicU64::new(0),
            done: AtomicU64::new(0),
            ids: AtomicU64::new(1),
            kinds: Default::default(),
            errors: AtomicU64::new(0),
            error_samples: Mutex::new(Vec::new()),
            t0: OnceLock::new(),
            end: OnceLock::new(),
            checkpoints: Mutex::new(Vec::new()),
            timeline: Mutex::new(Vec::new()),
        })
    }

    fn id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed)
    }

    /// The next call to make, if any are left.
    fn take(&self) -> bool {
        self.next.fetch_add(1, Ordering::Relaxed) < self.calls
    }

    fn elapsed(&self) -> f64 {
        self.t0.get().map_or(0.0, |t| t.elapsed().as_secs_f64())
    }

    fn error(&self, what: impl Into<String>) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut samples = self.error_samples.lock().unwrap();
        if samples.len() < 20 {
            let what: String = what.into();
            samples.push(what.chars().take(400).collect());
        }
    }

    fn point(&self, label: &'static str) -> Point {
        Point { label, t: self.elapsed(), done: self.done.load(Ordering::Relaxed), mem: mem_of(self.pid) }
    }

    fn checkpoint(&self, label: &'static str) {
        let point = self.point(label);
        self.checkpoints.lock().unwrap().push(point);
    }

    fn start(&self) {
        self.checkpoint("start (after initialize)");
        let _ = self.t0.set(Instant::now());
    }

    /// A call of this kind ended: the checkpoints are taken by the call that reaches them.
    fn finish(&self, kind: Kind) {
        self.kinds[kind as usize].fetch_add(1, Ordering::Relaxed);
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if done == (self.calls / 10).max(1) {
            self.checkpoint("after warm-up (10%)");
        }
        if done == (self.calls / 2).max(1) {
            self.checkpoint("middle (50%)");
        }
        if done == self.calls {
            let _ = self.end.set(Instant::now());
            self.checkpoint("end (100%)");
        }
    }

    fn checkpoint_mem(&self, prefix: &str) -> Option<Mem> {
        self.checkpoints.lock().unwrap().iter().find(|p| p.label.starts_with(prefix)).map(|p| p.mem)
    }
}

/// Samples the server every 2 s (and shows progress on stderr) until aborted.
fn sample_every_2s(run: Arc<Run>, name: &'static str) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(2));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let point = run.point("");
            eprintln!(
                "{name}: {:>7.1} s  {:>8}/{} calls  RSS {} MiB  {} fds  {} errors",
                point.t,
                point.done,
                run.calls,
                mib(point.mem.rss_kib),
                point.mem.fds,
                run.errors.load(Ordering::Relaxed)
            );
            run.timeline.lock().unwrap().push(point);
        }
    })
}

/// Forwards the child's stderr to ours, keeping its counters line.
fn read_stderr(stderr: pipe::Receiver) -> tokio::task::JoinHandle<Option<String>> {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        let mut stats = None;
        while let Ok(Some(line)) = lines.next_line().await {
            if line.starts_with(STATS_PREFIX) {
                stats = Some(line);
            } else {
                eprintln!("[server] {line}");
            }
        }
        stats
    })
}

struct Spawned {
    child: std::process::Child,
    stdin: pipe::Sender,
    stdout: pipe::Receiver,
    stderr: tokio::task::JoinHandle<Option<String>>,
}

fn spawn_server(mode: &str) -> std::io::Result<Spawned> {
    let mut child = std::process::Command::new(std::env::current_exe()?)
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stdin = pipe::Sender::from_owned_fd(child.stdin.take().expect("piped").into())?;
    let stdout = pipe::Receiver::from_owned_fd(child.stdout.take().expect("piped").into())?;
    let stderr = read_stderr(pipe::Receiver::from_owned_fd(child.stderr.take().expect("piped").into())?);
    Ok(Spawned { child, stdin, stdout, stderr })
}

/// What one transport's run found, for the report.
struct Report {
    transport: &'static str,
    run: Arc<Run>,
    clients: usize,
    latencies: Vec<u32>,
    settled: Point,
    server_stats: Option<String>,
    server_exit: String,
}

impl Report {
    fn wall(&self) -> f64 {
        match (self.run.t0.get(), self.run.end.get()) {
            (Some(t0), Some(end)) => (*end - *t0).as_secs_f64(),
            _ => self.run.elapsed(),
        }
    }

    /// RSS growth from the end of the warm-up to the end, in percent.
    fn growth(&self) -> Option<f64> {
        let warm = self.run.checkpoint_mem("after warm-up")?.rss_kib as f64;
        let end = self.run.checkpoint_mem("end")?.rss_kib as f64;
        Some((end - warm) / warm * 100.0)
    }

    fn errors(&self) -> u64 {
        self.run.errors.load(Ordering::Relaxed)
    }

    fn passed(&self) -> bool {
        self.errors() == 0 && self.growth().is_some_and(|g| g <= 10.0)
    }
}

const TIMEOUT: Duration = Duration::from_secs(30);

/// How long a cancellation follows its call (`--cancel-delay-ms`, default 1).
static CANCEL_DELAY_MS: AtomicU64 = AtomicU64::new(1);

fn cancel_delay() -> Duration {
    Duration::from_millis(CANCEL_DELAY_MS.load(Ordering::Relaxed))
}

/// The server's exit, shown in the report; a failure counts as an error.
async fn wait_for_exit(mut child: std::process::Child, run: &Run) -> String {
    let status = tokio::time::timeout(TIMEOUT, tokio::task::spawn_blocking(move || child.wait())).await;
    match status {
        Ok(Ok(Ok(status))) if status.success() => status.to_string(),
        Ok(Ok(Ok(status))) => {
            run.error(format!("the server exited with {status}"));
            status.to_string()
        }
        other => {
            run.error(format!("waiting for the server to exit: {other:?}"));
            "did not exit".into()
        }
    }
}

/// About 100 bytes of text, unique to the call.
fn echo_text(worker: usize, id: u64) -> String {
    const FILLER: &str = "the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. 0123456789abcdef";
    let prefix = format!("soak w{worker:02} #{id:09} ");
    format!("{prefix}{}", &FILLER[..100 - prefix.len()])
}

fn call_body(id: u64, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
        .to_string()
}

fn cancel_body(id: u64) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "soak"}})
        .to_string()
}

fn initialize_body(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench_soak", "version": "1"}}})
    .to_string()
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn short(text: &str) -> String {
    text.chars().take(300).collect()
}

/// Checks a JSON-RPC answer to request `id`: a result, not an error, not `isError`, whose first
/// content block is `text` (or whose structured `result` is `number`).
fn check_answer(answer: &Value, id: u64, expected: Result<&str, u64>) -> Result<(), String> {
    if answer["id"].as_u64() != Some(id) {
        return Err(format!("answer to {id} has the wrong id: {}", short(&answer.to_string())));
    }
    let Some(result) = answer.get("result") else {
        return Err(format!("answer to {id} is not a result: {}", short(&answer.to_string())));
    };
    if result.get("isError").is_some_and(|e| e != &Value::Bool(false)) {
        return Err(format!("answer to {id} is an isError result: {}", short(&answer.to_string())));
    }
    let ok = match expected {
        Ok(text) => result["content"][0]["text"].as_str() == Some(text),
        Err(number) => {
            result["structuredContent"]["result"].as_u64() == Some(number)
                || result["content"][0]["text"].as_str() == Some(number.to_string().as_str())
        }
    };
    if !ok {
        return Err(format!("answer to {id} has the wrong content: {}", short(&answer.to_string())));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// stdio: one connection, the workers' requests pipelined on it.

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

struct StdioClient {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Pending,
    run: Arc<Run>,
}

impl StdioClient {
    fn send(&self, message: &str) {
        let mut line = Vec::with_capacity(message.len() + 1);
        line.extend_from_slice(message.as_bytes());
        line.push(b'\n');
        if self.out.send(line).is_err() {
            self.run.error("the server's stdin is closed");
        }
    }

    /// Sends a request and waits for its answer (an error is counted when none comes).
    async fn request(&self, id: u64, message: &str) -> Option<Value> {
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        self.send(message);
        match tokio::time::timeout(TIMEOUT, rx).await {
            Ok(Ok(answer)) => Some(answer),
            Ok(Err(_)) => {
                self.run.error(format!("request {id}: the server's output ended before its answer"));
                None
            }
            Err(_) => {
                self.pending.lock().unwrap().remove(&id);
                self.run.error(format!("request {id}: no answer within {TIMEOUT:?}"));
                None
            }
        }
    }
}

async fn stdio_worker(client: Arc<StdioClient>, worker: usize, echo_only: bool) -> Vec<u32> {
    let run = client.run.clone();
    let mut rng = Rng(0x50a6 ^ (worker as u64) << 32);
    let mut latencies = Vec::with_capacity((run.calls / 60) as usize);
    while run.take() {
        let roll = if echo_only { 0 } else { rng.below(100) };
        let id = run.id();
        let kind = if roll < 94 {
            let text = echo_text(worker, id);
            let started = Instant::now();
            let answer = client.request(id, &call_body(id, "echo", json!({"text": text}))).await;
            latencies.push(started.elapsed().as_micros() as u32);
            if let Some(answer) = answer
                && let Err(e) = check_answer(&answer, id, Ok(&text))
            {
                run.error(format!("stdio echo: {e}"));
            }
            Kind::Echo
        } else if roll < 99 {
            // No answer may come: nothing waits for one (an answer would be reported as
            // unexpected by the reader).
            client.send(&call_body(id, "hold", json!({"ms": 5000})));
            tokio::time::sleep(cancel_delay()).await;
            client.send(&cancel_body(id));
            Kind::Cancel
        } else {
            let answer = client.request(id, &call_body(id, "hold", json!({"ms": 1}))).await;
            if let Some(answer) = answer
                && let Err(e) = check_answer(&answer, id, Err(1))
            {
                run.error(format!("stdio hold 1 ms: {e}"));
            }
            Kind::HoldShort
        };
        run.finish(kind);
    }
    latencies
}

async fn soak_stdio(calls: u64, clients: usize, echo_only: bool) -> std::io::Result<Report> {
    let Spawned { child, stdin, stdout, stderr } = spawn_server("serve-stdio")?;
    let run = Run::new(child.id(), calls);
    let pending: Pending = Arc::default();

    // One writer (flushing once per burst) and one reader routing answers by id.
    let (out, mut queue) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        let mut writer = tokio::io::BufWriter::with_capacity(64 * 1024, stdin);
        while let Some(line) = queue.recv().await {
            writer.write_all(&line).await?;
            while let Ok(line) = queue.try_recv() {
                writer.write_all(&line).await?;
            }
            writer.flush().await?;
        }
        writer.shutdown().await
    });
    let reader = {
        let (run, pending) = (run.clone(), pending.clone());
        tokio::spawn(async move {
            let mut lines = BufReader::with_capacity(64 * 1024, stdout).lines();
            loop {
                let line = match lines.next_line().await {
                    Ok(Some(line)) => line,
                    Ok(None) => break,
                    Err(e) => {
                        run.error(format!("reading the server's stdout: {e}"));
                        break;
                    }
                };
                let message: Value = match serde_json::from_str(&line) {
                    Ok(message) => message,
                    Err(e) => {
                        run.error(format!("not JSON from the server ({e}): {}", short(&line)));
                        continue;
                    }
                };
                let waiter = message["id"].as_u64().and_then(|id| pending.lock().unwrap().remove(&id));
                match waiter {
                    Some(waiter) => {
                        let _ = waiter.send(message);
                    }
                    None => run.error(format!("a message nobody waits for: {}", short(&line))),
                }
            }
            // Whoever still waits gets an error (their sender is dropped).
            pending.lock().unwrap().clear();
        })
    };

    let client = Arc::new(StdioClient { out, pending, run: run.clone() });
    let init = client.request(0, &initialize_body(0)).await;
    match init {
        Some(answer) if answer["result"]["protocolVersion"] == "2025-11-25" => {}
        other => run.error(format!("stdio initialize: {other:?}")),
    }
    client.send(INITIALIZED);
    // Let the server settle after initialize before the first sample.
    tokio::time::sleep(Duration::from_millis(200)).await;
    run.start();
    let sampler = sample_every_2s(run.clone(), "stdio");

    let workers: Vec<_> =
        (0..clients).map(|w| tokio::spawn(stdio_worker(client.clone(), w, echo_only))).collect();
    let mut latencies = Vec::with_capacity(calls as usize);
    for worker in workers {
        latencies.extend(worker.await.expect("a worker panicked"));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let settled = run.point("settled (end + 2 s)");
    sampler.abort();

    // End of input: the server finishes and exits.
    drop(client);
    match writer.await.expect("the writer panicked") {
        Ok(()) => {}
        Err(e) => run.error(format!("writing to the server: {e}")),
    }
    let _ = tokio::time::timeout(TIMEOUT, reader).await;
    let server_exit = wait_for_exit(child, &run).await;
    let server_stats = stderr.await.ok().flatten();
    latencies.sort_unstable();
    Ok(Report { transport: "stdio", run, clients, latencies, settled, server_stats, server_exit })
}

// ---------------------------------------------------------------------------------------------
// HTTP: a tiny HTTP/1.1 client (keep-alive, Content-Length or chunked bodies).

struct HttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl HttpResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn describe(&self) -> String {
        format!("{} {}", self.status, short(&String::from_utf8_lossy(&self.body)))
    }

    /// The JSON body of a `200 application/json` answer.
    fn json(&self) -> Result<Value, String> {
        if self.status != 200 {
            return Err(format!("status {}", self.describe()));
        }
        if !self.header("content-type").is_some_and(|t| t.starts_with("application/json")) {
            return Err(format!("content-type {:?}: {}", self.header("content-type"), self.describe()));
        }
        serde_json::from_slice(&self.body).map_err(|e| format!("body not JSON ({e}): {}", self.describe()))
    }
}

fn invalid(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what)
}

struct HttpConn {
    io: BufReader<TcpStream>,
    last_used: Instant,
}

impl HttpConn {
    async fn connect(addr: SocketAddr) -> std::io::Result<HttpConn> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(HttpConn { io: BufReader::with_capacity(16 * 1024, stream), last_used: Instant::now() })
    }

    async fn send(&mut self, request: &[u8]) -> std::io::Result<()> {
        self.last_used = Instant::now();
        self.io.get_mut().write_all(request).await
    }

    async fn receive(&mut self) -> std::io::Result<HttpResponse> {
        let response = tokio::time::timeout(TIMEOUT, self.read_response())
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no response within 30 s"))?;
        self.last_used = Instant::now();
        response
    }

    async fn exchange(&mut self, request: &[u8]) -> std::io::Result<HttpResponse> {
        self.send(request).await?;
        self.receive().await
    }

    async fn read_response(&mut self) -> std::io::Result<HttpResponse> {
        let mut line = String::new();
        if self.io.read_line(&mut line).await? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| invalid(format!("not a status line: {line:?}")))?;
        let mut headers = Vec::new();
        loop {
            line.clear();
            if self.io.read_line(&mut line).await? == 0 {
                return Err(invalid("the connection ended in the headers".into()));
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) =
                header.split_once(':').ok_or_else(|| invalid(format!("not a header: {header:?}")))?;
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
        let find = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        let body = if let Some(length) = find("content-length") {
            let length: usize = length.parse().map_err(|_| invalid(format!("content-length {length:?}")))?;
            let mut body = vec![0; length];
            self.io.read_exact(&mut body).await?;
            body
        } else if find("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            self.read_chunked().await?
        } else if status == 204 || status == 304 || status < 200 {
            Vec::new()
        } else {
            let mut body = Vec::new();
            self.io.read_to_end(&mut body).await?;
            body
        };
        Ok(HttpResponse { status, headers, body })
    }

    async fn read_chunked(&mut self) -> std::io::Result<Vec<u8>> {
        let mut body = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            self.io.read_line(&mut line).await?;
            let size = line.trim().split(';').next().unwrap_or_default();
            let size =
                usize::from_str_radix(size, 16).map_err(|_| invalid(format!("chunk size {line:?}")))?;
            if size == 0 {
                // Trailers, up to the empty line.
                loop {
                    line.clear();
                    if self.io.read_line(&mut line).await? == 0 || line.trim().is_empty() {
                        return Ok(body);
                    }
                }
            }
            let start = body.len();
            body.resize(start + size, 0);
            self.io.read_exact(&mut body[start..]).await?;
            line.clear();
            self.io.read_line(&mut line).await?;
        }
    }
}

struct HttpTarget {
    addr: SocketAddr,
    host: String,
}

impl HttpTarget {
    fn post(&self, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        for (name, value) in headers {
            let _ = write!(request, "{name}: {value}\r\n");
        }
        request.push_str("\r\n");
        request.push_str(body);
        request.into_bytes()
    }

    fn delete(&self, session: &str) -> Vec<u8> {
        format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n",
            self.host
        )
        .into_bytes()
    }
}

struct HttpWorker {
    worker: usize,
    target: Arc<HttpTarget>,
    run: Arc<Run>,
    main: Option<HttpConn>,
    /// The second connection the cancelled `hold` calls are sent on.
    side: Option<HttpConn>,
    session: String,
}

impl HttpWorker {
    async fn main_conn(&mut self) -> std::io::Result<&mut HttpConn> {
        if self.main.is_none() {
            self.main = Some(HttpConn::connect(self.target.addr).await?);
        }
        Ok(self.main.as_mut().expect("just connected"))
    }

    /// Sends a request on the main connection; an I/O failure is a protocol error (and the
    /// connection is replaced).
    async fn exchange(&mut self, what: &str, request: &[u8]) -> Option<HttpResponse> {
        let result = match self.main_conn().await {
            Ok(conn) => conn.exchange(request).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(response) => {
                if response.header("connection").is_some_and(|c| c.eq_ignore_ascii_case("close")) {
                    self.main = None;
                }
                Some(response)
            }
            Err(e) => {
                self.main = None;
                self.run.error(format!("http {what}: {e}"));
                None
            }
        }
    }

    fn in_session(&self) -> [(&str, &str); 2] {
        [("Mcp-Session-Id", self.session.as_str()), ("MCP-Protocol-Version", "2025-11-25")]
    }

    async fn open_session(&mut self) -> bool {
        let id = self.run.id();
        let request = self.target.post(&[], &initialize_body(id));
        let Some(response) = self.exchange("initialize", &request).await else { return false };
        let session = response.header("mcp-session-id").map(str::to_owned);
        match (response.json(), session) {
            (Ok(answer), Some(session)) if answer["result"]["protocolVersion"] == "2025-11-25" => {
                self.session = session;
            }
            (answer, _) => {
                self.run.error(format!("http initialize: {answer:?}, {}", response.describe()));
                return false;
            }
        }
        let request = self.target.post(&self.in_session(), INITIALIZED);
        let Some(response) = self.exchange("initialized", &request).await else { return false };
        if response.status != 202 {
            self.run.error(format!("http notifications/initialized: {}", response.describe()));
            return false;
        }
        true
    }

    async fn echo(&mut self, latencies: &mut Vec<u32>) {
        let id = self.run.id();
        let text = echo_text(self.worker, id);
        let request = self.target.post(&self.in_session(), &call_body(id, "echo", json!({"text": text})));
        let started = Instant::now();
        let response = self.exchange("echo", &request).await;
        latencies.push(started.elapsed().as_micros() as u32);
        let Some(response) = response else { return };
        if let Err(e) = response.json().and_then(|answer| check_answer(&answer, id, Ok(&text))) {
            self.run.error(format!("http echo: {e}"));
        }
    }

    async fn stateless(&mut self) {
        let id = self.run.id();
        let text = echo_text(self.worker, id);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": text},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}});
        let headers =
            [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "echo")];
        let request = self.target.post(&headers, &body.to_string());
        let Some(response) = self.exchange("stateless echo", &request).await else { return };
        if response.header("mcp-session-id").is_some() {
            self.run.error(format!("http stateless echo: a session was issued: {}", response.describe()));
        }
        if let Err(e) = response.json().and_then(|answer| check_answer(&answer, id, Ok(&text))) {
            self.run.error(format!("http stateless echo: {e}"));
        }
    }

    /// A `hold` on the second connection, cancelled from the main one: its POST ends with 202
    /// and no body (or, when the cancellation overtook the call, with its answer after 5 s).
    async fn cancel(&mut self) -> Kind {
        let id = self.run.id();
        let hold = self.target.post(&self.in_session(), &call_body(id, "hold", json!({"ms": 5000})));
        // The server closes a connection idle for 10 s: reopen it before that.
        if self.side.as_ref().is_some_and(|c| c.last_used.elapsed() > Duration::from_secs(5)) {
            self.side = None;
        }
        if self.side.is_none() {
            match HttpConn::connect(self.target.addr).await {
                Ok(conn) => self.side = Some(conn),
                Err(e) => {
                    self.run.error(format!("http connect: {e}"));
                    return Kind::Cancel;
                }
            }
        }
        let side = self.side.as_mut().expect("connected");
        if let Err(e) = side.send(&hold).await {
            self.side = None;
            self.run.error(format!("http hold (to cancel): {e}"));
            return Kind::Cancel;
        }
        tokio::time::sleep(cancel_delay()).await;
        let request = self.target.post(&self.in_session(), &cancel_body(id));
        if let Some(response) = self.exchange("cancel", &request).await
            && (response.status != 202 || !response.body.is_empty())
        {
            self.run.error(format!("http notifications/cancelled: {}", response.describe()));
        }
        // The two connections are not ordered: the cancellation may reach the server before the
        // call, and then it is ignored (an unknown id). The cancelled call is answered at once
        // (202), so no answer after 500 ms means that happened: the cancellation is sent again.
        let side = self.side.as_mut().expect("connected");
        let mut kind = Kind::Cancel;
        if tokio::time::timeout(Duration::from_millis(500), side.io.fill_buf()).await.is_err() {
            kind = Kind::CancelResent;
            if let Some(response) = self.exchange("cancel (again)", &request).await
                && (response.status != 202 || !response.body.is_empty())
            {
                self.run.error(format!("http notifications/cancelled (again): {}", response.describe()));
            }
        }
        let side = self.side.as_mut().expect("connected");
        match side.receive().await {
            Ok(response) if response.status == 202 && response.body.is_empty() => kind,
            Ok(response) => {
                self.run.error(format!("http cancelled hold: expected 202, got {}", response.describe()));
                kind
            }
            Err(e) => {
                self.side = None;
                self.run.error(format!("http cancelled hold: {e}"));
                kind
            }
        }
    }

    /// A `hold` on a fresh connection, dropped 1 ms later without reading.
    async fn disconnect(&mut self) {
        let id = self.run.id();
        let hold = self.target.post(&self.in_session(), &call_body(id, "hold", json!({"ms": 5000})));
        match HttpConn::connect(self.target.addr).await {
            Ok(mut conn) => {
                if let Err(e) = conn.send(&hold).await {
                    self.run.error(format!("http hold (to disconnect): {e}"));
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
                drop(conn);
            }
            Err(e) => self.run.error(format!("http connect: {e}")),
        }
    }

    async fn churn(&mut self) {
        let request = self.target.delete(&self.session);
        if let Some(response) = self.exchange("DELETE", &request).await
            && response.status != 200
        {
            self.run.error(format!("http DELETE: {}", response.describe()));
        }
        self.open_session().await;
    }
}

async fn http_worker(
    mut worker: HttpWorker,
    ready: Arc<Barrier>,
    go: Arc<Barrier>,
    echo_only: bool,
) -> Vec<u32> {
    let run = worker.run.clone();
    worker.open_session().await;
    ready.wait().await;
    go.wait().await;
    let mut rng = Rng(0x477d ^ (worker.worker as u64) << 32);
    let mut latencies = Vec::with_capacity((run.calls / 60) as usize);
    while run.take() {
        let roll = if echo_only { 0 } else { rng.below(100) };
        let kind = match roll {
            0..92 => {
                worker.echo(&mut latencies).await;
                Kind::Echo
            }
            92 => {
                worker.stateless().await;
                Kind::Stateless
            }
            93..96 => worker.cancel().await,
            96..99 => {
                worker.disconnect().await;
                Kind::Disconnect
            }
            _ => {
                worker.churn().await;
                Kind::Churn
            }
        };
        run.finish(kind);
    }
    let request = worker.target.delete(&worker.session);
    if let Some(response) = worker.exchange("final DELETE", &request).await
        && response.status != 200
    {
        run.error(format!("http final DELETE: {}", response.describe()));
    }
    latencies
}

async fn soak_http(calls: u64, clients: usize, echo_only: bool) -> std::io::Result<Report> {
    let Spawned { child, stdin, stdout, stderr } = spawn_server("serve-http")?;
    let mut stdout = BufReader::new(stdout);
    let mut line = String::new();
    tokio::time::timeout(TIMEOUT, stdout.read_line(&mut line)).await.map_err(std::io::Error::other)??;
    let addr: SocketAddr = line
        .trim()
        .strip_prefix("listening ")
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| invalid(format!("the server said {line:?}, not `listening ADDR`")))?;
    let target = Arc::new(HttpTarget { addr, host: format!("127.0.0.1:{}", addr.port()) });
    let run = Run::new(child.id(), calls);

    let ready = Arc::new(Barrier::new(clients + 1));
    let go = Arc::new(Barrier::new(clients + 1));
    let workers: Vec<_> = (0..clients)
        .map(|w| {
            let worker = HttpWorker {
                worker: w,
                target: target.clone(),
                run: run.clone(),
                main: None,
                side: None,
                session: String::new(),
            };
            tokio::spawn(http_worker(worker, ready.clone(), go.clone(), echo_only))
        })
        .collect();
    ready.wait().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    run.start();
    let sampler = sample_every_2s(run.clone(), "http");
    go.wait().await;
    let mut latencies = Vec::with_capacity(calls as usize);
    for worker in workers {
        latencies.extend(worker.await.expect("a worker panicked"));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let settled = run.point("settled (end + 2 s)");
    sampler.abort();

    // End of stdin: the server shuts down.
    drop(stdin);
    let server_exit = wait_for_exit(child, &run).await;
    let server_stats = stderr.await.ok().flatten();
    latencies.sort_unstable();
    Ok(Report { transport: "HTTP", run, clients, latencies, settled, server_stats, server_exit })
}

// ---------------------------------------------------------------------------------------------
// The report.

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let output = std::process::Command::new(program).args(args).output().ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn machine_facts(args: &[String]) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown".into());
    let commit = command_output("git", &["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = command_output("git", &["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|s| !s.is_empty());
    let mut out = String::new();
    let _ = writeln!(out, "| machine | |\n|---|---|");
    let _ = writeln!(
        out,
        "| cores (`nproc`) | {} |",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let _ = writeln!(out, "| CPU | {cpu} |");
    let _ = writeln!(
        out,
        "| `rustc --version` | {} |",
        command_output("rustc", &["--version"]).unwrap_or_else(|| "unknown".into())
    );
    let _ = writeln!(
        out,
        "| date | {} |",
        command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "| commit | `{commit}`{} |",
        if dirty { " (with uncommitted changes in the working tree)" } else { "" }
    );
    let command = if args.is_empty() {
        "(defaults: `--calls 1000000 --clients 64 --transport both`)".to_owned()
    } else {
        format!("`{}`", args.join(" "))
    };
    let _ = writeln!(out, "| arguments | {command} (release build) |");
    out
}

const NOTES: &str = "## How to read this

* Latency is measured by the driver, per `echo` call, from sending the request to parsing its
  answer. Over stdio it includes waiting behind the other workers' calls on the one pipe; the
  driver and the server share the same cores.
* Server counters (from the server process, printed when it exits): `hold_finished_long` must
  be 0, every 5 s `hold` was cancelled (by `notifications/cancelled` or by the disconnect) and
  none ran to its end. `hold_started` can be lower than cancellations + disconnects: a call
  cancelled (or whose connection closed) before its handler was first polled never starts.
* Over HTTP the cancellation goes on the main connection and the call on a second one, and two
  connections are not ordered: now and then the cancellation reaches the server first and is
  ignored (an unknown request id, as the specification says). The driver notices that the call
  has not ended 500 ms later and sends the cancellation again (counted on its own line; the call
  then ends with 202 and no body as it must). With `--cancel-delay-ms 10` it does not happen.
  Stdio has one ordered stream, so there a cancellation never overtakes its call.
* RSS rises from the start (just after `initialize`) to the end of the warm-up while the
  allocator, the runtime and the connections' buffers reach their working size; the criterion
  is the growth after that. `open fds` over HTTP: the workers' main and second connections, plus
  the disconnected ones the server has not closed yet.";

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(micros: u32) -> String {
    format!("{:.2} ms", f64::from(micros) / 1000.0)
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn section(report: &Report) -> String {
    let run = &report.run;
    let mut out = String::new();
    let title = match report.transport {
        "stdio" => format!(
            "## stdio: one server process, one connection, {} workers pipelining on it",
            report.clients
        ),
        _ => format!(
            "## HTTP: one server process, {} workers, each with its own keep-alive connection and session",
            report.clients
        ),
    };
    let _ = writeln!(out, "{title}\n");
    if report.transport == "stdio" {
        let _ = writeln!(
            out,
            "Stdio has no disconnect: the connection is the process, so this run mixes normal calls and \
             cancellations only.\n"
        );
    }
    let wall = report.wall();
    let done = run.done.load(Ordering::Relaxed);
    let _ = writeln!(out, "| calls | count |\n|---|---|");
    let kinds = [
        Kind::Echo,
        Kind::Stateless,
        Kind::HoldShort,
        Kind::Cancel,
        Kind::CancelResent,
        Kind::Disconnect,
        Kind::Churn,
    ];
    for kind in kinds {
        let n = run.kinds[kind as usize].load(Ordering::Relaxed);
        let hidden = matches!(
            (report.transport, kind),
            ("stdio", Kind::Stateless | Kind::CancelResent | Kind::Disconnect | Kind::Churn)
                | ("HTTP", Kind::HoldShort)
        );
        if !hidden {
            let _ = writeln!(out, "| {} | {} |", kind.describe(), thousands(n));
        }
    }
    let _ = writeln!(out, "| **all** | **{}** |\n", thousands(done));
    let lat = &report.latencies;
    let _ = writeln!(out, "| measure | value |\n|---|---|");
    let _ = writeln!(out, "| wall time | {wall:.1} s |");
    let _ = writeln!(out, "| throughput | {} calls/s |", thousands((done as f64 / wall) as u64));
    let _ = writeln!(out, "| `echo` latency p50 | {} |", ms(percentile(lat, 0.50)));
    let _ = writeln!(out, "| `echo` latency p99 | {} |", ms(percentile(lat, 0.99)));
    let _ = writeln!(out, "| `echo` latency max | {} |", ms(lat.last().copied().unwrap_or(0)));
    let _ = writeln!(out, "| protocol errors | **{}** (must be 0) |", run.errors.load(Ordering::Relaxed));
    let growth = report.growth();
    let _ = writeln!(
        out,
        "| server RSS growth, warm-up → end | **{}** (must be ≤ 10%) |",
        growth.map_or("n/a".into(), |g| format!("{g:+.1}%"))
    );
    let hwm = run.checkpoint_mem("end").map_or(0, |m| m.hwm_kib).max(report.settled.mem.hwm_kib);
    let _ = writeln!(out, "| server VmHWM (peak RSS) | {} MiB |", mib(hwm));
    let _ = writeln!(out, "| server exit | {} |", report.server_exit);
    if let Some(stats) = &report.server_stats {
        let _ = writeln!(out, "| server counters | `{}` |", stats.trim_start_matches(STATS_PREFIX).trim());
    }
    let _ = writeln!(out, "| verdict | **{}** |\n", if report.passed() { "PASS" } else { "FAIL" });

    let _ = writeln!(out, "Server memory at the checkpoints:\n");
    let _ = writeln!(out, "| point | t (s) | calls done | VmRSS (MiB) | VmHWM (MiB) | threads | open fds |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    let checkpoints = run.checkpoints.lock().unwrap();
    for p in checkpoints.iter().chain(std::iter::once(&report.settled)) {
        let _ = writeln!(
            out,
            "| {} | {:.1} | {} | {} | {} | {} | {} |",
            p.label,
            p.t,
            thousands(p.done),
            mib(p.mem.rss_kib),
            mib(p.mem.hwm_kib),
            p.mem.threads,
            p.mem.fds
        );
    }
    let _ = writeln!(out, "\nServer RSS every ~2 s:\n");
    let _ = writeln!(out, "| t (s) | calls done | VmRSS (MiB) | open fds |\n|---|---|---|---|");
    for p in run.timeline.lock().unwrap().iter() {
        let _ =
            writeln!(out, "| {:.1} | {} | {} | {} |", p.t, thousands(p.done), mib(p.mem.rss_kib), p.mem.fds);
    }
    let samples = run.error_samples.lock().unwrap();
    if !samples.is_empty() {
        let _ = writeln!(out, "\nFirst protocol errors:\n");
        for s in samples.iter() {
            let _ = writeln!(out, "* `{}`", s.replace('`', "'"));
        }
    }
    out
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve-stdio") => return serve_stdio(),
        Some("serve-http") => return serve_http(),
        _ => {}
    }
    let (mut calls, mut clients, mut transport, mut echo_only) =
        (1_000_000u64, 64usize, "both".to_owned(), false);
    const USAGE: &str = "usage: bench_soak [--calls N (1000000)] [--clients N (64)] [--transport stdio|http|both] [--echo-only] [--cancel-delay-ms N (1)]\n       bench_soak serve-stdio | serve-http";
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "Soak benchmark: a million calls over stdio and HTTP (see bench/soak.md, scripts/soak.sh).\n{USAGE}"
        );
        return ExitCode::SUCCESS;
    }
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().cloned().unwrap_or_else(|| panic!("a value after {arg}"));
        match arg.as_str() {
            "--calls" => calls = value().replace('_', "").parse().expect("--calls N"),
            "--clients" => clients = value().parse().expect("--clients N"),
            "--transport" => transport = value(),
            "--echo-only" => echo_only = true,
            "--cancel-delay-ms" => {
                CANCEL_DELAY_MS.store(value().parse().expect("--cancel-delay-ms N"), Ordering::Relaxed)
            }
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let transports: &[&str] = match transport.as_str() {
        "stdio" => &["stdio"],
        "http" => &["http"],
        "both" => &["stdio", "http"],
        other => panic!("--transport stdio|http|both, not {other}"),
    };

    let runtime = runtime();
    let mut reports = Vec::new();
    for t in transports {
        eprintln!("{t}: {calls} calls, {clients} clients{}", if echo_only { ", echo only" } else { "" });
        let report = runtime.block_on(async {
            match *t {
                "stdio" => soak_stdio(calls, clients, echo_only).await,
                _ => soak_http(calls, clients, echo_only).await,
            }
        });
        match report {
            Ok(report) => reports.push(report),
            Err(e) => {
                eprintln!("{t}: the run failed: {e}");
                return ExitCode::FAILURE;
            }
        }
    }

    println!("# Soak: a million calls with cancellations and disconnects\n");
    println!(
        "Reproduce: `scripts/soak.sh` (or `cargo run --release --example bench_soak -- --calls N --transport \
         stdio|http|both`). Pass criteria: 0 protocol errors, and the server's RSS grows by at most 10% from \
         the end of the warm-up (the first 10% of the calls) to the end.{}\n",
        if echo_only { " **This run made `echo` calls only (baseline).**" } else { "" }
    );
    println!("{}", machine_facts(&args));
    println!(
        "| transport | calls | calls/s | `echo` p99 | RSS start / warm-up / middle / end (MiB) | growth | errors | verdict |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in &reports {
        let rss = ["start", "after warm-up", "middle", "end"]
            .map(|p| r.run.checkpoint_mem(p).map_or("?".into(), |m| mib(m.rss_kib)))
            .join(" / ");
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.transport,
            thousands(r.run.done.load(Ordering::Relaxed)),
            thousands((r.run.done.load(Ordering::Relaxed) as f64 / r.wall()) as u64),
            ms(percentile(&r.latencies, 0.99)),
            rss,
            r.growth().map_or("n/a".into(), |g| format!("{g:+.1}%")),
            r.errors(),
            if r.passed() { "PASS" } else { "FAIL" }
        );
    }
    println!();
    for r in &reports {
        println!("{}", section(r));
    }
    println!("{NOTES}");
    if reports.iter().all(Report::passed) { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
