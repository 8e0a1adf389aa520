use mcp_tools::tool;

/// Reads the notes.
#[tool(annotations(readOnlyHint, idempotent_hint = true, destructiveHint = false))]
async fn read_notes() -> String {
    String::new()
}

/// Lists the notes.
#[tool(read_only, openWorldHint = false)]
async fn list_notes() -> String {
    String::new()
}

fn main() {}
