use mcp_tools::tool;

/// Say hello.
#[tool(crate = "my crate")]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
