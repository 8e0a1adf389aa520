use mcp_tools::tool;

/// Say hello.
#[tool(tags = ["greetings", ""])]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
