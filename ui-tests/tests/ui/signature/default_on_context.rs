use mcp_tools::{Context, tool};

/// Say hello.
#[tool]
async fn hello(name: String, #[tool(default = None)] ctx: Context) -> String {
    let _ = ctx;
    format!("Hello, {name}!")
}

fn main() {}
