//! The two-tool server of the performance suite (`scripts/bench-perf.sh`, `bench/perf.md`): the
//! same `add` and `echo` every server in the comparison exposes, and nothing else.
//!
//! ```sh
//! cargo run --release --example bench_server                      # stdio
//! cargo run --release --example bench_server -- --http 127.0.0.1:8080
//! ```
//!
//! What the middleware benchmark (`scripts/bench-middleware.sh`, `bench/middleware.md`) varies,
//! and nothing else does:
//!
//! * `BENCH_LAYER=noop`: every call goes through one pass-through tower layer (a `service_fn`
//!   that forwards the call to the service it wraps), so the pipeline's own cost shows. Unset,
//!   the server is built exactly as `mcp_tools::main!()` builds it: no layer, calls run the tool
//!   directly.
//! * telemetry: `--otel`, or `OTEL_EXPORTER_OTLP_ENDPOINT` set, as in every server's command line
//!   (the `otel` feature of mcp-tools, which this package's examples are built with).

use std::process::ExitCode;

use mcp_tools::middleware::{ToolCall, ToolService};
use mcp_tools::{Server, tool};

// What `mcp_tools::main!()` writes in this package's binaries (its library, the test harness,
// holds no tools).
#[allow(unused_extern_crates)]
extern crate harness as _;

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

fn main() -> ExitCode {
    let builder = Server::builder().name(env!("CARGO_PKG_NAME")).version(env!("CARGO_PKG_VERSION"));
    let builder = match std::env::var("BENCH_LAYER").as_deref() {
        Err(_) | Ok("") => builder,
        Ok("noop") => builder.layer(tower::layer::layer_fn(|inner: ToolService| {
            tower::service_fn(move |call: ToolCall| tower::ServiceExt::oneshot(inner.clone(), call))
        })),
        Ok(other) => {
            eprintln!("bench_server: BENCH_LAYER={other}: only `noop` is known");
            return ExitCode::from(2);
        }
    };
    builder.run()
}
