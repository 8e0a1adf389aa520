use mcp_tools::tool;

struct Point {
    x: f64,
    y: f64,
}

/// The corners of the unit square.
#[tool]
fn corners() -> Vec<Point> {
    vec![Point { x: 0.0, y: 0.0 }, Point { x: 1.0, y: 1.0 }]
}

fn main() {}
