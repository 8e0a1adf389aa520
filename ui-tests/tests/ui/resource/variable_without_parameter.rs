use mcp_tools::resource;

/// One user's post.
#[resource(uri = "users://{user}/posts/{post}")]
async fn post(user: String) -> String {
    user
}

fn main() {}
