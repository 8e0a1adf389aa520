use mcp_tools::tool;

/// Say hello.
#[tool(version = "2")]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
