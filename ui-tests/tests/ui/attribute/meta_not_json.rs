use mcp_tools::tool;

/// Say hello.
#[tool(meta = std::time::Duration::from_secs(1))]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
