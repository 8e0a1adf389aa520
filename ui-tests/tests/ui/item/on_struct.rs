use mcp_tools::tool;

/// A greeting.
#[tool]
struct Hello {
    name: String,
}

fn main() {}
