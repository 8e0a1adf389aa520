use mcp_tools::tool;

/// Say hello.
#[tool]
async fn hello(name: &str) -> String {
    format!("Hello, {name}!")
}

fn main() {}
