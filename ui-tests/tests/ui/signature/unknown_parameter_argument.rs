use mcp_tools::tool;

/// Search.
#[tool]
async fn search(query: String, #[tool(defualt = 10)] limit: u32) -> String {
    format!("{query} {limit}")
}

fn main() {}
