//! The table: one row per measurement, one column per server, the median of the runs, and each
//! figure's ratio to the floor's in the same run. Written as markdown and JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

/// What a column's name ends with when its server was sent 2026-07-28 requests.
pub const STATELESS_SUFFIX: &str = " (2026-07-28)";
/// What a column's name ends with when its server was sent 2025-11-25 requests carrying the
/// bytes of the 2026-07-28 envelope (`Era::HandshakeSameBytes`).
pub const SAME_BYTES_SUFFIX: &str = " (2025-11-25, same bytes)";

#[derive(Clone, Copy)]
pub enum Figure {
    Micros(Duration),
    Millis(Duration),
    Rate(f64),
    /// KiB, shown in MiB.
    Mib(u64),
}

impl Figure {
    fn value(self) -> f64 {
        match self {
            Figure::Micros(d) => d.as_secs_f64() * 1e6,
            Figure::Millis(d) => d.as_secs_f64() * 1e3,
            Figure::Rate(r) => r,
            Figure::Mib(kib) => kib as f64 / 1024.0,
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Figure::Micros(_) => "µs",
            Figure::Millis(_) => "ms",
            Figure::Rate(_) => "/s",
            Figure::Mib(_) => "MiB",
        }
    }
}

pub struct Report {
    runs: usize,
    /// Row → column → samples (one per run).
    rows: Vec<(String, BTreeMap<String, Vec<Figure>>)>,
    columns: Vec<String>,
}

impl Report {
    pub fn new(runs: usize) -> Report {
        Report { runs, rows: Vec::new(), columns: Vec::new() }
    }

    pub fn add(&mut self, row: &str, column: &str, figure: Figure) {
        if !self.columns.iter().any(|c| c == column) {
            self.columns.push(column.to_owned());
        }
        let index = match self.rows.iter().position(|(r, _)| r == row) {
            Some(i) => i,
            None => {
                self.rows.push((row.to_owned(), BTreeMap::new()));
                self.rows.len() - 1
            }
        };
        self.rows[index].1.entry(column.to_owned()).or_default().push(figure);
    }

    /// The median of a cell, with its unit.
    fn median(samples: &[Figure]) -> (f64, &'static str) {
        let mut values: Vec<f64> = samples.iter().map(|f| f.value()).collect();
        values.sort_by(f64::total_cmp);
        (values[values.len() / 2], samples[0].unit())
    }

    /// Writes the table (markdown, printed too) and the JSON. Each figure's ratio is to the
    /// floor's in the same run: the floor fed 2026-07-28 requests for a column whose requests
    /// carry the envelope.
    pub fn write(&self, prefix: &Path) {
        let mut md = String::new();
        let _ = writeln!(md, "| measurement | {} |", self.columns.join(" | "));
        let _ = writeln!(md, "|---|{}", "---|".repeat(self.columns.len()));
        let mut rows_json = Vec::new();
        for (row, cells) in &self.rows {
            let median_of = |column: &str| cells.get(column).map(|s| Self::median(s).0);
            let mut line = format!("| {row} |");
            let mut cells_json = serde_json::Map::new();
            for column in &self.columns {
                match cells.get(column) {
                    Some(samples) => {
                        let (value, unit) = Self::median(samples);
                        let shown =
                            if value >= 100.0 { format!("{value:.0}") } else { format!("{value:.1}") };
                        // A column of requests with the envelope is compared with the floor
                        // fed the same requests, when the run has it.
                        let floor =
                            if column.ends_with(STATELESS_SUFFIX) || column.ends_with(SAME_BYTES_SUFFIX) {
                                median_of(&format!("floor{STATELESS_SUFFIX}")).or(median_of("floor"))
                            } else {
                                median_of("floor")
                            };
                        let ratio = match floor {
                            Some(floor) if !column.starts_with("floor") && floor > 0.0 => {
                                let r = value / floor;
                                cells_json.insert(format!("{column} / floor"), json!(r));
                                format!(" ({r:.2}×)")
                            }
                            _ => String::new(),
                        };
                        let _ = write!(line, " {shown} {unit}{ratio} |");
                        cells_json.insert(
                            column.clone(),
                            json!({"median": value, "unit": unit,
                            "runs": samples.iter().map(|f| f.value()).collect::<Vec<_>>()}),
                        );
                    }
                    None => line.push_str(" |"),
                }
            }
            let _ = writeln!(md, "{line}");
            rows_json.push(json!({"measurement": row, "cells": cells_json}));
        }
        print!("{md}");
        let with = |ext: &str| prefix.with_extension(ext);
        if let Some(dir) = with("md").parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).expect("the report's folder");
        }
        std::fs::write(with("table.md"), &md).expect("write the markdown table");
        let document = json!({"runs": self.runs, "columns": self.columns, "rows": rows_json});
        std::fs::write(with("json"), serde_json::to_string_pretty(&document).unwrap() + "\n")
            .expect("write JSON");
        eprintln!("mcp-bench: wrote {} and {}", with("table.md").display(), with("json").display());
    }
}
