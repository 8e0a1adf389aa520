use mcp_tools::prompt;

/// A number.
#[prompt]
async fn number() -> u32 {
    42
}

fn main() {}
