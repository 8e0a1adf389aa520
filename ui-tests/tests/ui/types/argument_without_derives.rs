use mcp_tools::tool;

struct Point {
    x: f64,
    y: f64,
}

/// Distance from the origin.
#[tool]
async fn norm(point: Point) -> f64 {
    (point.x * point.x + point.y * point.y).sqrt()
}

fn main() {}
