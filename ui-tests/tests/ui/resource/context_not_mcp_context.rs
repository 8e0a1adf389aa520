use mcp_tools::resource;

struct Context {
    user: String,
}

/// The current user.
#[resource(uri = "session://user")]
async fn user(ctx: Context) -> String {
    ctx.user
}

fn main() {}
