use std::rc::Rc;

use mcp_tools::tool;

async fn fetch(name: &str) -> String {
    name.to_owned()
}

/// Say hello.
#[tool]
async fn hello(name: String) -> String {
    let shared = Rc::new(name);
    let greeting = fetch(&shared).await;
    format!("Hello, {greeting}!")
}

fn main() {}
