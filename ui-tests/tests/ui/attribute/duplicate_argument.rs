use mcp_tools::tool;

/// Say hello.
#[tool(name = "hello", title = "Hello", name = "greet")]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
