//! The two-tool server of the performance suite (`scripts/bench-perf.sh`, `bench/perf.md`): the
//! same `add` and `echo` every server in the comparison exposes, and nothing else.
//!
//! ```sh
//! cargo run --release --example bench_server                      # stdio
//! cargo run --release --example bench_server -- --http 127.0.0.1:8080
//! ```

use mcp_tools::tool;

/// Add two numbers.
#[tool(annotations(read_only, idempotent))]
async fn add(a: f64, b: f64) -> String {
    (a + b).to_string()
}

/// Echo a text back.
#[tool(annotations(read_only, idempotent))]
async fn echo(text: String) -> String {
    text
}

mcp_tools::main!();
