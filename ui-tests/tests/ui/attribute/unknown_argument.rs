use mcp_tools::tool;

/// Say hello.
#[tool(nme = "hello")]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
