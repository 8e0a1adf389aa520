use mcp_tools::{Args, tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Query {
    text: String,
}

/// Search.
#[tool]
async fn search(Args(query): Args<Query>, limit: u32) -> String {
    format!("{} {limit}", query.text)
}

fn main() {}
