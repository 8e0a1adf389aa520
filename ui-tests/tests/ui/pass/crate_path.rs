//! `crate = "..."`: a library re-exports mcp-tools, and its users name it through that path.

mod framework {
    pub use ::mcp_tools;
}

use framework::mcp_tools::{Context, Server, tool};

/// Say hello.
#[tool(crate = "framework::mcp_tools")]
async fn hello(name: String, ctx: Context) -> String {
    format!("Hello, {name}, from {}!", ctx.tool_name())
}

mod nested {
    use crate::framework::mcp_tools::tool;

    /// Say goodbye.
    #[tool(crate = "crate::framework::mcp_tools")]
    pub fn goodbye(name: Option<String>) -> String {
        format!("Goodbye, {}!", name.unwrap_or_default())
    }
}

fn main() {
    let server = Server::builder().build().unwrap();
    assert_eq!(server.tool_names(), ["goodbye", "hello"]);
    let _ = nested::goodbye;
}
