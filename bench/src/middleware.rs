//! `mcp-bench --middleware --baseline PATH`: what the call pipeline and telemetry cost (the
//! "Middleware" issue, item 4). The two-tool server (`examples/bench_server.rs`) is measured as
//! the performance suite measures it (same requests, sizes, rounds and slices: see `main.rs`),
//! in five variants, each sent 2025-11-25 and 2026-07-28 requests:
//!
//! * **before the pipeline**: `bench_server` built from the commit before the call pipeline
//!   (`--baseline`, built by `scripts/bench-middleware.sh`);
//! * **before, 2nd copy**: the same binary again, a second server measured the same way: the
//!   ratio of the two copies is what the noise alone gives (an A/A comparison), the yardstick
//!   for "unchanged";
//! * **no layer**: today's `bench_server`, as the suite runs it;
//! * **pass-through layer**: the same binary with `BENCH_LAYER=noop` (one tower layer that
//!   forwards every call): the pipeline's own cost;
//! * **telemetry (exporting)**: the same binary with `--otel` and `OTEL_EXPORTER_OTLP_ENDPOINT`
//!   set to an OTLP/HTTP sink in this process (`otlp_sink.rs`), which counts the spans it
//!   receives.
//!
//! Every ratio is taken within a round (the servers compared were measured slice by slice in
//! turn in that round), and the median of the rounds' ratios is the figure, as
//! `scripts/perf-rounds.py` does for the suite. Writes PREFIX.table.md and PREFIX.json.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;

use crate::otlp_sink::{Received, Sink};
use crate::{Burst, Era, Samples, Sizes, http, stdio, turns};

/// A server of the comparison.
struct Variant {
    name: &'static str,
    binary: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// Whether it exports to the sink (its calls are the spans expected).
    exports: bool,
}

const BEFORE: usize = 0;
const BEFORE_COPY: usize = 1;
const NO_LAYER: usize = 2;
const PASS_THROUGH: usize = 3;
const TELEMETRY: usize = 4;
/// Only with `--decompose`.
const UNEXPORTED: usize = 5;
const SAMPLED: usize = 6;

/// The `service.name` of the exporting telemetry variant, and of the sampled one.
const SERVICE: &str = "bench_server";
const SAMPLED_SERVICE: &str = "bench_server-sampled";

const ERAS: [(Era, &str); 2] = [(Era::Handshake, "2025-11-25"), (Era::Stateless, "2026-07-28")];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Micros,
    Millis,
    Rate,
    Mib,
}

/// The figures measured, in table order.
const FIGURES: [(&str, Unit); 8] = [
    ("stdio sequential p50", Unit::Micros),
    ("stdio sequential p99", Unit::Micros),
    ("stdio 32 in flight calls/s", Unit::Rate),
    ("RSS after stdio load (peak)", Unit::Mib),
    ("HTTP 1 client p50", Unit::Micros),
    ("HTTP 1 client p99", Unit::Micros),
    ("HTTP 16 clients calls/s", Unit::Rate),
    ("stdio start-up to first answer", Unit::Millis),
];
const STDIO_P50: usize = 0;
const HTTP_16: usize = 6;

/// The ratios shown, round by round: (label, numerator, denominator).
const RATIOS: [(&str, usize, usize); 5] = [
    ("telemetry / no layer", TELEMETRY, NO_LAYER),
    ("pass-through layer / no layer", PASS_THROUGH, NO_LAYER),
    ("no layer / before the pipeline", NO_LAYER, BEFORE),
    ("before, 2nd copy / before (A/A: noise alone)", BEFORE_COPY, BEFORE),
    ("telemetry / before the pipeline", TELEMETRY, BEFORE),
];

/// The telemetry's limit (the 1.15×).
const TELEMETRY_LIMIT: f64 = 1.15;

/// What one section's round sent to the exporting servers and what the sink received meanwhile.
struct Export {
    section: &'static str,
    round: usize,
    calls: u64,
    received: Received,
}

/// With `decompose`, two more variants: telemetry whose spans are made but not exported
/// (`OTEL_TRACES_EXPORTER=none`; the metric still is), which splits the telemetry's cost
/// between the request's path and the span exporter's thread; and telemetry sampling one trace
/// in ten (`OTEL_TRACES_SAMPLER=traceidratio`, `…_ARG=0.1`).
/// `only`: `stdio` or `http` measures that section alone (to profile: `--wrap`).
pub fn run(sizes: Sizes, out: &Path, baseline: &Path, current: &Path, decompose: bool, only: Option<&str>) {
    for name in ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] {
        assert!(
            std::env::var_os(name).is_none(),
            "{name} is set: every server would export (scripts/bench-middleware.sh unsets it)"
        );
    }
    let sink = Sink::start();
    let otel_env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), sink.endpoint().to_owned()),
        ("OTEL_SERVICE_NAME".to_owned(), SERVICE.to_owned()),
    ];
    let mut unexported_env = otel_env.clone();
    unexported_env.push(("OTEL_TRACES_EXPORTER".to_owned(), "none".to_owned()));
    let mut sampled_env = otel_env.clone();
    sampled_env[1].1 = SAMPLED_SERVICE.to_owned();
    sampled_env.push(("OTEL_TRACES_SAMPLER".to_owned(), "traceidratio".to_owned()));
    sampled_env.push(("OTEL_TRACES_SAMPLER_ARG".to_owned(), "0.1".to_owned()));
    let variant = |name, binary: &Path, args: &[&str], env: Vec<(String, String)>, exports| Variant {
        name,
        binary: binary.to_path_buf(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env,
        exports,
    };
    let mut variants = vec![
        variant("before the pipeline", baseline, &[], vec![], false),
        variant("before, 2nd copy", baseline, &[], vec![], false),
        variant("no layer", current, &[], vec![], false),
        variant(
            "pass-through layer",
            current,
            &[],
            vec![("BENCH_LAYER".to_owned(), "noop".to_owned())],
            false,
        ),
        variant("telemetry (exporting)", current, &["--otel"], otel_env, true),
    ];
    if decompose {
        variants.push(variant("telemetry, spans not exported", current, &["--otel"], unexported_env, false));
        variants.push(variant("telemetry, 10% sampled", current, &["--otel"], sampled_env, false));
    }
    // figures[figure][era][variant]: one value per round.
    let mut figures = vec![vec![vec![Vec::<f64>::new(); variants.len()]; ERAS.len()]; FIGURES.len()];
    let mut exports = Vec::new();
    // Each stdio server's process and calls (to match a profile's files: `--wrap`).
    let mut stdio_processes = Vec::new();
    let machine_before = Cpu::now();
    let began = Instant::now();
    eprintln!("mcp-bench --middleware: {} round(s), sink at {}", sizes.runs, sink.endpoint());

    // stdio: sequential latency and 32 calls in flight; a round starts every server, then
    // measures them slice by slice, each in turn.
    let stdio_servers: Vec<(usize, usize)> =
        (0..ERAS.len()).flat_map(|era| (0..variants.len()).map(move |v| (era, v))).collect();
    for round in 0..sizes.runs {
        if only.is_some_and(|only| only != "stdio") {
            break;
        }
        let before = sink.received();
        let mut servers: Vec<_> = stdio_servers
            .iter()
            .map(|&(era, v)| {
                let variant = &variants[v];
                let mut server =
                    stdio::Server::start_with_env(&variant.binary, &variant.args, &variant.env, ERAS[era].0);
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
        let mut calls = 0;
        for (era, v, server, sequential, pipelined) in servers {
            let seq = sequential.latency();
            figures[0][era][v].push(seq.p50.as_secs_f64() * 1e6);
            figures[1][era][v].push(seq.p99.as_secs_f64() * 1e6);
            figures[2][era][v].push(pipelined.rate());
            if variants[v].exports {
                calls += server.requests() - 1; // all but the opening request
            }
            stdio_processes
                .push(json!({"round": round + 1, "variant": variants[v].name, "requests": ERAS[era].1,
                "pid": server.pid(), "calls": server.requests() - 1}));
            figures[7][era][v].push(server.started.as_secs_f64() * 1e3);
            let (_, peak) = server.finish();
            figures[3][era][v].push(peak as f64 / 1024.0);
        }
        exports.push(Export {
            section: "stdio",
            round: round + 1,
            calls,
            received: sink.received().since(&before),
        });
        eprintln!("  round {}: stdio ({:.0} s)", round + 1, began.elapsed().as_secs_f64());
    }

    // HTTP: one client sequential, sixteen clients in parallel.
    for round in 0..sizes.runs {
        if only.is_some_and(|only| only != "http") {
            break;
        }
        let before = sink.received();
        let mut servers: Vec<_> = stdio_servers
            .iter()
            .map(|&(era, v)| {
                let variant = &variants[v];
                let mut args = variant.args.clone();
                args.push("--http".into());
                let server = http::Server::start_with_env(&variant.binary, &args, &variant.env);
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
        let mut calls = 0;
        for (era, v, server, sequential, parallel) in servers {
            let seq = sequential.latency();
            figures[4][era][v].push(seq.p50.as_secs_f64() * 1e6);
            figures[5][era][v].push(seq.p99.as_secs_f64() * 1e6);
            figures[6][era][v].push(parallel.rate());
            if variants[v].exports {
                calls += server.calls();
            }
            drop(server); // SIGTERM: the server flushes its telemetry and exits
        }
        exports.push(Export {
            section: "HTTP",
            round: round + 1,
            calls,
            received: sink.received().since(&before),
        });
        eprintln!("  round {}: HTTP ({:.0} s)", round + 1, began.elapsed().as_secs_f64());
    }

    let took = began.elapsed();
    let machine = Cpu::now().since(&machine_before);
    let expected: u64 = exports.iter().map(|e| e.calls).sum();
    let received: u64 = exports.iter().map(|e| e.received.spans_of(SERVICE, "tools/call add")).sum();
    assert!(received > 0, "the telemetry servers exported no `tools/call add` span: is --otel working?");
    eprintln!(
        "mcp-bench --middleware: {received} of {expected} `tools/call add` spans received; {:.0} s",
        took.as_secs_f64()
    );
    let run = Run { took: took.as_secs_f64(), machine, stdio_processes };
    write(out, sizes, &variants, &figures, &exports, &run);
}

/// What a run took, and what else was going on.
struct Run {
    took: f64,
    machine: Cpu,
    stdio_processes: Vec<serde_json::Value>,
}

/// CPU time from `/proc`, in clock ticks: the whole machine's (busy, stolen by the hypervisor,
/// all) and this process's with its ended children (the servers).
#[derive(Clone, Copy, Default)]
pub(crate) struct Cpu {
    pub(crate) busy: u64,
    pub(crate) steal: u64,
    pub(crate) total: u64,
    pub(crate) own: u64,
}

impl Cpu {
    pub(crate) fn now() -> Cpu {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let all: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .skip(1)
            .filter_map(|v| v.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal (guest time is within user)
        let field = |i: usize| all.get(i).copied().unwrap_or(0);
        let total: u64 = (0..8).map(field).sum();
        let busy = total - field(3) - field(4);
        let own_stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let after_name = own_stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        let own_fields: Vec<u64> = after_name.split_whitespace().filter_map(|v| v.parse().ok()).collect();
        // utime, stime, cutime, cstime: the 14th to 17th fields, so 10 to 13 of those after the
        // name once the state (a letter) is left out
        let own = own_fields.iter().skip(10).take(4).sum();
        Cpu { busy, steal: field(7), total, own }
    }

    pub(crate) fn since(&self, before: &Cpu) -> Cpu {
        Cpu {
            busy: self.busy - before.busy,
            steal: self.steal - before.steal,
            total: self.total - before.total,
            own: self.own.saturating_sub(before.own),
        }
    }
}

/// The median (`NaN` for a figure not measured: `--only`).
pub(crate) fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 }
}

fn shown(value: f64, unit: Unit) -> String {
    let number = if value >= 100.0 { format!("{value:.0}") } else { format!("{value:.1}") };
    match unit {
        Unit::Micros => format!("{number} µs"),
        Unit::Millis => format!("{number} ms"),
        Unit::Rate => format!("{number} /s"),
        Unit::Mib => format!("{number} MiB"),
    }
}

/// Whether a figure was measured (not left out by `--only`).
fn measured(figures: &[Vec<Vec<Vec<f64>>>], figure: usize) -> bool {
    !figures[figure][0][0].is_empty()
}

/// The per-round ratios `numerator / denominator` of one figure and era.
fn ratios(figures: &[Vec<Vec<Vec<f64>>>], figure: usize, era: usize, num: usize, den: usize) -> Vec<f64> {
    let (n, d) = (&figures[figure][era][num], &figures[figure][era][den]);
    n.iter().zip(d).map(|(n, d)| n / d).collect()
}

/// How far from 1 the A/A ratios of a figure go, over both eras' rounds: the noise's reach.
fn spread(figures: &[Vec<Vec<Vec<f64>>>], figure: usize) -> f64 {
    (0..ERAS.len())
        .flat_map(|era| ratios(figures, figure, era, BEFORE_COPY, BEFORE))
        .map(|r| (r - 1.0).abs())
        .fold(0.0, f64::max)
}

fn list(values: &[f64]) -> String {
    values.iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>().join(", ")
}

fn write(
    out: &Path,
    sizes: Sizes,
    variants: &[Variant],
    figures: &[Vec<Vec<Vec<f64>>>],
    exports: &[Export],
    run: &Run,
) {
    let (took, machine) = (run.took, &run.machine);
    let mut md = String::new();
    // The machine's state: what else ran meanwhile.
    // The machine's cores (`/proc/stat` counts them all; a pinned driver is allowed only one).
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
        "This run took {took:.0} s. Over it, on average, the driver and the servers kept {own:.2} of the \
         {cores:.0} cores busy, other processes {others:.2}, and the hypervisor took {steal:.2} (`/proc/stat`).\n"
    );
    // Medians.
    let _ = writeln!(md, "Medians of {} rounds (for rates, higher is better).\n", sizes.runs);
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
    // Ratios round by round.
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
    let unexported = [
        ("telemetry, spans not exported / no layer", UNEXPORTED, NO_LAYER),
        ("telemetry, 10% sampled / no layer", SAMPLED, NO_LAYER),
    ];
    let shown_ratios = RATIOS.iter().chain(unexported.iter().filter(|_| variants.len() > UNEXPORTED));
    for &(label, num, den) in shown_ratios {
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
    // Targets.
    let _ = writeln!(md, "\n| target | requests | per round | median | |");
    let _ = writeln!(md, "|---|---|---|---|---|");
    let mut targets_json = Vec::new();
    for (e, (_, era)) in ERAS.iter().enumerate().filter(|_| measured(figures, STDIO_P50)) {
        let r = ratios(figures, STDIO_P50, e, TELEMETRY, NO_LAYER);
        let m = median(&r);
        let met = m <= TELEMETRY_LIMIT;
        let _ = writeln!(
            md,
            "| telemetry: stdio sequential p50 ≤ {TELEMETRY_LIMIT}× no layer | {era} | {} | {m:.3}× | {} |",
            list(&r),
            if met { "**met**" } else { "**missed**" }
        );
        targets_json.push(json!({"target": "telemetry stdio sequential p50 <= 1.15x no layer", "era": era,
            "rounds": r, "median": m, "met": met}));
    }
    for (e, (_, era)) in ERAS.iter().enumerate().filter(|_| measured(figures, HTTP_16)) {
        let r = ratios(figures, HTTP_16, e, TELEMETRY, NO_LAYER);
        let m = median(&r);
        let met = m >= 1.0 / TELEMETRY_LIMIT;
        let _ = writeln!(
            md,
            "| telemetry: HTTP 16 clients ≥ 1/{TELEMETRY_LIMIT} ({:.3}×) of no layer | {era} | {} | {m:.3}× | {} |",
            1.0 / TELEMETRY_LIMIT,
            list(&r),
            if met { "**met**" } else { "**missed**" }
        );
        targets_json.push(json!({"target": "telemetry HTTP 16 clients >= 1/1.15 of no layer", "era": era,
            "rounds": r, "median": m, "met": met}));
    }
    for (f, (name, _)) in FIGURES.iter().enumerate().filter(|(f, _)| measured(figures, *f)) {
        let noise = spread(figures, f);
        for (e, (_, era)) in ERAS.iter().enumerate() {
            let r = ratios(figures, f, e, NO_LAYER, BEFORE);
            let m = median(&r);
            let within = (m - 1.0).abs() <= noise;
            let _ = writeln!(
                md,
                "| no layer: {name} unchanged (within the A/A spread, ±{:.1}%) | {era} | {} | {m:.3}× | {} |",
                noise * 100.0,
                list(&r),
                if within { "within" } else { "**outside**" }
            );
            targets_json.push(json!({"target": format!("no layer {name} within A/A spread"), "era": era,
                "rounds": r, "median": m, "spread": noise, "met": within}));
        }
    }
    // What was exported.
    let _ = writeln!(
        md,
        "\nWhat the exporting telemetry servers (both eras) sent the OTLP sink, section by section: the \
         `tools/call` requests they answered (warm-ups included), the `tools/call add` spans received, \
         the other spans (the opening requests; with `--decompose`, the sampled servers' spans too), and \
         every server's POSTs and their bytes.\n"
    );
    let _ = writeln!(
        md,
        "| section, round | calls answered | `tools/call add` spans | other spans | trace POSTs | trace bytes | metric POSTs | metric bytes |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    for export in exports {
        let add = export.received.spans_of(SERVICE, "tools/call add");
        let others: Vec<String> = export
            .received
            .spans
            .iter()
            .flat_map(|(service, names)| names.iter().map(move |(name, n)| (service, name, n)))
            .filter(|(service, name, _)| (service.as_str(), name.as_str()) != (SERVICE, "tools/call add"))
            .map(|(service, name, n)| {
                if service == SERVICE {
                    format!("{n} `{name}`")
                } else {
                    format!("{n} `{name}` of {service}")
                }
            })
            .collect();
        let _ = writeln!(
            md,
            "| {} {} | {} | {} ({:.1}%) | {} | {} | {:.1} MB | {} | {:.1} KB |",
            export.section,
            export.round,
            export.calls,
            add,
            100.0 * add as f64 / export.calls.max(1) as f64,
            if others.is_empty() { "none".to_owned() } else { others.join(", ") },
            export.received.trace_posts,
            export.received.trace_bytes as f64 / 1e6,
            export.received.metric_posts,
            export.received.metric_bytes as f64 / 1e3,
        );
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
    let exports_json: Vec<_> = exports
        .iter()
        .map(|e| {
            json!({"section": e.section, "round": e.round, "calls": e.calls, "spans": e.received.spans,
                "trace_posts": e.received.trace_posts, "trace_bytes": e.received.trace_bytes,
                "metric_posts": e.received.metric_posts, "metric_bytes": e.received.metric_bytes,
                "other_requests": e.received.other})
        })
        .collect();
    let document = json!({
        "runs": sizes.runs,
        "slices": sizes.slices,
        "pinned": crate::PIN.load(std::sync::atomic::Ordering::Relaxed),
        "seconds": took,
        "stdio_processes": run.stdio_processes,
        "machine": {"cores": cores, "busy_cores": busy, "own_cores": own, "other_cores": others, "steal_cores": steal},
        "variants": variants.iter().map(|v| json!({"name": v.name, "binary": v.binary.display().to_string(),
            "args": v.args, "env": v.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "rows": rows,
        "targets": targets_json,
        "exports": exports_json,
    });
    std::fs::write(with("json"), serde_json::to_string_pretty(&document).unwrap() + "\n")
        .expect("write JSON");
    eprintln!("mcp-bench: wrote {} and {}", with("table.md").display(), with("json").display());
}
