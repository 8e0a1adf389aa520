use mcp_tools::tool;

/// Search.
#[tool]
async fn search(query: String, #[tool(default)] limit: u32) -> String {
    format!("{query} {limit}")
}

fn main() {}
