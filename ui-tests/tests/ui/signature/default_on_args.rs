use mcp_tools::{Args, tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Default, Deserialize, JsonSchema)]
struct Query {
    text: String,
}

/// Search.
#[tool]
async fn search(#[tool(default = Query::default())] Args(query): Args<Query>) -> String {
    query.text
}

fn main() {}
