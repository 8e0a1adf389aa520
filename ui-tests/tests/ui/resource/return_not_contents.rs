use mcp_tools::resource;

/// The number of users.
#[resource(uri = "stats://users")]
async fn user_count() -> u64 {
    42
}

fn main() {}
