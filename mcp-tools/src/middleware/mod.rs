//! Middleware: every tool call goes through a tower [`Service`](tower::Service) made of the
//! server's layers ([`ServerBuilder::layer`](crate::ServerBuilder::layer), around every call;
//! [`ServerBuilder::tool_layer`](crate::ServerBuilder::tool_layer), around one tool's), and
//! [`ListFilter`]s decide what each caller is shown
//! ([`ServerBuilder::list_filter`](crate::ServerBuilder::list_filter)).
//!
//! A layer's service takes a [`ToolCall`] (the tool, its raw arguments, the call's
//! [`Context`](crate::Context)) and answers a [`ToolResult`](crate::ToolResult). Any tower
//! layer of that shape fits, yours or a crate's; the built-in ones:
//!
//! * [`AccessLog`]: one log line per call (caller, tool, outcome, duration).
//! * [`ConcurrencyLimit`]: at most so many calls at once (of a tool, with `tool_layer`).
//! * `RateLimit` (feature `rate-limit`): so many calls per period per caller (or caller and
//!   tool), refusals saying when to retry; memory bounded however many callers come. With
//!   feature `redis` too, `RateLimit::shared` counts in Redis, one count for every instance.
//! * `ResultCache` (feature `cache`): an opt-in cache of read-only, idempotent tools' results,
//!   per tool, arguments and caller, with a time to live and bounded memory.
//!
//! Every request (not only tool calls) can be watched too: `Telemetry` (feature `otel`) makes
//! each one an OpenTelemetry span and measures it (`ServerBuilder::telemetry`, or `--otel` on
//! the command line).
//!
//! ```rust,standalone_crate
//! use mcp_tools::middleware::{ToolCall, ToolService};
//! use mcp_tools::{Server, ToolResult};
//! use tower::ServiceExt as _;
//!
//! // A layer of your own: refuses calls on weekends, times the others.
//! let guard = tower::layer::layer_fn(|inner: ToolService| {
//!     tower::service_fn(move |call: ToolCall| {
//!         let inner = inner.clone();
//!         async move {
//!             if call.name() == "deploy" && std::env::var("WEEKEND").is_ok() {
//!                 return Ok(ToolResult::error("no deploys on weekends"));
//!             }
//!             let started = std::time::Instant::now();
//!             let result = inner.oneshot(call).await;
//!             tracing::debug!(elapsed = ?started.elapsed(), "call done");
//!             result
//!         }
//!     })
//! });
//! let server = Server::builder().layer(guard).build().unwrap();
//! ```

mod access_log;
#[cfg(feature = "cache")]
mod cache;
mod concurrency;
mod layered;
#[cfg(feature = "otel")]
mod otel;
#[cfg(feature = "otel")]
mod otlp;
#[cfg(feature = "rate-limit")]
mod rate_limit;
#[cfg(feature = "otel")]
mod request_span;

pub use crate::dispatch::pipeline::{BoxError, ListFilter, ToolCall, ToolService, Viewer};
pub use access_log::{AccessLog, AccessLogService};
#[cfg(feature = "cache")]
pub use cache::{ResultCache, ResultCacheService};
pub use concurrency::{ConcurrencyLimit, ConcurrencyLimitService};
pub use layered::{Around, Layered, ToolFuture};
#[cfg(feature = "otel")]
pub use otel::{Telemetry, TelemetryError};
#[cfg(all(feature = "rate-limit", feature = "redis"))]
pub use rate_limit::StoreFailure;
#[cfg(feature = "rate-limit")]
pub use rate_limit::{RateLimit, RateLimitService};
