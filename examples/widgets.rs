//! Two MCP Apps views: a chart of structured data, and a form that calls an app-only tool back
//! through the host.
//!
//! ```sh
//! cargo run --example widgets -- --http 127.0.0.1:8080   # then add it to an MCP Apps host
//! ```

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_tools::{Server, State, ToolError, Widget, tool};
use schemars::JsonSchema;
use serde::Serialize;

/// One day of the forecast.
#[derive(Serialize, JsonSchema)]
struct Day {
    day: String,
    high: i32,
}

/// What the chart view draws.
#[derive(Serialize, JsonSchema)]
struct Forecast {
    city: String,
    days: Vec<Day>,
}

/// Show the week's high temperatures for a city as a chart.
#[tool(
    annotations(read_only, open_world = false),
    widget(
        name = "temperature-chart",
        html = "examples/widgets/chart.html",
        invoking = "Drawing the chart...",
        invoked = "Chart ready",
        prefers_border = true
    )
)]
async fn show_forecast(
    /// The city.
    city: String,
) -> Widget<Forecast> {
    let days = ["Mon", "Tue", "Wed", "Thu", "Fri"];
    let seed = city.bytes().map(u32::from).sum::<u32>();
    let forecast = Forecast {
        city: city.clone(),
        days: days
            .iter()
            .enumerate()
            .map(|(i, d)| Day { day: (*d).to_owned(), high: 12 + ((seed as usize + i * 7) % 15) as i32 })
            .collect(),
    };
    let summary =
        forecast.days.iter().map(|d| format!("{} {} °C", d.day, d.high)).collect::<Vec<_>>().join(", ");
    Widget::new(forecast).text(format!("Highs in {city}: {summary}."))
}

/// A draft note the form view shows.
#[derive(Serialize, JsonSchema)]
struct Draft {
    title: String,
    body: String,
}

/// Open a form to write a note, prefilled with a title.
#[tool(widget(name = "note-form", html = "examples/widgets/note-form.html"))]
async fn compose_note(
    /// A title to start with.
    #[tool(default = String::new())]
    title: String,
) -> Widget<Draft> {
    Widget::new(Draft { title, body: String::new() })
}

#[derive(Default)]
struct Notes {
    next: AtomicU64,
    saved: Mutex<Vec<(u64, String, String)>>,
}

/// The id of a saved note.
#[derive(Serialize, JsonSchema)]
struct Saved {
    id: u64,
}

/// Save a note written in the form view (the view calls this; the model does not see it).
#[tool(widget(name = "note-form", html = "examples/widgets/note-form.html", visibility = ["app"]))]
async fn save_note(title: String, body: String, notes: State<Notes>) -> Result<Saved, ToolError> {
    if title.trim().is_empty() {
        return Err(ToolError::new("a note needs a title"));
    }
    let id = notes.next.fetch_add(1, Ordering::Relaxed) + 1;
    notes.saved.lock().expect("notes lock").push((id, title, body));
    Ok(Saved { id })
}

fn main() -> std::process::ExitCode {
    Server::builder().name("widgets").version(env!("CARGO_PKG_VERSION")).state(Notes::default()).run()
}
