use mcp_tools::tool;
use schemars::JsonSchema;
use serde::Serialize;

/// Not `std::result::Result`, only named like it.
#[derive(Serialize, JsonSchema)]
struct Result {
    passed: bool,
}

/// Run the checks.
#[tool]
async fn check() -> Result {
    Result { passed: true }
}

fn main() {}
