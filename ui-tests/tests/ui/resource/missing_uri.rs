use mcp_tools::resource;

/// The release notes.
#[resource(name = "notes", mime_type = "text/markdown")]
async fn notes() -> String {
    "# 1.0".to_owned()
}

fn main() {}
