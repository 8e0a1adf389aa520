use mcp_tools::tool;

/// Say hello.
#[tool]
async fn hello(#[tool(description = "Who to greet.")] name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
