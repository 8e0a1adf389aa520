use mcp_tools::resource;

/// One user's profile.
#[resource(uri = "users://{id}/profile")]
async fn profile(id: &str) -> String {
    id.to_owned()
}

fn main() {}
