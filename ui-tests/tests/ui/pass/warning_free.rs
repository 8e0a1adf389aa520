//! The expansion is warning-free under strict lints, and the function stays usable as written.

#![deny(warnings, missing_docs, unused, unused_qualifications, unused_results, rust_2018_idioms)]
#![deny(unreachable_pub, single_use_lifetimes, trivial_casts, trivial_numeric_casts)]
#![deny(elided_lifetimes_in_paths, missing_debug_implementations, non_ascii_idents)]

use mcp_tools::{Context, State, ToolError, tool};

/// Shared state.
#[derive(Debug, Default)]
pub struct Greeting {
    /// The word.
    pub word: String,
}

/// Say hello.
#[tool(annotations(read_only))]
pub async fn hello(
    /// Who to greet.
    name: String,
    /// How many times.
    #[tool(default = 1)]
    times: usize,
    greeting: State<Greeting>,
    ctx: Context,
) -> Result<String, ToolError> {
    let _ = ctx.tool_name();
    Ok(format!("{} {name}", greeting.word).repeat(times))
}

/// A private, synchronous tool without arguments.
#[tool]
fn ping() -> &'static str {
    "pong"
}

/// A private tool the crate itself never calls: the registration uses it, so no `dead_code`.
#[tool(annotations(idempotent))]
fn version() -> u32 {
    1
}

fn main() {
    let server = mcp_tools::Server::builder().state(Greeting { word: "Hello".to_owned() }).build().unwrap();
    assert_eq!(server.tool_names(), ["hello", "ping", "version"]);
    assert_eq!(ping(), "pong");
}
