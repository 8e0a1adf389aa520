use mcp_tools::{prompt, resource, tool};

/// Writes a note.
#[tool(scopes = ["notes write", ""])]
async fn write_note() -> String {
    "saved".into()
}

/// Deletes a note.
#[tool(scopes = [])]
async fn delete_note() -> String {
    "deleted".into()
}

/// The audit log.
#[resource(uri = "notes://audit", scopes = "notes:admin")]
async fn audit() -> String {
    String::new()
}

/// Review the notes.
#[prompt(scopes = ["notes:\"read\""])]
async fn review() -> String {
    String::new()
}

fn main() {}
