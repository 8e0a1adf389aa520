use mcp_tools::tool;

/// A list of tools.
#[tool]
mod tools {}

fn main() {}
