use mcp_tools::resource;

/// One user's profile.
#[resource(uri = "users://{id/profile")]
async fn profile(id: String) -> String {
    id
}

fn main() {}
