use mcp_tools::prompt;

/// Prompts.
#[prompt]
mod prompts {}

fn main() {}
