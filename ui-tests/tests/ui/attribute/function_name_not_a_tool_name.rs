use mcp_tools::tool;

/// Make coffee.
#[tool]
async fn café(cups: u8) -> String {
    "☕".repeat(cups.into())
}

fn main() {}
