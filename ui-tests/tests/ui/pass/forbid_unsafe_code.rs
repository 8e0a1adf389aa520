//! A crate that forbids unsafe code can still declare tools.

#![forbid(unsafe_code)]

use mcp_tools::tool;

/// Say hello.
#[tool]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {
    let server = mcp_tools::Server::builder().build().unwrap();
    assert_eq!(server.tool_names(), ["hello"]);
}
