use mcp_tools::resource;

/// A file.
#[resource(uri = "files://{path}")]
fn file(path: String) -> Result<String, String> {
    std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))
}

fn main() {}
