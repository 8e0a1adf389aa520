use mcp_tools::tool;

/// Parse a number.
#[tool]
async fn parse(text: String) -> Result<i64, String> {
    text.parse().map_err(|_| format!("not a number: {text}"))
}

fn main() {}
