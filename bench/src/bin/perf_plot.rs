//! The plot of a performance report: each framework's median as a multiple of the hand-written
//! floor's, measurement by measurement (`scripts/bench-perf.sh` writes `bench/perf.svg` from
//! `bench/perf-pinned.json`).
//!
//! ```sh
//! cargo run --release -p mcp-tools-bench --bin perf-plot -- bench/perf-pinned.json bench/perf.svg
//! ```

use plotters::prelude::*;
use serde_json::Value;

/// One group of bars: a measurement and each framework's ratio to the floor.
struct Group {
    measurement: String,
    ratios: Vec<(usize, f64)>,
}

fn groups(report: &Value) -> Result<(Vec<String>, Vec<Group>), String> {
    let columns: Vec<String> = report["columns"]
        .as_array()
        .ok_or("no `columns`")?
        .iter()
        .filter_map(Value::as_str)
        .filter(|c| *c != "floor")
        .map(str::to_owned)
        .collect();
    let mut out = Vec::new();
    for row in report["rows"].as_array().ok_or("no `rows`")? {
        let cells = &row["cells"];
        let ratios: Vec<(usize, f64)> = columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((i, cells[format!("{c} / floor")].as_f64()?)))
            .collect();
        if !ratios.is_empty() {
            let measurement = row["measurement"].as_str().unwrap_or("?").to_owned();
            out.push(Group { measurement, ratios });
        }
    }
    if out.is_empty() {
        return Err("no measurement has ratios to the floor".into());
    }
    Ok((columns, out))
}

fn plot(report: &Value, out: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (columns, groups) = groups(report)?;
    let top = groups.iter().flat_map(|g| g.ratios.iter().map(|r| r.1)).fold(1.0f64, f64::max) * 1.15;
    let width = 160 * groups.len() as u32 + 120;
    let root = SVGBackend::new(out, (width.max(800), 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Each framework's median as a multiple of the hand-written floor's (latency: lower is better; calls/s: higher is better)",
            ("sans-serif", 16),
        )
        .margin(16)
        .x_label_area_size(70)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..groups.len() as f64, 0f64..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("× the floor")
        .y_label_formatter(&|y| format!("{y:.1}"))
        .draw()?;
    let slot = 0.8 / columns.len() as f64;
    for (g, group) in groups.iter().enumerate() {
        for &(c, ratio) in &group.ratios {
            let x0 = g as f64 + 0.1 + c as f64 * slot;
            let color = Palette99::pick(c).filled();
            chart
                .draw_series(std::iter::once(Rectangle::new([(x0, 0.0), (x0 + slot * 0.9, ratio)], color)))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{ratio:.2}"),
                (x0, ratio + top * 0.01),
                ("sans-serif", 10),
            )))?;
        }
        // The measurement's name under its group, in lines of at most ~20 characters.
        let (x, y) = chart.backend_coord(&(g as f64 + 0.1, 0.0));
        let mut lines: Vec<String> = vec![String::new()];
        for word in group.measurement.split(' ') {
            let line = lines.last_mut().expect("one line");
            if !line.is_empty() && line.len() + word.len() > 20 {
                lines.push(word.to_owned());
            } else {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
        }
        for (i, line) in lines.iter().enumerate() {
            root.draw(&Text::new(line.clone(), (x, y + 8 + 15 * i as i32), ("sans-serif", 12)))?;
        }
    }
    chart.draw_series(LineSeries::new([(0.0, 1.0), (groups.len() as f64, 1.0)], BLACK.stroke_width(1)))?;
    for (c, column) in columns.iter().enumerate() {
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
            .label(column.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], Palette99::pick(c).filled()));
    }
    chart.configure_series_labels().border_style(BLACK).background_style(WHITE.mix(0.9)).draw()?;
    root.present()?;
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: perf-plot REPORT.json OUT.svg");
        return std::process::ExitCode::from(2);
    };
    let report = std::fs::read_to_string(input)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()));
    match report.map_err(Into::into).and_then(|r| plot(&r, output)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perf-plot: {input}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
