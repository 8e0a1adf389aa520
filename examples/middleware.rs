//! Middleware: a layer of your own and the built-in ones around a small inventory server.
//!
//! ```sh
//! cargo run --example middleware -- list
//! cargo run --example middleware -- call stock '{"item":"bolts"}'
//! RUST_LOG=mcp_tools::access=info cargo run --example middleware -- call restock '{"item":"nuts","count":5}'
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 cargo run --example middleware -- --http 127.0.0.1:8080
//! ```
//!
//! * `audit`, a layer of this file: refuses destructive tools to callers without the `admin`
//!   scope (over HTTP with authorization; over stdio the caller is the process owner) and logs
//!   the others.
//! * `AccessLog`: one line per call. `RateLimit`: 120 calls a minute per caller, 20 in a row.
//!   `ResultCache`: `stock` (read-only, idempotent) is answered from a cache for 5 seconds.
//!   `ConcurrencyLimit`: at most two `report`s at once.
//! * `HideInternal`, a list filter: tools whose name starts with `internal_` are listed to
//!   administrators only.
//! * Telemetry: every request is a span when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (or `--otel`).

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use mcp_tools::middleware::{
    AccessLog, ConcurrencyLimit, ListFilter, RateLimit, ResultCache, ToolCall, ToolService, Viewer,
};
use mcp_tools::{Server, State, ToolError, ToolResult, tool};
use serde_json::{Map, Value};
use tower::ServiceExt as _;

/// The stock of each item.
#[derive(Default)]
struct Stock(Mutex<HashMap<String, u64>>);

/// How many of `item` are in stock.
#[tool(annotations(read_only, idempotent))]
async fn stock(item: String, stock: State<Stock>) -> u64 {
    stock.0.lock().expect("stock lock").get(&item).copied().unwrap_or(0)
}

/// Add `count` of `item` to the stock.
#[tool]
async fn restock(item: String, count: u64, stock: State<Stock>) -> u64 {
    let mut stock = stock.0.lock().expect("stock lock");
    let total = stock.entry(item).or_default();
    *total += count;
    *total
}

/// Remove `item` from the stock entirely.
#[tool(annotations(destructive))]
async fn discontinue(item: String, stock: State<Stock>) -> Result<String, ToolError> {
    match stock.0.lock().expect("stock lock").remove(&item) {
        Some(count) => Ok(format!("{item} discontinued ({count} left in stock)")),
        None => Err(ToolError::new(format!("no item `{item}`"))),
    }
}

/// Write the stock report (slow).
#[tool]
async fn report(stock: State<Stock>) -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stock = stock.0.lock().expect("stock lock");
    format!("{} items, {} pieces", stock.len(), stock.values().sum::<u64>())
}

/// Rebuild the search index (for administrators).
#[tool]
async fn internal_reindex() -> String {
    "reindexed".into()
}

/// Refuses destructive tools to callers without the `admin` scope, and logs the others.
fn audit() -> impl tower::Layer<
    ToolService,
    Service: tower::Service<
        ToolCall,
        Response = ToolResult,
        Error = mcp_tools::middleware::BoxError,
        Future: Send + 'static,
    > + Clone
                 + Send
                 + Sync
                 + 'static,
> + Send
+ Sync
+ 'static {
    tower::layer::layer_fn(|inner: ToolService| {
        tower::service_fn(move |call: ToolCall| {
            let inner = inner.clone();
            async move {
                let ctx = call.context();
                // Over stdio there is no token: the caller is the process owner.
                let admin = ctx.auth().is_none_or(|caller| caller.has_scope("admin"));
                if call.annotations().destructive_hint == Some(true) && !admin {
                    return Ok(ToolResult::error(format!("`{}` needs the `admin` scope", call.name())));
                }
                tracing::info!(tool = call.name(), caller = ctx.caller_id(), "audit");
                inner.oneshot(call).await
            }
        })
    })
}

/// Lists `internal_` tools to administrators only.
struct HideInternal;

impl ListFilter for HideInternal {
    fn tool(&self, viewer: &Viewer<'_>, tool: &mut Map<String, Value>) -> bool {
        let admin = viewer.auth().is_none_or(|caller| caller.has_scope("admin"));
        admin || !tool["name"].as_str().unwrap_or_default().starts_with("internal_")
    }
}

fn main() -> ExitCode {
    Server::builder()
        .name("inventory")
        .state(Stock::default())
        .layer(ResultCache::new().time_to_live(Duration::from_secs(5)))
        .layer(audit())
        .layer(RateLimit::per_minute(120).burst(20))
        .layer(AccessLog::new())
        .tool_layer("report", ConcurrencyLimit::new(2))
        .list_filter(HideInternal)
        .run()
}
