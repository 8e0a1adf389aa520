use mcp_tools::resource;

struct UserId(u64);

/// One user's profile.
#[resource(uri = "users://{id}/profile")]
async fn profile(id: UserId) -> String {
    id.0.to_string()
}

fn main() {}
