//! `mcp-bench --gateway`: what a call through the composing gateway (`examples/gateway.rs`,
//! `ServerBuilder::mount`) costs, and the gateway's memory (the "Composition" issue: "a call
//! through the gateway to a stdio upstream, p50 within 2× of calling the upstream directly,
//! measured side by side; gateway memory with twenty upstreams").
//!
//! **Latency.** The suite's two-tool server (`examples/bench_server.rs`) called as the suite
//! calls it (same requests, sizes, rounds and slices: see `main.rs`), in four variants started
//! together each round and measured slice by slice in turn, each sent 2025-11-25 and 2026-07-28
//! requests:
//!
//! * **direct**: `bench_server` over stdio (over HTTP: `bench_server --http`);
//! * **direct, 2nd copy**: the same again, measured alike: the two copies' ratio is the noise
//!   alone (an A/A comparison);
//! * **gateway --no-defer**: `gateway ONE.json --no-defer`, whose only entry `b` is that
//!   `bench_server` over stdio, called by name (`b_add`);
//! * **gateway deferred**: `gateway ONE.json` (deferred, the default), the same call made
//!   through the `call_tool` meta-tool (`{"name": "b_add", "arguments": …}`).
//!
//! Over HTTP the gateway serves its Streamable HTTP front (`--http ADDR`) and still reaches
//! `bench_server` over stdio. Every ratio is taken within a round; the median of the rounds'
//! ratios is the figure.
//!
//! **Memory.** The gateway's own `VmRSS` and `VmHWM` (its upstreams are processes of their own,
//! measured apart) after start-up and after a burst of calls, with 20 upstreams of 50 tools each
//! (`examples/bench_large.rs 50`, prefixes `u01`…`u20`), deferred and `--no-defer`; with one
//! upstream of 50 and one of 1,000 tools; and a plain server serving the same 1,000 tools
//! (`bench_large 1000`; deferred: `examples/catalog.rs` over the same tools' definitions).
//!
//! Writes PREFIX.table.md and PREFIX.json.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::middleware::{Cpu, median};
use crate::{Burst, Call, Era, Samples, Sizes, http, stdio, turns};

const ERAS: [(Era, &str); 2] = [(Era::Handshake, "2025-11-25"), (Era::Stateless, "2026-07-28")];

/// How a variant's calls reach `add`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reach {
    Direct,
    /// Mounted under `b`, called as `b_add`.
    Named,
    /// Mounted under `b`, called through `call_tool`.
    Deferred,
}

/// A server of the latency comparison.
struct Variant {
    name: &'static str,
    binary: PathBuf,
    /// Arguments before `--http ADDR` (or alone, over stdio).
    args: Vec<String>,
    reach: Reach,
}

impl Variant {
    fn call(&self) -> Call {
        match self.reach {
            Reach::Direct => Call::add(),
            Reach::Named => Call::add_named("b_add"),
            Reach::Deferred => Call::add_deferred("b_add"),
        }
    }
}

const DIRECT: usize = 0;
const DIRECT_COPY: usize = 1;
const NAMED: usize = 2;
const DEFERRED: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Micros,
    Millis,
    Rate,
    Mib,
}

/// The latency section's figures, in table order.
const FIGURES: [(&str, Unit); 8] = [
    ("stdio sequential p50", Unit::Micros),
    ("stdio sequential p99", Unit::Micros),
    ("stdio 32 in flight calls/s", Unit::Rate),
    ("RSS after stdio load (peak; the gateway alone)", Unit::Mib),
    ("HTTP 1 client p50", Unit::Micros),
    ("HTTP 1 client p99", Unit::Micros),
    ("HTTP 16 clients calls/s", Unit::Rate),
    ("stdio start-up to first answer", Unit::Millis),
];
const STDIO_P50: usize = 0;
const STDIO_P99: usize = 1;
const HTTP_P50: usize = 4;
const HTTP_P99: usize = 5;

/// The ratios shown, round by round: (label, numerator, denominator).
const RATIOS: [(&str, usize, usize); 3] = [
    ("gateway --no-defer / direct", NAMED, DIRECT),
    ("gateway deferred (`call_tool`) / direct", DEFERRED, DIRECT),
    ("direct, 2nd copy / direct (A/A: noise alone)", DIRECT_COPY, DIRECT),
];

/// The issue's limit on the p50 ratio.
const LIMIT: f64 = 2.0;

/// The memory section's upstreams: 20 of this many tools each.
const UPSTREAMS: usize = 20;
const TOOLS_EACH: usize = 50;

pub fn run(sizes: Sizes, out: &Path, examples: &Path, only: Option<&str>) {
    let need = |name: &str| {
        let path = examples.join(name);
        assert!(
            path.exists(),
            "{} is missing: run scripts/bench-gateway.sh, which builds it",
            path.display()
        );
        path
    };
    let (gateway, bench_server, bench_large, catalog) =
        (need("gateway"), need("bench_server"), need("bench_large"), need("catalog"));
    let dir = std::env::temp_dir().join(format!("mcp-bench-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let config = |file: &str, servers: Value| {
        let path = dir.join(file);
        std::fs::write(&path, serde_json::to_string_pretty(&json!({"mcpServers": servers})).unwrap())
            .expect("write a gateway configuration");
        path.display().to_string()
    };
    let one = config("one.json", json!({"b": {"command": bench_server.display().to_string()}}));

    let variant = |name, binary: &Path, args: &[&str], reach| Variant {
        name,
        binary: binary.to_path_buf(),
        args: args.iter().map(|a| a.to_string()).collect(),
        reach,
    };
    let variants = vec![
        variant("direct", &bench_server, &[], Reach::Direct),
        variant("direct, 2nd copy", &bench_server, &[], Reach::Direct),
        variant("gateway --no-defer", &gateway, &[&one, "--no-defer"], Reach::Named),
        variant("gateway deferred (`call_tool`)", &gateway, &[&one], Reach::Deferred),
    ];
    let began = Instant::now();
    let machine_before = Cpu::now();
    eprintln!("mcp-bench --gateway: {} round(s)", sizes.runs);
    // figures[figure][era][variant]: one value per round.
    let mut figures = vec![vec![vec![Vec::<f64>::new(); variants.len()]; ERAS.len()]; FIGURES.len()];
    let servers_of: Vec<(usize, usize)> =
        (0..ERAS.len()).flat_map(|era| (0..variants.len()).map(move |v| (era, v))).collect();
    let mut processes = Vec::new();

    // stdio: sequential latency and 32 calls in flight; a round starts every server, then
    // measures them slice by slice, each in turn.
    for round in 0..sizes.runs {
        if only.is_some_and(|only| only != "stdio") {
            break;
        }
        let mut servers: Vec<_> = servers_of
            .iter()
            .map(|&(era, v)| {
                let variant = &variants[v];
                let mut server = stdio::Server::start(&variant.binary, &variant.args, ERAS[era].0);
                server.set_call(variant.call());
                server.sequential(sizes.warmup, 0);
                (era, v, server, Samples::default(), Burst::default())
            })
            .collect();
        for slice in 0..sizes.slices {
            for i in turns(servers.len(), slice) {
                let (_, _, server, sequential, pipelined) = &mut servers[i];
                sequential
                    .add(server.sequential(sizes.warmup / sizes.slices, sizes.sequential / sizes.slices));
                pipelined.add(server.pipelined(sizes.pipelined / sizes.slices, 32));
            }
        }
        for (era, v, server, sequential, pipelined) in servers {
            let seq = sequential.latency();
            figures[0][era][v].push(seq.p50.as_secs_f64() * 1e6);
            figures[1][era][v].push(seq.p99.as_secs_f64() * 1e6);
            figures[2][era][v].push(pipelined.rate());
            figures[7][era][v].push(server.started.as_secs_f64() * 1e3);
            processes.push(json!({"round": round + 1, "variant": variants[v].name, "requests": ERAS[era].1,
                "pid": server.pid(), "calls": server.requests() - 1}));
            let (_, peak) = server.finish();
            figures[3][era][v].push(peak as f64 / 1024.0);
        }
        eprintln!("  round {}: stdio ({:.0} s)", round + 1, began.elapsed().as_secs_f64());
    }

    // HTTP: one client sequential, sixteen clients in parallel.
    for round in 0..sizes.runs {
        if only.is_some_and(|only| only != "http") {
            break;
        }
        let mut servers: Vec<_> = servers_of
            .iter()
            .map(|&(era, v)| {
                let variant = &variants[v];
                let mut args = variant.args.clone();
                args.push("--http".into());
                let mut server = http::Server::start(&variant.binary, &args);
                server.set_call(variant.call());
                (era, v, server, Samples::default(), Burst::default())
            })
            .collect();
        let warmup = sizes.warmup.min(1_000) / sizes.slices;
        for slice in 0..sizes.slices {
            for i in turns(servers.len(), slice) {
                let (era, _, server, sequential, parallel) = &mut servers[i];
                let era = ERAS[*era].0;
                sequential.add(server.sequential(era, warmup, sizes.http_sequential / sizes.slices));
                parallel.add(server.parallel(era, 16, sizes.http_per_client / sizes.slices));
            }
        }
        for (era, v, server, sequential, parallel) in servers {
            let seq = sequential.latency();
            figures[4][era][v].push(seq.p50.as_secs_f64() * 1e6);
            figures[5][era][v].push(seq.p99.as_secs_f64() * 1e6);
            figures[6][era][v].push(parallel.rate());
            drop(server);
        }
        eprintln!("  round {}: HTTP ({:.0} s)", round + 1, began.elapsed().as_secs_f64());
    }

    // Memory.
    let mut memory = Vec::new();
    if only.is_none_or(|only| only == "memory") {
        memory = measure_memory(sizes, &dir, &gateway, &bench_large, &catalog, &config);
        eprintln!("  memory ({:.0} s)", began.elapsed().as_secs_f64());
    }
    let _ = std::fs::remove_dir_all(&dir);
    let took = began.elapsed().as_secs_f64();
    let machine = Cpu::now().since(&machine_before);
    write(out, sizes, &variants, &figures, &memory, took, &machine, processes);
}

/// A server of the memory comparison.
struct Resident {
    name: String,
    binary: PathBuf,
    args: Vec<String>,
    /// The tools its `add`s are called as (one per upstream: `u01_add`…; natively `add`), and
    /// the generated tools called once each in the burst.
    adds: Vec<String>,
    generated: Vec<String>,
    deferred: bool,
    /// What the native deferred server's `add` answers (it returns its arguments).
    expect: &'static str,
}

/// One memory measurement (KiB, ms).
#[derive(Clone, Copy, Default)]
struct Footprint {
    started_ms: f64,
    listed: usize,
    rss_started: u64,
    hwm_started: u64,
    rss_burst: u64,
    hwm_burst: u64,
    upstreams: usize,
    upstreams_rss: u64,
    calls: u64,
}

const MEMORY_FIGURES: [&str; 10] = [
    "start-up to first answer",
    "tools in `tools/list`",
    "VmRSS after start-up",
    "VmHWM after start-up",
    "VmRSS after the burst",
    "VmHWM after the burst",
    "calls in the burst",
    "upstream processes",
    "upstreams' VmRSS, all (after the burst)",
    "upstreams' VmRSS, each",
];

fn measure_memory(
    sizes: Sizes,
    dir: &Path,
    gateway: &Path,
    bench_large: &Path,
    catalog: &Path,
    config: &dyn Fn(&str, Value) -> String,
) -> Vec<(String, Vec<Footprint>)> {
    let large =
        |tools: usize| json!({"command": bench_large.display().to_string(), "args": [tools.to_string()]});
    let prefix = |i: usize| format!("u{:02}", i + 1);
    let mut twenty = serde_json::Map::new();
    for i in 0..UPSTREAMS {
        twenty.insert(prefix(i), large(TOOLS_EACH));
    }
    let twenty = config("twenty.json", Value::Object(twenty));
    let one_small = config("one-50.json", json!({"u01": large(TOOLS_EACH)}));
    let one_large = config("one-1000.json", json!({"u01": large(UPSTREAMS * TOOLS_EACH)}));
    // The same 1,000 tools' definitions, for the catalog example (deferred, natively).
    let page = {
        let mut server =
            stdio::Server::start(bench_large, &[(UPSTREAMS * TOOLS_EACH).to_string()], Era::Handshake);
        let page = server.tools_list_text();
        server.finish();
        page
    };
    let page_file = dir.join("tools-1000.json");
    std::fs::write(&page_file, &page).expect("write the tools' definitions");

    let generated = |upstreams: usize, each: usize, prefixed: bool| -> Vec<String> {
        (0..upstreams)
            .flat_map(|u| {
                (0..each - 2).map(move |t| {
                    if prefixed { format!("{}_tool_{t:05}", prefix(u)) } else { format!("tool_{t:05}") }
                })
            })
            .collect()
    };
    let adds = |upstreams: usize| (0..upstreams).map(|u| format!("{}_add", prefix(u))).collect::<Vec<_>>();
    let gateway_resident =
        |name: String, file: &str, upstreams: usize, each: usize, deferred: bool| Resident {
            name,
            binary: gateway.to_path_buf(),
            args: if deferred {
                vec![file.to_owned()]
            } else {
                vec![file.to_owned(), "--no-defer".to_owned()]
            },
            adds: adds(upstreams),
            generated: generated(upstreams, each, true),
            deferred,
            expect: "3.5",
        };
    let all = UPSTREAMS * TOOLS_EACH;
    let residents = [
        gateway_resident(
            format!("gateway, {UPSTREAMS} upstreams × {TOOLS_EACH} tools, deferred"),
            &twenty,
            UPSTREAMS,
            TOOLS_EACH,
            true,
        ),
        gateway_resident(
            format!("gateway, {UPSTREAMS} upstreams × {TOOLS_EACH} tools, --no-defer"),
            &twenty,
            UPSTREAMS,
            TOOLS_EACH,
            false,
        ),
        gateway_resident(
            format!("gateway, 1 upstream × {TOOLS_EACH} tools, deferred"),
            &one_small,
            1,
            TOOLS_EACH,
            true,
        ),
        gateway_resident(
            format!("gateway, 1 upstream × {TOOLS_EACH} tools, --no-defer"),
            &one_small,
            1,
            TOOLS_EACH,
            false,
        ),
        gateway_resident(format!("gateway, 1 upstream × {all} tools, deferred"), &one_large, 1, all, true),
        gateway_resident(format!("gateway, 1 upstream × {all} tools, --no-defer"), &one_large, 1, all, false),
        Resident {
            name: format!("plain server, the same {all} tools (`bench_large {all}`)"),
            binary: bench_large.to_path_buf(),
            args: vec![all.to_string()],
            adds: vec!["add".into()],
            generated: generated(1, all, false),
            deferred: false,
            expect: "3.5",
        },
        Resident {
            name: format!("plain server, the same {all} tools, deferred (`catalog`)"),
            binary: catalog.to_path_buf(),
            args: vec![page_file.display().to_string()],
            adds: vec!["add".into()],
            generated: generated(1, all, false),
            deferred: true,
            // The catalog's tools return their arguments.
            expect: "1.5",
        },
    ];
    let mut results: Vec<(String, Vec<Footprint>)> =
        residents.iter().map(|r| (r.name.clone(), Vec::new())).collect();
    // The burst: `pipelined` calls of the `add`s with 32 in flight, and `sequential` ones, shared
    // among the upstreams; each generated tool once; `tools/list` (and, deferred, searches).
    let (sequential, pipelined) = (sizes.sequential / 10, sizes.pipelined / 5);
    for round in 0..sizes.runs {
        for (r, resident) in residents.iter().enumerate() {
            let mut server = stdio::Server::start(&resident.binary, &resident.args, Era::Handshake);
            let mut footprint =
                Footprint { started_ms: server.started.as_secs_f64() * 1e3, ..Footprint::default() };
            let list = server.request("tools/list", "{}");
            let list: Value = serde_json::from_str(&list).expect("tools/list is JSON");
            footprint.listed = list["result"]["tools"].as_array().map_or(0, Vec::len);
            std::thread::sleep(Duration::from_millis(500));
            (footprint.rss_started, footprint.hwm_started) = server.memory();
            let call = |name: &str, arguments: String, expect: &str| {
                let call = Call { name: name.to_owned(), arguments, expect: expect.to_owned() };
                if resident.deferred {
                    Call {
                        name: "call_tool".into(),
                        arguments: format!(r#"{{"name":"{}","arguments":{}}}"#, call.name, call.arguments),
                        expect: call.expect,
                    }
                } else {
                    call
                }
            };
            let before = server.requests();
            for _ in 0..3 {
                server.request("tools/list", "{}");
            }
            if resident.deferred {
                for query in
                    ["look a record up by its id", "add two numbers", "echo a text", "owner of a record"]
                {
                    for _ in 0..5 {
                        let answer = server.request(
                            "tools/call",
                            &format!(r#"{{"name":"search_tools","arguments":{{"query":"{query}"}}}}"#),
                        );
                        assert!(answer.contains("\"result\""), "search_tools: {answer}");
                    }
                }
            }
            for add in &resident.adds {
                server.set_call(call(add, r#"{"a":1.5,"b":2}"#.into(), resident.expect));
                server.sequential(0, sequential / resident.adds.len());
                server.pipelined(pipelined / resident.adds.len(), 32);
            }
            for (t, tool) in resident.generated.iter().enumerate() {
                server.set_call(call(tool, format!(r#"{{"id":"r{t}"}}"#), &format!("\"r{t}\"")));
                server.sequential(0, 1);
            }
            footprint.calls = server.requests() - before;
            std::thread::sleep(Duration::from_millis(500));
            (footprint.rss_burst, footprint.hwm_burst) = server.memory();
            let children = children_of(server.pid());
            footprint.upstreams = children.len();
            footprint.upstreams_rss = children.iter().map(|&pid| stdio::memory_of(pid).0).sum();
            server.finish();
            results[r].1.push(footprint);
        }
        eprintln!("  round {}: memory", round + 1);
    }
    results
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid …
        let parent =
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        if parent == Some(pid) {
            children.push(child);
        }
    }
    children
}

fn shown(value: f64, unit: Unit) -> String {
    if value.is_nan() {
        return "–".into();
    }
    let number = if value >= 100.0 { format!("{value:.0}") } else { format!("{value:.1}") };
    match unit {
        Unit::Micros => format!("{number} µs"),
        Unit::Millis => format!("{number} ms"),
        Unit::Rate => format!("{number} /s"),
        Unit::Mib => format!("{number} MiB"),
    }
}

fn measured(figures: &[Vec<Vec<Vec<f64>>>], figure: usize) -> bool {
    !figures[figure][0][0].is_empty()
}

fn ratios(figures: &[Vec<Vec<Vec<f64>>>], figure: usize, era: usize, num: usize, den: usize) -> Vec<f64> {
    let (n, d) = (&figures[figure][era][num], &figures[figure][era][den]);
    n.iter().zip(d).map(|(n, d)| n / d).collect()
}

fn list(values: &[f64]) -> String {
    values.iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>().join(", ")
}

#[allow(clippy::too_many_arguments)]
fn write(
    out: &Path,
    sizes: Sizes,
    variants: &[Variant],
    figures: &[Vec<Vec<Vec<f64>>>],
    memory: &[(String, Vec<Footprint>)],
    took: f64,
    machine: &Cpu,
    processes: Vec<Value>,
) {
    let mut md = String::new();
    let cores = std::fs::read_to_string("/proc/stat")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.strip_prefix("cpu").is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit())))
        .count()
        .max(1) as f64;
    let share = |ticks: u64| ticks as f64 / machine.total.max(1) as f64 * cores;
    let (busy, own, steal) = (share(machine.busy), share(machine.own), share(machine.steal));
    let others = (busy - own - steal).max(0.0);
    let _ = writeln!(
        md,
        "This run took {took:.0} s. Over it, on average, the driver and the servers (gateways with their \
         upstreams) kept {own:.2} of the {cores:.0} cores busy, other processes {others:.2}, and the hypervisor \
         took {steal:.2} (`/proc/stat`).\n"
    );
    let latency = (0..FIGURES.len()).any(|f| measured(figures, f));
    let mut targets_json = Vec::new();
    if latency {
        let _ = writeln!(md, "### Latency: medians of {} rounds (for rates, higher is better)\n", sizes.runs);
        let _ = writeln!(
            md,
            "| figure | requests | {} |",
            variants.iter().map(|v| v.name).collect::<Vec<_>>().join(" | ")
        );
        let _ = writeln!(md, "|---|---|{}", "---|".repeat(variants.len()));
        for (f, (name, unit)) in FIGURES.iter().enumerate().filter(|(f, _)| measured(figures, *f)) {
            for (e, (_, era)) in ERAS.iter().enumerate() {
                let cells: Vec<String> =
                    (0..variants.len()).map(|v| shown(median(&figures[f][e][v]), *unit)).collect();
                let _ = writeln!(md, "| {name} | {era} | {} |", cells.join(" | "));
            }
        }
        let shown_figures: Vec<usize> = (0..FIGURES.len()).filter(|&f| measured(figures, f)).collect();
        let _ = writeln!(
            md,
            "\nRatios taken within each round: the median of the {} rounds' ratios, and in brackets their \
             lowest and highest.\n",
            sizes.runs
        );
        let _ = writeln!(
            md,
            "| ratio | requests | {} |",
            shown_figures.iter().map(|&f| FIGURES[f].0).collect::<Vec<_>>().join(" | ")
        );
        let _ = writeln!(md, "|---|---|{}", "---|".repeat(shown_figures.len()));
        for &(label, num, den) in &RATIOS {
            for (e, (_, era)) in ERAS.iter().enumerate() {
                let cells: Vec<String> = shown_figures
                    .iter()
                    .map(|&f| {
                        let r = ratios(figures, f, e, num, den);
                        let lo = r.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        format!("{:.3}× ({lo:.3}–{hi:.3})", median(&r))
                    })
                    .collect();
                let _ = writeln!(md, "| {label} | {era} | {} |", cells.join(" | "));
            }
        }
        let _ = writeln!(md, "\n| target | requests | per round | median | |");
        let _ = writeln!(md, "|---|---|---|---|---|");
        let checks = [
            ("stdio", STDIO_P50, NAMED, "gateway --no-defer"),
            ("stdio", STDIO_P50, DEFERRED, "gateway deferred (`call_tool`)"),
            ("HTTP 1 client", HTTP_P50, NAMED, "gateway --no-defer"),
            ("HTTP 1 client", HTTP_P50, DEFERRED, "gateway deferred (`call_tool`)"),
        ];
        for (front, f, v, label) in checks {
            if !measured(figures, f) {
                continue;
            }
            for (e, (_, era)) in ERAS.iter().enumerate() {
                let r = ratios(figures, f, e, v, DIRECT);
                let m = median(&r);
                let met = m <= LIMIT;
                let _ = writeln!(
                    md,
                    "| {label}: {front} p50 ≤ {LIMIT}× direct | {era} | {} | {m:.3}× | {} |",
                    list(&r),
                    if met { "**met**" } else { "**missed**" }
                );
                targets_json.push(json!({"target": format!("{label} {front} p50 <= {LIMIT}x direct"),
                    "era": era, "rounds": r, "median": m, "met": met}));
            }
        }
        // What the gateway adds to a call, in µs (median of the rounds' differences).
        let _ = writeln!(
            md,
            "\nWhat the gateway adds to one call (the median of the rounds' differences from direct):\n"
        );
        let _ = writeln!(md, "| added | requests | stdio p50 | stdio p99 | HTTP p50 | HTTP p99 |");
        let _ = writeln!(md, "|---|---|---|---|---|---|");
        for (v, label) in [(NAMED, "gateway --no-defer"), (DEFERRED, "gateway deferred (`call_tool`)")] {
            for (e, (_, era)) in ERAS.iter().enumerate() {
                let cells: Vec<String> = [STDIO_P50, STDIO_P99, HTTP_P50, HTTP_P99]
                    .iter()
                    .map(|&f| {
                        let d: Vec<f64> =
                            figures[f][e][v].iter().zip(&figures[f][e][DIRECT]).map(|(g, d)| g - d).collect();
                        if d.is_empty() { "–".into() } else { format!("{:+.1} µs", median(&d)) }
                    })
                    .collect();
                let _ = writeln!(md, "| {label} | {era} | {} |", cells.join(" | "));
            }
        }
    }
    if !memory.is_empty() {
        let runs = memory[0].1.len();
        let _ = writeln!(
            md,
            "\n### Memory: medians of {runs} rounds (the gateway's own process; its upstreams apart)\n"
        );
        let _ = writeln!(md, "| server | {} |", MEMORY_FIGURES.join(" | "));
        let _ = writeln!(md, "|---|{}", "---|".repeat(MEMORY_FIGURES.len()));
        let mib = |kib: f64| shown(kib / 1024.0, Unit::Mib);
        for (name, rounds) in memory {
            let m = |f: &dyn Fn(&Footprint) -> f64| median(&rounds.iter().map(f).collect::<Vec<_>>());
            let upstreams = m(&|f| f.upstreams as f64);
            let each = if upstreams > 0.0 {
                mib(m(&|f| f.upstreams_rss as f64 / f.upstreams as f64))
            } else {
                "–".into()
            };
            let cells = [
                shown(m(&|f| f.started_ms), Unit::Millis),
                format!("{:.0}", m(&|f| f.listed as f64)),
                mib(m(&|f| f.rss_started as f64)),
                mib(m(&|f| f.hwm_started as f64)),
                mib(m(&|f| f.rss_burst as f64)),
                mib(m(&|f| f.hwm_burst as f64)),
                format!("{:.0}", m(&|f| f.calls as f64)),
                format!("{upstreams:.0}"),
                if upstreams > 0.0 { mib(m(&|f| f.upstreams_rss as f64)) } else { "–".into() },
                each,
            ];
            let _ = writeln!(md, "| {name} | {} |", cells.join(" | "));
        }
    }
    print!("{md}");
    let with = |ext: &str| out.with_extension(ext);
    if let Some(dir) = with("md").parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).expect("the report's folder");
    }
    std::fs::write(with("table.md"), &md).expect("write the markdown tables");

    let mut rows = Vec::new();
    for (f, (name, unit)) in FIGURES.iter().enumerate() {
        for (e, (_, era)) in ERAS.iter().enumerate() {
            let mut cells = serde_json::Map::new();
            for (v, variant) in variants.iter().enumerate() {
                cells.insert(
                    variant.name.to_owned(),
                    json!({"median": median(&figures[f][e][v]), "runs": figures[f][e][v]}),
                );
            }
            let unit = match unit {
                Unit::Micros => "µs",
                Unit::Millis => "ms",
                Unit::Rate => "/s",
                Unit::Mib => "MiB",
            };
            rows.push(json!({"measurement": name, "requests": era, "unit": unit, "cells": cells}));
        }
    }
    let memory_json: Vec<Value> = memory
        .iter()
        .map(|(name, rounds)| {
            json!({"server": name, "rounds": rounds.iter().map(|f| json!({
                "startup_ms": f.started_ms, "tools_listed": f.listed,
                "rss_started_kib": f.rss_started, "hwm_started_kib": f.hwm_started,
                "rss_burst_kib": f.rss_burst, "hwm_burst_kib": f.hwm_burst, "calls": f.calls,
                "upstreams": f.upstreams, "upstreams_rss_kib": f.upstreams_rss,
            })).collect::<Vec<_>>()})
        })
        .collect();
    let document = json!({
        "runs": sizes.runs,
        "slices": sizes.slices,
        "pinned": crate::PIN.load(std::sync::atomic::Ordering::Relaxed),
        "seconds": took,
        "machine": {"cores": cores, "busy_cores": busy, "own_cores": own, "other_cores": others, "steal_cores": steal},
        "variants": variants.iter().map(|v| json!({"name": v.name, "binary": v.binary.file_name().map(|n| n.to_string_lossy().into_owned()),
            "args": v.args.iter().map(|a| Path::new(a).file_name().map_or_else(|| a.clone(), |n| n.to_string_lossy().into_owned())).collect::<Vec<_>>(),
            "calls": v.call().name})).collect::<Vec<_>>(),
        "rows": rows,
        "targets": targets_json,
        "memory": memory_json,
        "stdio_processes": processes,
    });
    std::fs::write(with("json"), serde_json::to_string_pretty(&document).unwrap() + "\n")
        .expect("write JSON");
    eprintln!("mcp-bench: wrote {} and {}", with("table.md").display(), with("json").display());
}
