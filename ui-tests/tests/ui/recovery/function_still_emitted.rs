use mcp_tools::tool;

// The attribute is wrong (no description), but `hello` is still emitted as written: the caller
// below type-checks, and the mistake in its body (a `u32` passed as a `String`) is still found.
#[tool]
async fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

async fn greet_twice() -> String {
    let first: String = hello("Ada".to_owned()).await;
    let second: String = hello(7_u32).await;
    first + &second
}

fn main() {
    let _ = greet_twice();
}
