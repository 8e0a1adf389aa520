use mcp_tools::tool;
use serde::Serialize;

#[derive(Serialize)]
struct Point {
    x: f64,
    y: f64,
}

/// The origin.
#[tool]
async fn origin() -> Result<Point, mcp_tools::ToolError> {
    Ok(Point { x: 0.0, y: 0.0 })
}

fn main() {}
