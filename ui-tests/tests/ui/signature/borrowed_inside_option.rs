use mcp_tools::tool;

/// Say hello.
#[tool]
async fn hello(name: Option<&str>) -> String {
    format!("Hello, {}!", name.unwrap_or("world"))
}

fn main() {}
