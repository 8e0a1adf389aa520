use mcp_tools::resource;

const NOTES: &str = "docs://notes";

/// The release notes.
#[resource(uri = NOTES)]
async fn notes() -> String {
    "# 1.0".to_owned()
}

fn main() {}
