use mcp_tools::tool;

struct Point {
    x: f64,
    y: f64,
}

/// The origin.
#[tool]
async fn origin() -> Point {
    Point { x: 0.0, y: 0.0 }
}

fn main() {}
