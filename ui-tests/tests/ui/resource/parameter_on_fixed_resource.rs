use mcp_tools::resource;

/// The release notes.
#[resource(uri = "docs://notes")]
async fn notes(version: String) -> String {
    version
}

fn main() {}
