use mcp_tools::tool;

/// Show the weather card.
#[tool(widget = "weather-card")]
async fn weather(city: String) -> String {
    city
}

/// Show the chart.
#[tool(widget(name = "chart", html = "views/does-not-exist.html", invoking = "This status line is much too long to be shown by any host at all, so the macro refuses it"))]
async fn chart(city: String) -> String {
    city
}

/// A view name that cannot be a URI.
#[tool(widget = "my view")]
async fn spaced(city: String) -> String {
    city
}

fn main() {}
