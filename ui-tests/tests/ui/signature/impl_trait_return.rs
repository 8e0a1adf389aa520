use mcp_tools::tool;

/// Say hello.
#[tool]
async fn hello(name: String) -> impl std::fmt::Display {
    format!("Hello, {name}!")
}

fn main() {}
