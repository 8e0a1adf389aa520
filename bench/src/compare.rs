//! What `--middleware` (`middleware.rs`) and `--gateway` (`gateway.rs`) share: variants of the
//! suite's two-tool server measured side by side, as the suite measures it (same requests, sizes,
//! rounds and slices: see `main.rs`), each sent 2025-11-25 and 2026-07-28 requests. A round
//! starts every variant, then measures them slice by slice, each in turn; every ratio is taken
//! within a round, and the median of the rounds' ratios is the figure, as
//! `scripts/perf-rounds.py` does for the suite.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{Burst, Call, Era, Samples, Sizes, http, stdio, turns};

pub(crate) const ERAS: [(Era, &str); 2] = [(Era::Handshake, "2025-11-25"), (Era::Stateless, "2026-07-28")];

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Micros,
    Millis,
    Rate,
    Mib,
}

impl Unit {
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Unit::Micros => "µs",
            Unit::Millis => "ms",
            Unit::Rate => "/s",
            Unit::Mib => "MiB",
        }
    }
}

/// The figures measured, in table order.
pub(crate) const FIGURES: [(&str, Unit); 8] = [
    ("stdio sequential p50", Unit::Micros),
    ("stdio sequential p99", Unit::Micros),
    ("stdio 32 in flight calls/s", Unit::Rate),
    ("RSS after stdio load (peak)", Unit::Mib),
    ("HTTP 1 client p50", Unit::Micros),
    ("HTTP 1 client p99", Unit::Micros),
    ("HTTP 16 clients calls/s", Unit::Rate),
    ("stdio start-up to first answer", Unit::Millis),
];
pub(crate) const STDIO_P50: usize = 0;
pub(crate) const STDIO_P99: usize = 1;
const STDIO_32: usize = 2;
const STDIO_RSS: usize = 3;
pub(crate) const HTTP_P50: usize = 4;
pub(crate) const HTTP_P99: usize = 5;
pub(crate) const HTTP_16: usize = 6;
const STARTUP: usize = 7;

/// A server of the comparison.
pub(crate) struct Variant {
    pub(crate) name: &'static str,
    pub(crate) binary: PathBuf,
    /// Its arguments (over HTTP, followed by `--http ADDR`).
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    /// What its calls are (the suite's `add`, or that `add` reached through a gateway).
    pub(crate) call: Call,
}

impl Variant {
    pub(crate) fn new(name: &'static str, binary: &Path, args: &[&str], call: Call) -> Variant {
        Variant {
            name,
            binary: binary.to_path_buf(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: Vec::new(),
            call,
        }
    }
}

/// Every round's value of every figure: `[figure][era][variant]`.
pub(crate) struct Figures(Vec<Vec<Vec<Vec<f64>>>>);

impl Figures {
    pub(crate) fn new(variants: usize) -> Figures {
        Figures(vec![vec![vec![Vec::new(); variants]; ERAS.len()]; FIGURES.len()])
    }

    /// The rounds' values of one figure, era and variant.
    pub(crate) fn of(&self, figure: usize, era: usize, variant: usize) -> &[f64] {
        &self.0[figure][era][variant]
    }

    fn push(&mut self, figure: usize, era: usize, variant: usize, value: f64) {
        self.0[figure][era][variant].push(value);
    }

    /// Whether a figure was measured (not left out by `--only`).
    pub(crate) fn measured(&self, figure: usize) -> bool {
        !self.0[figure][0][0].is_empty()
    }

    /// The figures measured, in table order.
    pub(crate) fn shown(&self) -> Vec<usize> {
        (0..FIGURES.len()).filter(|&f| self.measured(f)).collect()
    }

    /// The per-round ratios `numerator / denominator` of one figure and era.
    pub(crate) fn ratios(&self, figure: usize, era: usize, num: usize, den: usize) -> Vec<f64> {
        let (n, d) = (self.of(figure, era, num), self.of(figure, era, den));
        n.iter().zip(d).map(|(n, d)| n / d).collect()
    }
}

/// One stdio round: every variant in both eras started, warmed up, then measured slice by slice
/// in turn (sequential latency, 32 calls in flight); `ended` sees each server before it ends.
/// Each server's process and calls go to `processes` (to match a profile's files: `--wrap`).
pub(crate) fn stdio_round(
    variants: &[Variant],
    sizes: Sizes,
    round: usize,
    figures: &mut Figures,
    processes: &mut Vec<Value>,
    mut ended: impl FnMut(usize, &stdio::Server),
) {
    let mut servers: Vec<_> = (0..ERAS.len())
        .flat_map(|era| (0..variants.len()).map(move |v| (era, v)))
        .map(|(era, v)| {
            let variant = &variants[v];
            let mut server =
                stdio::Server::start_with_env(&variant.binary, &variant.args, &variant.env, ERAS[era].0);
            server.set_call(variant.call.clone());
            server.sequential(sizes.warmup, 0);
            (era, v, server, Samples::default(), Burst::default())
        })
        .collect();
    for slice in 0..sizes.slices {
        for i in turns(servers.len(), slice) {
            let (_, _, server, sequential, pipelined) = &mut servers[i];
            sequential.add(server.sequential(sizes.warmup / sizes.slices, sizes.sequential / sizes.slices));
            pipelined.add(server.pipelined(sizes.pipelined / sizes.slices, 32));
        }
    }
    for (era, v, server, sequential, pipelined) in servers {
        let seq = sequential.latency();
        figures.push(STDIO_P50, era, v, seq.p50.as_secs_f64() * 1e6);
        figures.push(STDIO_P99, era, v, seq.p99.as_secs_f64() * 1e6);
        figures.push(STDIO_32, era, v, pipelined.rate());
        figures.push(STARTUP, era, v, server.started.as_secs_f64() * 1e3);
        ended(v, &server);
        processes.push(json!({"round": round + 1, "variant": variants[v].name, "requests": ERAS[era].1,
            "pid": server.pid(), "calls": server.requests() - 1}));
        let (_, peak) = server.finish();
        figures.push(STDIO_RSS, era, v, peak as f64 / 1024.0);
    }
}

/// One HTTP round: every variant in both eras started (`ARGS… --http ADDR`), then measured slice
/// by slice in turn (one client sequential, sixteen clients in parallel); `ended` sees each
/// server before it is ended (SIGTERM).
pub(crate) fn http_round(
    variants: &[Variant],
    sizes: Sizes,
    figures: &mut Figures,
    mut ended: impl FnMut(usize, &http::Server),
) {
    let mut servers: Vec<_> = (0..ERAS.len())
        .flat_map(|era| (0..variants.len()).map(move |v| (era, v)))
        .map(|(era, v)| {
            let variant = &variants[v];
            let mut args = variant.args.clone();
            args.push("--http".into());
            let mut server = http::Server::start_with_env(&variant.binary, &args, &variant.env);
            server.set_call(variant.call.clone());
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
        figures.push(HTTP_P50, era, v, seq.p50.as_secs_f64() * 1e6);
        figures.push(HTTP_P99, era, v, seq.p99.as_secs_f64() * 1e6);
        figures.push(HTTP_16, era, v, parallel.rate());
        ended(v, &server);
        drop(server); // SIGTERM: the server stops gracefully (and flushes its telemetry)
    }
}

/// CPU time from `/proc`, in clock ticks: the whole machine's (busy, stolen by the hypervisor,
/// all) and this process's with its ended children (the servers).
#[derive(Clone, Copy, Default)]
pub(crate) struct Cpu {
    busy: u64,
    steal: u64,
    total: u64,
    own: u64,
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

/// What the machine did over a run, in cores (averages): all of its busy time, the driver's and
/// its servers', other processes', the hypervisor's.
pub(crate) struct Machine {
    cores: f64,
    busy: f64,
    own: f64,
    others: f64,
    steal: f64,
}

impl Machine {
    /// Over `cpu` (a [`Cpu::since`]).
    pub(crate) fn of(cpu: &Cpu) -> Machine {
        // The machine's cores (`/proc/stat` counts them all; a pinned driver is allowed only one).
        let cores = std::fs::read_to_string("/proc/stat")
            .unwrap_or_default()
            .lines()
            .filter(|l| l.strip_prefix("cpu").is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit())))
            .count()
            .max(1) as f64;
        let share = |ticks: u64| ticks as f64 / cpu.total.max(1) as f64 * cores;
        let (busy, own, steal) = (share(cpu.busy), share(cpu.own), share(cpu.steal));
        Machine { cores, busy, own, others: (busy - own - steal).max(0.0), steal }
    }

    /// The opening paragraph: how long the run took and what else ran meanwhile; `ours` names
    /// the driver's side ("the driver and the servers").
    pub(crate) fn paragraph(&self, md: &mut String, took: f64, ours: &str) {
        let Machine { cores, own, others, steal, .. } = self;
        let _ = writeln!(
            md,
            "This run took {took:.0} s. Over it, on average, {ours} kept {own:.2} of the {cores:.0} cores \
             busy, other processes {others:.2}, and the hypervisor took {steal:.2} (`/proc/stat`).\n"
        );
    }

    pub(crate) fn json(&self) -> Value {
        json!({"cores": self.cores, "busy_cores": self.busy, "own_cores": self.own,
            "other_cores": self.others, "steal_cores": self.steal})
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

/// A value with its unit, as the tables show it (`–` for one not measured).
pub(crate) fn shown(value: f64, unit: Unit) -> String {
    if value.is_nan() {
        return "–".into();
    }
    let number = if value >= 100.0 { format!("{value:.0}") } else { format!("{value:.1}") };
    format!("{number} {}", unit.symbol())
}

/// Ratios as a list, `1.012, 0.998, …`.
pub(crate) fn list(values: &[f64]) -> String {
    values.iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>().join(", ")
}

/// The medians' table: a row per figure measured and era, a column per variant.
pub(crate) fn medians_table(md: &mut String, variants: &[Variant], figures: &Figures) {
    let _ = writeln!(
        md,
        "| figure | requests | {} |",
        variants.iter().map(|v| v.name).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(md, "|---|---|{}", "---|".repeat(variants.len()));
    for f in figures.shown() {
        let (name, unit) = FIGURES[f];
        for (e, (_, era)) in ERAS.iter().enumerate() {
            let cells: Vec<String> =
                (0..variants.len()).map(|v| shown(median(figures.of(f, e, v)), unit)).collect();
            let _ = writeln!(md, "| {name} | {era} | {} |", cells.join(" | "));
        }
    }
}

/// The ratios' table: a row per ratio `(label, numerator, denominator)` and era, a column per
/// figure measured, each cell the median of the rounds' ratios with their lowest and highest.
pub(crate) fn ratios_table<'a>(
    md: &mut String,
    runs: usize,
    figures: &Figures,
    ratios: impl IntoIterator<Item = &'a (&'a str, usize, usize)>,
) {
    let shown_figures = figures.shown();
    let _ = writeln!(
        md,
        "\nRatios taken within each round: the median of the {runs} rounds' ratios, and in brackets their \
         lowest and highest.\n"
    );
    let _ = writeln!(
        md,
        "| ratio | requests | {} |",
        shown_figures.iter().map(|&f| FIGURES[f].0).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(md, "|---|---|{}", "---|".repeat(shown_figures.len()));
    for &(label, num, den) in ratios {
        for (e, (_, era)) in ERAS.iter().enumerate() {
            let cells: Vec<String> = shown_figures
                .iter()
                .map(|&f| {
                    let r = figures.ratios(f, e, num, den);
                    let lo = r.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    format!("{:.3}× ({lo:.3}–{hi:.3})", median(&r))
                })
                .collect();
            let _ = writeln!(md, "| {label} | {era} | {} |", cells.join(" | "));
        }
    }
}

/// The targets' table's header.
pub(crate) fn targets_header(md: &mut String) {
    let _ = writeln!(md, "\n| target | requests | per round | median | |");
    let _ = writeln!(md, "|---|---|---|---|---|");
}

/// A row of the targets' table, `label` for era `era`: the rounds' ratios, their median and
/// whether `meets` it; and its JSON (`name`), pushed to `json`.
pub(crate) fn target(
    md: &mut String,
    json: &mut Vec<Value>,
    (label, name): (&str, String),
    era: &str,
    rounds: Vec<f64>,
    meets: impl Fn(f64) -> bool,
) {
    let m = median(&rounds);
    let met = meets(m);
    let verdict = if met { "**met**" } else { "**missed**" };
    let _ = writeln!(md, "| {label} | {era} | {} | {m:.3}× | {verdict} |", list(&rounds));
    json.push(json!({"target": name, "era": era, "rounds": rounds, "median": m, "met": met}));
}

/// Every figure's rounds and median, per era and variant, for the JSON.
pub(crate) fn rows_json(variants: &[Variant], figures: &Figures) -> Vec<Value> {
    let mut rows = Vec::new();
    for (f, (name, unit)) in FIGURES.iter().enumerate() {
        for (e, (_, era)) in ERAS.iter().enumerate() {
            let mut cells = serde_json::Map::new();
            for (v, variant) in variants.iter().enumerate() {
                let runs = figures.of(f, e, v);
                cells.insert(variant.name.to_owned(), json!({"median": median(runs), "runs": runs}));
            }
            rows.push(json!({"measurement": name, "requests": era, "unit": unit.symbol(), "cells": cells}));
        }
    }
    rows
}

/// Prints the markdown and writes PREFIX.table.md and PREFIX.json.
pub(crate) fn write_files(out: &Path, md: &str, document: &Value) {
    print!("{md}");
    let with = |ext: &str| out.with_extension(ext);
    if let Some(dir) = with("md").parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).expect("the report's folder");
    }
    std::fs::write(with("table.md"), md).expect("write the markdown tables");
    std::fs::write(with("json"), serde_json::to_string_pretty(document).unwrap() + "\n").expect("write JSON");
    eprintln!("mcp-bench: wrote {} and {}", with("table.md").display(), with("json").display());
}
