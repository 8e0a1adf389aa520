use mcp_tools::tool;

/// Show a chart.
#[tool(widget = "chart")]
async fn chart(series: Vec<f64>) -> Vec<f64> {
    series
}

fn main() {}
