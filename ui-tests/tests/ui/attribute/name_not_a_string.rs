use mcp_tools::tool;

/// Say hello.
#[tool(name = 5)]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
