use mcp_tools::tool;

/// The user's own type, named like `mcp_tools::Context`.
struct Context {
    user: String,
}

/// Say hello.
#[tool]
async fn hello(ctx: Context) -> String {
    format!("Hello, {}!", ctx.user)
}

fn main() {}
