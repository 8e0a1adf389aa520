use mcp_tools::tool;

#[derive(Debug)]
struct ParseFailure;

/// Parse a number.
#[tool]
async fn parse(text: String) -> Result<i64, ParseFailure> {
    text.parse().map_err(|_| ParseFailure)
}

fn main() {}
