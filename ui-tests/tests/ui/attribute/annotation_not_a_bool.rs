use mcp_tools::tool;

/// Delete a file.
#[tool(annotations(destructive = "yes"))]
async fn delete_file(path: String) -> String {
    path
}

fn main() {}
