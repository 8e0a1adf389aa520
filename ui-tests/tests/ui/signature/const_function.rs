use mcp_tools::tool;

/// The answer.
#[tool]
const fn answer() -> u32 {
    42
}

fn main() {}
