//! `mcp-bench`: the load driver of the performance suite. It speaks plain JSON-RPC (newline-framed
//! over a child's stdin/stdout pipes, and HTTP/1.1 over one keep-alive TCP connection per client,
//! written here so that no client library's cost hides the servers' differences) to every server
//! of the comparison, and prints one table of medians of three runs, with each figure's ratio to
//! the hand-written floor. Every section runs round by round (the JSON keeps every round's
//! figure, so that `scripts/perf-rounds.py` can take the targets' ratios within each round).
//! Within a round, the servers compared are all started, then measured slice by slice, each in
//! turn (forwards, then backwards), so that a slow moment of the machine, which lasts a second
//! or two on these VMs, falls on all of them alike rather than on whichever ran then.
//! `scripts/bench-perf.sh` builds the servers and runs it.
//!
//! ```text
//! mcp-bench [--quick] [--out PREFIX] [--skip-rmcp] [--only stdio|http|catalog] [--pin] [--wrap CMD] [--ts-server FILE.mjs]
//! mcp-bench --middleware --baseline BENCH_SERVER [--current BENCH_SERVER] [--decompose] [--only stdio|http] [--wrap CMD] [--quick] [--runs N] [--out PREFIX] [--pin]
//! mcp-bench --gateway [--only stdio|http|latency|memory] [--wrap CMD] [--quick] [--runs N] [--out PREFIX] [--pin]
//! ```
//!
//! writes PREFIX.table.md and PREFIX.json (default `bench/perf`); the script puts the table in
//! bench/perf.md. With `--middleware`, what the call pipeline and telemetry cost instead
//! (`middleware.rs`, `scripts/bench-middleware.sh`, bench/middleware.md); with `--gateway`, what
//! a call through the composing gateway costs, and its memory (`gateway.rs`,
//! `scripts/bench-gateway.sh`, bench/gateway.md).

mod compare;
mod gateway;
mod http;
mod middleware;
mod otlp_sink;
mod report;
mod stdio;

use std::path::PathBuf;
use std::time::Duration;

use report::{Figure, Report};

/// A server of the comparison: how to start it over stdio and over HTTP.
struct Subject {
    name: &'static str,
    binary: PathBuf,
    stdio_args: Vec<String>,
    /// Arguments before the address for HTTP (`None`: no HTTP transport in this row).
    http_args: Option<Vec<String>>,
}

/// How many calls each measurement makes.
#[derive(Clone, Copy)]
struct Sizes {
    warmup: usize,
    sequential: usize,
    pipelined: usize,
    http_sequential: usize,
    http_per_client: usize,
    list_rounds: usize,
    runs: usize,
    /// How many slices each round's measurements are cut into (servers take turns by slice).
    slices: usize,
}

const FULL: Sizes = Sizes {
    warmup: 2_000,
    sequential: 20_000,
    pipelined: 100_000,
    http_sequential: 10_000,
    http_per_client: 4_000,
    list_rounds: 200,
    runs: 3,
    slices: 5,
};
const QUICK: Sizes = Sizes {
    warmup: 300,
    sequential: 2_000,
    pipelined: 10_000,
    http_sequential: 1_000,
    http_per_client: 400,
    list_rounds: 20,
    runs: 1,
    slices: 2,
};

/// The era of the requests a measurement sends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Era {
    /// 2025-11-25: `initialize` first, then plain requests (a session id over HTTP).
    Handshake,
    /// 2026-07-28: no handshake; every request carries the `_meta` envelope.
    Stateless,
    /// 2025-11-25, but every request carries the bytes of the 2026-07-28 envelope too (a
    /// session ignores `_meta` keys it does not know): requests exactly as long as the
    /// stateless ones, so that the envelope's handling shows apart from the longer message.
    HandshakeSameBytes,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut sizes = FULL;
    let mut out = PathBuf::from("bench/perf");
    let mut skip_rmcp = false;
    let mut only: Option<String> = None;
    let mut ts_server: Option<PathBuf> = None;
    let mut baseline: Option<PathBuf> = None;
    let mut current: Option<PathBuf> = None;
    let mut decompose = false;
    let mut wants_middleware = false;
    let mut wants_gateway = false;
    let mut runs: Option<usize> = None;
    let mut out_given = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => sizes = QUICK,
            "--out" => {
                out = PathBuf::from(args.next().expect("--out needs a path prefix"));
                out_given = true;
            }
            "--middleware" => wants_middleware = true,
            "--gateway" => wants_gateway = true,
            "--decompose" => decompose = true,
            "--baseline" => {
                baseline = Some(PathBuf::from(args.next().expect("--baseline needs a bench_server binary")))
            }
            "--current" => {
                current = Some(PathBuf::from(args.next().expect("--current needs a bench_server binary")))
            }
            "--runs" => runs = Some(args.next().and_then(|n| n.parse().ok()).expect("--runs needs a number")),
            "--skip-rmcp" => skip_rmcp = true,
            "--pin" => PIN.store(true, std::sync::atomic::Ordering::Relaxed),
            "--poll" => POLL.store(true, std::sync::atomic::Ordering::Relaxed),
            "--wrap" => {
                let wrap = args.next().expect("--wrap needs a command");
                WRAP.set(wrap.split_whitespace().map(str::to_owned).collect()).expect("one --wrap");
            }
            "--ts-server" => {
                ts_server = Some(PathBuf::from(args.next().expect("--ts-server needs a .mjs file")))
            }
            "--only" => only = Some(args.next().expect("--only needs stdio, http or catalog")),
            "-h" | "--help" => {
                println!(
                    "usage: mcp-bench [--quick] [--runs N] [--out PREFIX] [--skip-rmcp] [--only stdio|http|catalog] [--pin] [--wrap CMD] [--ts-server FILE.mjs]   (see scripts/bench-perf.sh)\n       mcp-bench --middleware --baseline BENCH_SERVER [--current BENCH_SERVER] [--decompose] [--only stdio|http] [--wrap CMD] [--quick] [--runs N] [--out PREFIX] [--pin] [--poll]   (see scripts/bench-middleware.sh)\n       mcp-bench --gateway [--only stdio|http|latency|memory] [--wrap CMD] [--quick] [--runs N] [--out PREFIX] [--pin]   (see scripts/bench-gateway.sh)"
                );
                return;
            }
            other => {
                eprintln!("mcp-bench: unknown argument {other} (see --help)");
                std::process::exit(2);
            }
        }
    }
    if let Some(runs) = runs {
        sizes.runs = runs;
    }
    let dir = std::env::current_exe().expect("own path").parent().expect("a folder").to_path_buf();
    let examples = dir.join("examples");
    if wants_gateway {
        let out = if out_given { out } else { PathBuf::from("bench/gateway") };
        gateway::run(sizes, &out, &examples, only.as_deref());
        return;
    }
    if wants_middleware {
        let need = |path: PathBuf| {
            assert!(
                path.exists(),
                "{} is missing: run scripts/bench-middleware.sh, which builds it",
                path.display()
            );
            path
        };
        let baseline = need(baseline.expect("--middleware needs --baseline BENCH_SERVER"));
        let out = if out_given { out } else { PathBuf::from("bench/middleware") };
        let current = need(current.unwrap_or_else(|| examples.join("bench_server")));
        middleware::run(sizes, &out, &baseline, &current, decompose, only.as_deref());
        return;
    }
    let need = |path: PathBuf| {
        assert!(path.exists(), "{} is missing: run scripts/bench-perf.sh, which builds it", path.display());
        path
    };
    let floor =
        Subject { name: "floor", binary: need(dir.join("floor-stdio")), stdio_args: vec![], http_args: None };
    let ours = Subject {
        name: "mcp-tools",
        binary: need(examples.join("bench_server")),
        stdio_args: vec![],
        http_args: Some(vec!["--http".into()]),
    };
    let mut subjects = vec![floor, ours];
    if !skip_rmcp {
        let rmcp = need(dir.join("rmcp-bench"));
        subjects.push(Subject {
            name: "rmcp",
            binary: rmcp.clone(),
            stdio_args: vec![],
            http_args: Some(vec!["--http".into()]),
        });
        subjects.push(Subject {
            name: "rmcp stdio_pipes()",
            binary: rmcp,
            stdio_args: vec!["--pipes".into()],
            http_args: None,
        });
    }
    if let Some(script) = ts_server {
        // Run by `node` from the PATH (scripts/bench-perf.sh installs its packages).
        subjects.push(Subject {
            name: "TypeScript SDK",
            binary: PathBuf::from("node"),
            stdio_args: vec![need(script).display().to_string()],
            http_args: None,
        });
    }
    let floor_http = need(dir.join("floor-http"));
    let large = need(examples.join("bench_large"));

    let mut report = Report::new(sizes.runs);
    eprintln!("mcp-bench: {} run(s) of each measurement", sizes.runs);

    let run = |section: &str| only.as_deref().is_none_or(|o| o == section);

    // stdio: sequential latency and pipelined throughput, both eras for ours.
    // A round starts every server, then measures them slice by slice, each in turn (see above).
    let mut stdio_subjects = Vec::new();
    for subject in &subjects {
        let eras: &[Era] = match subject.name {
            "mcp-tools" => &[Era::Handshake, Era::Stateless, Era::HandshakeSameBytes],
            "floor" => &[Era::Handshake, Era::Stateless],
            _ => &[Era::Handshake],
        };
        for &era in eras {
            stdio_subjects.push((column_name(subject.name, era), subject, era));
        }
    }
    for run_index in 0..sizes.runs {
        if !run("stdio") {
            break;
        }
        let mut servers: Vec<_> = stdio_subjects
            .iter()
            .map(|(column, subject, era)| {
                let mut server = stdio::Server::start(&subject.binary, &subject.stdio_args, *era);
                server.sequential(sizes.warmup, 0);
                (column, server, Samples::default(), Burst::default())
            })
            .collect();
        for slice in 0..sizes.slices {
            for i in turns(servers.len(), slice) {
                let (_, server, sequential, pipelined) = &mut servers[i];
                sequential
                    .add(server.sequential(sizes.warmup / sizes.slices, sizes.sequential / sizes.slices));
                pipelined.add(server.pipelined(sizes.pipelined / sizes.slices, 32));
            }
        }
        for (column, server, sequential, pipelined) in servers {
            let seq = sequential.latency();
            report.add("stdio sequential p50", column, Figure::Micros(seq.p50));
            report.add("stdio sequential p99", column, Figure::Micros(seq.p99));
            report.add("stdio sequential calls/s", column, Figure::Rate(seq.rate));
            report.add("stdio 32 in flight calls/s", column, Figure::Rate(pipelined.rate()));
            let (_, peak) = server.finish();
            report.add("RSS after load (peak), MiB", column, Figure::Mib(peak));
        }
        eprintln!("  run {}: stdio", run_index + 1);
    }

    // HTTP: one client sequential, sixteen clients in parallel.
    let mut http_subjects: Vec<(String, PathBuf, Vec<String>, Era)> = [Era::Handshake, Era::Stateless]
        .into_iter()
        .map(|era| (column_name("floor", era), floor_http.clone(), vec![], era))
        .collect();
    for subject in &subjects {
        if let Some(args) = &subject.http_args {
            let eras: &[Era] = if has_both_eras(subject.name) {
                &[Era::Handshake, Era::Stateless]
            } else {
                &[Era::Handshake]
            };
            for &era in eras {
                http_subjects.push((
                    column_name(subject.name, era),
                    subject.binary.clone(),
                    args.clone(),
                    era,
                ));
            }
        }
    }
    for run_index in 0..sizes.runs {
        if !run("http") {
            break;
        }
        let mut servers: Vec<_> = http_subjects
            .iter()
            .map(|(column, binary, args, era)| {
                (column, http::Server::start(binary, args), *era, Samples::default(), Burst::default())
            })
            .collect();
        let warmup = sizes.warmup.min(1_000) / sizes.slices;
        for slice in 0..sizes.slices {
            for i in turns(servers.len(), slice) {
                let (_, server, era, sequential, parallel) = &mut servers[i];
                sequential.add(server.sequential(*era, warmup, sizes.http_sequential / sizes.slices));
                parallel.add(server.parallel(*era, 16, sizes.http_per_client / sizes.slices));
            }
        }
        for (column, _, _, sequential, parallel) in servers {
            let seq = sequential.latency();
            report.add("HTTP 1 client p50", column, Figure::Micros(seq.p50));
            report.add("HTTP 1 client p99", column, Figure::Micros(seq.p99));
            report.add("HTTP 16 clients calls/s", column, Figure::Rate(parallel.rate()));
        }
        eprintln!("  run {}: http", run_index + 1);
    }

    if run("catalog") {
        catalog(&mut report, sizes, &large, &dir, &subjects[1].binary);
    }
    report.write(&out);
}

/// The catalog's size: per-call latency, `tools/list`, start-up and idle memory.
fn catalog(
    report: &mut Report,
    sizes: Sizes,
    large: &std::path::Path,
    dir: &std::path::Path,
    two_tools: &std::path::Path,
) {
    // The same 1,000-tool page, pre-serialised and written by hand by the floor.
    let page = {
        let mut server = stdio::Server::start(large, &["1000".to_string()], Era::Handshake);
        let page = server.tools_list_text();
        server.finish();
        page
    };
    let page_file = std::env::temp_dir().join(format!("mcp-bench-page-{}.json", std::process::id()));
    std::fs::write(&page_file, &page).expect("write the page");
    // Round by round, every server in turn (as the stdio and HTTP sections do), so that a ratio
    // can be taken within a round (scripts/perf-rounds.py).
    for run_index in 0..sizes.runs {
        for tools in [10usize, 1_000, 10_000] {
            let args = vec![tools.to_string()];
            let mut server = stdio::Server::start(large, &args, Era::Handshake);
            report.add(
                &format!("start-up to initialize answer, {tools} tools"),
                "mcp-tools",
                Figure::Millis(server.started),
            );
            let seq = server.sequential(sizes.warmup, sizes.sequential / 2).latency();
            report.add(&format!("stdio sequential p50, {tools} tools"), "mcp-tools", Figure::Micros(seq.p50));
            let list = if tools == 1_000 {
                // Against the floor writing the same page, slice by slice in turn.
                let mut floor = stdio::Server::start(
                    &dir.join("floor-stdio"),
                    &[page_file.display().to_string()],
                    Era::Handshake,
                );
                let (mut ours, mut floors) = (Samples::default(), Samples::default());
                for slice in 0..sizes.slices {
                    for i in turns(2, slice) {
                        let (who, samples) =
                            if i == 0 { (&mut server, &mut ours) } else { (&mut floor, &mut floors) };
                        samples.add(who.list_tools(sizes.list_rounds / sizes.slices));
                    }
                }
                floor.finish();
                report.add("tools/list p50, 1000 tools", "floor", Figure::Micros(floors.latency().p50));
                ours
            } else {
                server.list_tools(sizes.list_rounds)
            };
            report.add(
                &format!("tools/list p50, {tools} tools"),
                "mcp-tools",
                Figure::Micros(list.latency().p50),
            );
            let (idle, _) = server.finish();
            report.add(&format!("idle RSS, {tools} tools, MiB"), "mcp-tools", Figure::Mib(idle));
        }
        // Idle memory of the two-tool server (after the handshake and a few calls).
        let mut server = stdio::Server::start(two_tools, &[], Era::Handshake);
        report.add("start-up to initialize answer, 2 tools", "mcp-tools", Figure::Millis(server.started));
        server.sequential(10, 100);
        let (idle, _) = server.finish();
        report.add("idle RSS, 2 tools, MiB", "mcp-tools", Figure::Mib(idle));
        eprintln!("  run {}: catalog of 10, 1,000 and 10,000 tools", run_index + 1);
    }
    let _ = std::fs::remove_file(&page_file);
}

/// The servers also sent 2026-07-28 requests: ours, and the floor (which reads the same longer
/// messages, so that the envelope's cost to any JSON server shows apart from ours).
fn has_both_eras(name: &str) -> bool {
    name == "mcp-tools" || name == "floor"
}

fn column_name(name: &str, era: Era) -> String {
    match era {
        Era::Handshake => name.to_owned(),
        Era::Stateless => format!("{name}{}", report::STATELESS_SUFFIX),
        Era::HandshakeSameBytes => format!("{name}{}", report::SAME_BYTES_SUFFIX),
    }
}

/// Whether servers run on CPU 1 only (`--pin`; the driver is then started on CPU 0 by the
/// script): every request then crosses between the same two cores.
static PIN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the HTTP clients poll their connections (`--poll`): non-blocking, retried with the
/// CPU yielded in between, so that a client thread never sleeps in the kernel and a server's
/// answer never has to wake one up (on this VM, waking a halted vCPU is a large, bistable share
/// of a pinned server's time: bench/middleware.md).
pub static POLL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A command line that starts every server (`--wrap 'valgrind --tool=callgrind'`, to profile).
static WRAP: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// The command that starts `binary` (under `taskset -c 1` with `--pin`, under `--wrap`'s
/// command if given).
pub fn command(binary: &std::path::Path) -> std::process::Command {
    let mut words: Vec<std::ffi::OsString> = Vec::new();
    if PIN.load(std::sync::atomic::Ordering::Relaxed) {
        words.extend(["taskset", "-c", "1"].map(Into::into));
    }
    words.extend(WRAP.get().into_iter().flatten().map(Into::into));
    words.push(binary.into());
    let mut command = std::process::Command::new(&words[0]);
    command.args(&words[1..]);
    command
}

/// The order in which `count` servers take their turn in slice `slice`: forwards, then
/// backwards, so that no server always follows the same one.
fn turns(count: usize, slice: usize) -> Vec<usize> {
    if slice.is_multiple_of(2) { (0..count).collect() } else { (0..count).rev().collect() }
}

/// Each call's latency over one or more slices of a measurement, and the time they took.
#[derive(Default)]
pub struct Samples {
    samples: Vec<Duration>,
    took: Duration,
}

impl Samples {
    pub fn new(samples: Vec<Duration>, took: Duration) -> Samples {
        Samples { samples, took }
    }

    pub fn add(&mut self, more: Samples) {
        self.samples.extend(more.samples);
        self.took += more.took;
    }

    pub fn latency(self) -> Latency {
        Latency::of(self.samples, self.took)
    }
}

/// Calls made with many in flight over one or more slices, and the time they took.
#[derive(Default)]
pub struct Burst {
    calls: usize,
    took: Duration,
}

impl Burst {
    pub fn new(calls: usize, took: Duration) -> Burst {
        Burst { calls, took }
    }

    pub fn add(&mut self, more: Burst) {
        self.calls += more.calls;
        self.took += more.took;
    }

    /// Calls per second.
    pub fn rate(&self) -> f64 {
        self.calls as f64 / self.took.as_secs_f64()
    }
}

/// Latencies of one measurement.
pub struct Latency {
    pub p50: Duration,
    pub p99: Duration,
    /// Calls per second over the whole measurement.
    pub rate: f64,
}

impl Latency {
    pub fn of(mut samples: Vec<Duration>, total: Duration) -> Latency {
        samples.sort_unstable();
        let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
        Latency { p50: at(0.50), p99: at(0.99), rate: samples.len() as f64 / total.as_secs_f64() }
    }
}

/// A `tools/call` request's tool and arguments, and a text its answer must contain (the
/// suite's own requests: [`Call::add`]).
#[derive(Clone, Debug)]
pub struct Call {
    pub name: String,
    /// The `arguments` object, as JSON text.
    pub arguments: String,
    pub expect: String,
}

impl Call {
    /// `add` with 1.5 and 2 (answer 3.5): what the suite sends.
    pub fn add() -> Call {
        Call::add_named("add")
    }

    /// The same call of the tool `name` (a mounted `add`: `b_add`).
    pub fn add_named(name: &str) -> Call {
        Call { name: name.to_owned(), arguments: r#"{"a":1.5,"b":2}"#.to_owned(), expect: "3.5".to_owned() }
    }

    /// The same call made through a deferred server's `call_tool` meta-tool.
    pub fn add_deferred(name: &str) -> Call {
        Call {
            name: "call_tool".to_owned(),
            arguments: format!(r#"{{"name":"{name}","arguments":{{"a":1.5,"b":2}}}}"#),
            expect: "3.5".to_owned(),
        }
    }
}

/// The `tools/call` request `call` with this id, in this era.
pub fn call_request(id: u64, era: Era, call: &Call) -> String {
    let (name, arguments) = (&call.name, &call.arguments);
    match era {
        Era::Handshake => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
        ),
        Era::Stateless | Era::HandshakeSameBytes => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments},"_meta":{STATELESS_META}}}}}"#
        ),
    }
}

/// Panics unless `answer` is the successful result of `call_request(id, _, call)`.
pub fn check_call(answer: &str, id: u64, call: &Call) {
    let ok = answer.contains("\"result\"")
        && !answer.contains("\"isError\":true")
        && answer.contains(&call.expect)
        && answer.contains(&format!("\"id\":{id}"));
    assert!(ok, "unexpected answer to call {id} ({}): {answer}", call.name);
}

/// The per-request envelope of a 2026-07-28 client.
pub const STATELESS_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcp-bench","version":"1"}}"#;
