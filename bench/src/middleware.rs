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
use std::path::Path;
use std::time::Instant;

use serde_json::json;

use crate::compare::{self, Cpu, ERAS, FIGURES, Figures, HTTP_16, Machine, STDIO_P50, Variant, list, median};
use crate::otlp_sink::{Received, Sink};
use crate::{Call, Sizes};

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
    let variant = |name, binary: &Path, args: &[&str], env: Vec<(String, String)>| Variant {
        env,
        ..Variant::new(name, binary, args, Call::add())
    };
    let mut variants = vec![
        variant("before the pipeline", baseline, &[], vec![]),
        variant("before, 2nd copy", baseline, &[], vec![]),
        variant("no layer", current, &[], vec![]),
        variant("pass-through layer", current, &[], vec![("BENCH_LAYER".to_owned(), "noop".to_owned())]),
        variant("telemetry (exporting)", current, &["--otel"], otel_env),
    ];
    if decompose {
        variants.push(variant("telemetry, spans not exported", current, &["--otel"], unexported_env));
        variants.push(variant("telemetry, 10% sampled", current, &["--otel"], sampled_env));
    }
    // Only the exporting telemetry variant's calls are the spans expected.
    let exports = |v: usize| v == TELEMETRY;
    let mut figures = Figures::new(variants.len());
    let mut exported = Vec::new();
    // Each stdio server's process and calls (to match a profile's files: `--wrap`).
    let mut stdio_processes = Vec::new();
    let machine_before = Cpu::now();
    let began = Instant::now();
    eprintln!("mcp-bench --middleware: {} round(s), sink at {}", sizes.runs, sink.endpoint());

    // stdio: sequential latency and 32 calls in flight (`compare::stdio_round`).
    for round in 0..sizes.runs {
        if only.is_some_and(|only| only != "stdio") {
            break;
        }
        let before = sink.received();
        let mut calls = 0;
        compare::stdio_round(&variants, sizes, round, &mut figures, &mut stdio_processes, |v, server| {
            if exports(v) {
                calls += server.requests() - 1; // all but the opening request
            }
        });
        exported.push(Export {
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
        let mut calls = 0;
        // (Each server ends by SIGTERM: it flushes its telemetry and exits.)
        compare::http_round(&variants, sizes, &mut figures, |v, server| {
            if exports(v) {
                calls += server.calls();
            }
        });
        exported.push(Export {
            section: "HTTP",
            round: round + 1,
            calls,
            received: sink.received().since(&before),
        });
        eprintln!("  round {}: HTTP ({:.0} s)", round + 1, began.elapsed().as_secs_f64());
    }

    let took = began.elapsed();
    let machine = Cpu::now().since(&machine_before);
    let expected: u64 = exported.iter().map(|e| e.calls).sum();
    let received: u64 = exported.iter().map(|e| e.received.spans_of(SERVICE, "tools/call add")).sum();
    assert!(received > 0, "the telemetry servers exported no `tools/call add` span: is --otel working?");
    eprintln!(
        "mcp-bench --middleware: {received} of {expected} `tools/call add` spans received; {:.0} s",
        took.as_secs_f64()
    );
    let run = Run { took: took.as_secs_f64(), machine, stdio_processes };
    write(out, sizes, &variants, &figures, &exported, &run);
}

/// What a run took, and what else was going on.
struct Run {
    took: f64,
    machine: Cpu,
    stdio_processes: Vec<serde_json::Value>,
}

/// How far from 1 the A/A ratios of a figure go, over both eras' rounds: the noise's reach.
fn spread(figures: &Figures, figure: usize) -> f64 {
    (0..ERAS.len())
        .flat_map(|era| figures.ratios(figure, era, BEFORE_COPY, BEFORE))
        .map(|r| (r - 1.0).abs())
        .fold(0.0, f64::max)
}

fn write(out: &Path, sizes: Sizes, variants: &[Variant], figures: &Figures, exports: &[Export], run: &Run) {
    let machine = Machine::of(&run.machine);
    let mut md = String::new();
    // The machine's state: what else ran meanwhile.
    machine.paragraph(&mut md, run.took, "the driver and the servers");
    // Medians.
    let _ = writeln!(md, "Medians of {} rounds (for rates, higher is better).\n", sizes.runs);
    compare::medians_table(&mut md, variants, figures);
    // Ratios round by round.
    let unexported = [
        ("telemetry, spans not exported / no layer", UNEXPORTED, NO_LAYER),
        ("telemetry, 10% sampled / no layer", SAMPLED, NO_LAYER),
    ];
    let shown_ratios = RATIOS.iter().chain(unexported.iter().filter(|_| variants.len() > UNEXPORTED));
    compare::ratios_table(&mut md, sizes.runs, figures, shown_ratios);
    // Targets.
    compare::targets_header(&mut md);
    let mut targets_json = Vec::new();
    for (e, (_, era)) in ERAS.iter().enumerate().filter(|_| figures.measured(STDIO_P50)) {
        compare::target(
            &mut md,
            &mut targets_json,
            (
                &format!("telemetry: stdio sequential p50 ≤ {TELEMETRY_LIMIT}× no layer"),
                "telemetry stdio sequential p50 <= 1.15x no layer".into(),
            ),
            era,
            figures.ratios(STDIO_P50, e, TELEMETRY, NO_LAYER),
            |m| m <= TELEMETRY_LIMIT,
        );
    }
    for (e, (_, era)) in ERAS.iter().enumerate().filter(|_| figures.measured(HTTP_16)) {
        compare::target(
            &mut md,
            &mut targets_json,
            (
                &format!(
                    "telemetry: HTTP 16 clients ≥ 1/{TELEMETRY_LIMIT} ({:.3}×) of no layer",
                    1.0 / TELEMETRY_LIMIT
                ),
                "telemetry HTTP 16 clients >= 1/1.15 of no layer".into(),
            ),
            era,
            figures.ratios(HTTP_16, e, TELEMETRY, NO_LAYER),
            |m| m >= 1.0 / TELEMETRY_LIMIT,
        );
    }
    for f in figures.shown() {
        let (name, noise) = (FIGURES[f].0, spread(figures, f));
        for (e, (_, era)) in ERAS.iter().enumerate() {
            let r = figures.ratios(f, e, NO_LAYER, BEFORE);
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
        "polling_clients": crate::POLL.load(std::sync::atomic::Ordering::Relaxed),
        "seconds": run.took,
        "stdio_processes": run.stdio_processes,
        "machine": machine.json(),
        "variants": variants.iter().map(|v| json!({"name": v.name, "binary": v.binary.display().to_string(),
            "args": v.args, "env": v.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "rows": compare::rows_json(variants, figures),
        "targets": targets_json,
        "exports": exports_json,
    });
    compare::write_files(out, &md, &document);
}
