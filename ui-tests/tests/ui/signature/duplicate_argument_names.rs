use mcp_tools::tool;

/// Copy a file.
#[tool]
async fn copy(from: String, #[tool(rename = "from")] to: String) -> String {
    format!("{from} -> {to}")
}

fn main() {}
