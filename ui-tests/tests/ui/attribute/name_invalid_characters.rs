use mcp_tools::tool;

/// Say hello.
#[tool(name = "say hello")]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
