use mcp_tools::tool;

/// Waits a while.
#[tool(timeout = "soon")]
async fn wait_a() -> String {
    "done".into()
}

/// Waits no time at all.
#[tool(timeout = "0s")]
async fn wait_b() -> String {
    "done".into()
}

/// Waits as long as a number says.
#[tool(timeout = 30)]
async fn wait_c() -> String {
    "done".into()
}

fn main() {}
