use mcp_tools::resource;

/// One user's profile.
#[resource(uri = "users://{id}/profile")]
async fn profile(id: String, ids: String) -> String {
    id + &ids
}

fn main() {}
