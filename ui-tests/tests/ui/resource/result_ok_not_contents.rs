use mcp_tools::{ToolError, resource};

/// The number of users.
#[resource(uri = "stats://users")]
async fn user_count() -> Result<u64, ToolError> {
    Ok(42)
}

fn main() {}
