use mcp_tools::tool;

/// Parse a number.
#[tool]
async fn parse(text: String) -> Result<i64, Box<dyn std::error::Error>> {
    Ok(text.parse()?)
}

fn main() {}
