use mcp_tools::resource;

/// The release notes.
#[resource(uri = "docs://notes")]
struct Notes {
    text: String,
}

fn main() {}
