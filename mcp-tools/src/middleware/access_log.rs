//! [`AccessLog`]: one log line per tool call.

use std::time::Instant;

use tower::{Layer, ServiceExt as _};

use super::layered::{Around, Layered, ToolFuture};
use crate::dispatch::pipeline::{ToolCall, ToolService};

/// Writes one line per tool call to the log (`tracing`, target `mcp_tools::access`, level
/// `info`): who called (the verified identity's principal, else `-`), the tool, the request id,
/// the outcome (`ok`, `tool_error`, or `failed` when a layer inside failed the call) and how
/// long it took. The arguments only with [`with_arguments`](Self::with_arguments), escaped and
/// cut at 1 KiB. Never a token: handlers and layers never see one.
///
/// ```text
/// INFO mcp_tools::access: call caller="alice" tool="get_weather" request=7 outcome="ok" ms=3.1
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct AccessLog {
    arguments: bool,
}

impl AccessLog {
    /// A line per call, without the arguments.
    pub fn new() -> Self {
        AccessLog::default()
    }

    /// Also logs the arguments (escaped, at most 1 KiB of them). They may hold personal data:
    /// turn this on knowingly.
    pub fn with_arguments(mut self, log: bool) -> Self {
        self.arguments = log;
        self
    }
}

impl Layer<ToolService> for AccessLog {
    type Service = AccessLogService;

    fn layer(&self, inner: ToolService) -> AccessLogService {
        Layered::new(inner, *self)
    }
}

/// The service of a [`AccessLog`].
pub type AccessLogService = Layered<AccessLog>;

/// The most of the arguments a line shows.
const MAX_ARGUMENTS: usize = 1024;

impl Around for AccessLog {
    fn around(&self, inner: ToolService, call: ToolCall) -> ToolFuture {
        let tool = call.name().to_owned();
        let request = call.context().request_id().to_string();
        let caller = call.context().auth().and_then(|a| a.principal()).unwrap_or("-").to_owned();
        let arguments = self.arguments.then(|| {
            let text = call.arguments().get();
            match text.char_indices().nth(MAX_ARGUMENTS) {
                None => text.to_owned(),
                Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
            }
        });
        Box::pin(async move {
            let started = Instant::now();
            let result = inner.oneshot(call).await;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let outcome = match &result {
                Ok(r) if r.is_error() => "tool_error",
                Ok(_) => "ok",
                Err(_) => "failed",
            };
            // `?`: the values are quoted and escaped, so none can forge a line.
            match arguments {
                None => {
                    tracing::info!(target: "mcp_tools::access", caller = ?caller, tool = ?tool, %request, outcome, ms, "call")
                }
                Some(arguments) => {
                    tracing::info!(target: "mcp_tools::access", caller = ?caller, tool = ?tool, %request, outcome, ms, arguments = ?arguments, "call")
                }
            }
            result
        })
    }
}
