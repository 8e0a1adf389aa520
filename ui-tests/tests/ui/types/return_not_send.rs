use std::rc::Rc;

use mcp_tools::tool;

/// Say hello.
#[tool]
fn hello(name: String) -> Rc<String> {
    Rc::new(format!("Hello, {name}!"))
}

fn main() {}
