use mcp_tools::tool;

/// Say hello.
#[tool]
async fn hello(name: impl Into<String>) -> String {
    format!("Hello, {}!", name.into())
}

fn main() {}
