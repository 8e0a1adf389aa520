use mcp_tools::tool;

#[tool]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
