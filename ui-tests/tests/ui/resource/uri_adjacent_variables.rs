use mcp_tools::resource;

/// A version.
#[resource(uri = "versions://{major}{minor}")]
async fn version(major: u32, minor: u32) -> String {
    format!("{major}.{minor}")
}

fn main() {}
