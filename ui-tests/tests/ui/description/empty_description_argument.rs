use mcp_tools::tool;

#[tool(description = "")]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
