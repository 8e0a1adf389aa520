use mcp_tools::tool;

/// Delete a file.
#[tool(annotations(read_only, destructive))]
async fn delete_file(path: String) -> String {
    path
}

fn main() {}
