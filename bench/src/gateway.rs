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

use crate::compare::{
    self, Cpu, ERAS, Figures, HTTP_P50, HTTP_P99, Machine, STDIO_P50, STDIO_P99, Unit, Variant, median, shown,
};
use crate::{Call, Era, Sizes, stdio};

const DIRECT: usize = 0;
const DIRECT_COPY: usize = 1;
const NAMED: usize = 2;
const DEFERRED: usize = 3;

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

/// `only`: `stdio`, `http` or `memory` measures that section alone, `latency` the first two.
pub fn run(sizes: Sizes, out: &Path, examples: &Path, only: Option<&str>) {
    let section =
        |name: &str| only.is_none_or(|only| only == name || (only == "latency" && name != "memory"));
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

    // The gateway mounts it under `b`: its `add` is `b_add`, called by name or through `call_tool`.
    let variants = vec![
        Variant::new("direct", &bench_server, &[], Call::add()),
        Variant::new("direct, 2nd copy", &bench_server, &[], Call::add()),
        Variant::new("gateway --no-defer", &gateway, &[&one, "--no-defer"], Call::add_named("b_add")),
        Variant::new("gateway deferred (`call_tool`)", &gateway, &[&one], Call::add_deferred("b_add")),
    ];
    let began = Instant::now();
    let machine_before = Cpu::now();
    eprintln!("mcp-bench --gateway: {} round(s)", sizes.runs);
    let mut figures = Figures::new(variants.len());
    let mut processes = Vec::new();

    // stdio: sequential latency and 32 calls in flight (`compare::stdio_round`).
    for round in 0..sizes.runs {
        if !section("stdio") {
            break;
        }
        compare::stdio_round(&variants, sizes, round, &mut figures, &mut processes, |_, _| {});
        eprintln!("  round {}: stdio ({:.0} s)", round + 1, began.elapsed().as_secs_f64());
    }

    // HTTP: one client sequential, sixteen clients in parallel (`compare::http_round`).
    for round in 0..sizes.runs {
        if !section("http") {
            break;
        }
        compare::http_round(&variants, sizes, &mut figures, |_, _| {});
        eprintln!("  round {}: HTTP ({:.0} s)", round + 1, began.elapsed().as_secs_f64());
    }

    // Memory.
    let mut memory = Vec::new();
    if section("memory") {
        memory = measure_memory(sizes, &dir, &gateway, &bench_large, &catalog, &config);
        eprintln!("  memory ({:.0} s)", began.elapsed().as_secs_f64());
    }
    let _ = std::fs::remove_dir_all(&dir);
    let took = began.elapsed().as_secs_f64();
    let machine = Machine::of(&Cpu::now().since(&machine_before));
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

#[allow(clippy::too_many_arguments)]
fn write(
    out: &Path,
    sizes: Sizes,
    variants: &[Variant],
    figures: &Figures,
    memory: &[(String, Vec<Footprint>)],
    took: f64,
    machine: &Machine,
    processes: Vec<Value>,
) {
    let mut md = String::new();
    machine.paragraph(&mut md, took, "the driver and the servers (gateways with their upstreams)");
    let latency = !figures.shown().is_empty();
    let mut targets_json = Vec::new();
    if latency {
        let _ = writeln!(
            md,
            "### Latency: medians of {} rounds (for rates, higher is better; a gateway's RSS is its own \
             process's, its upstream apart)\n",
            sizes.runs
        );
        compare::medians_table(&mut md, variants, figures);
        compare::ratios_table(&mut md, sizes.runs, figures, &RATIOS);
        compare::targets_header(&mut md);
        let checks = [
            ("stdio", STDIO_P50, NAMED, "gateway --no-defer"),
            ("stdio", STDIO_P50, DEFERRED, "gateway deferred (`call_tool`)"),
            ("HTTP 1 client", HTTP_P50, NAMED, "gateway --no-defer"),
            ("HTTP 1 client", HTTP_P50, DEFERRED, "gateway deferred (`call_tool`)"),
        ];
        for (front, f, v, label) in checks {
            if !figures.measured(f) {
                continue;
            }
            for (e, (_, era)) in ERAS.iter().enumerate() {
                compare::target(
                    &mut md,
                    &mut targets_json,
                    (
                        &format!("{label}: {front} p50 ≤ {LIMIT}× direct"),
                        format!("{label} {front} p50 <= {LIMIT}x direct"),
                    ),
                    era,
                    figures.ratios(f, e, v, DIRECT),
                    |m| m <= LIMIT,
                );
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
                        let (through, direct) = (figures.of(f, e, v), figures.of(f, e, DIRECT));
                        let d: Vec<f64> = through.iter().zip(direct).map(|(g, d)| g - d).collect();
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
        "machine": machine.json(),
        "variants": variants.iter().map(|v| json!({"name": v.name, "binary": v.binary.file_name().map(|n| n.to_string_lossy().into_owned()),
            "args": v.args.iter().map(|a| Path::new(a).file_name().map_or_else(|| a.clone(), |n| n.to_string_lossy().into_owned())).collect::<Vec<_>>(),
            "calls": v.call.name})).collect::<Vec<_>>(),
        "rows": compare::rows_json(variants, figures),
        "targets": targets_json,
        "memory": memory_json,
        "stdio_processes": processes,
    });
    compare::write_files(out, &md, &document);
}
