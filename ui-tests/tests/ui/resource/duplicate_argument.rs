use mcp_tools::resource;

/// The release notes.
#[resource(uri = "docs://notes", uri = "docs://release-notes")]
async fn notes() -> String {
    "# 1.0".to_owned()
}

fn main() {}
