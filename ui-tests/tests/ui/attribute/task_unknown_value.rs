use mcp_tools::tool;

/// Index everything (a long job).
#[tool(task = "optonal")]
async fn index_all() -> String {
    "done".into()
}

/// Index again.
#[tool(task = true)]
async fn index_again() -> String {
    "done".into()
}

fn main() {}
