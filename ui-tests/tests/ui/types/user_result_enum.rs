use mcp_tools::tool;
use schemars::JsonSchema;
use serde::Serialize;

/// Not `std::result::Result`, only named like it.
#[derive(Serialize, JsonSchema)]
enum Result<T> {
    Passed(T),
    Failed,
}

/// Run the checks.
#[tool]
async fn check() -> Result<u32> {
    Result::Passed(3)
}

fn main() {}
