use mcp_tools::{Args, tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Query {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Paging {
    limit: u32,
}

/// Search.
#[tool]
async fn search(Args(query): Args<Query>, Args(paging): Args<Paging>) -> String {
    format!("{} {}", query.text, paging.limit)
}

fn main() {}
