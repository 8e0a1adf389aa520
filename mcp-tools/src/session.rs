//! One client connection: decodes each message, applies the lifecycle, routes by method, runs
//! tool calls concurrently and encodes each answer once. Transports feed it lines and write
//! what it sends to its [`Outbound`] queue; it knows nothing of stdio or HTTP.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, OnceLock};

use futures_util::FutureExt as _;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::context::Peer;
use crate::protocol::{
    CallToolParams, CancelledParams, INVALID_REQUEST, InitializeParams, METHOD_NOT_FOUND, PARSE_ERROR,
    PaginatedParams, RawMessage, RequestId, RpcError, SetLevelParams, encode_error, encode_result, parse_id,
};
use crate::registry::{Handler, ToolEntry};
use crate::server::ServerInner;
use crate::{Context, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, ToolResult};

/// The queue of encoded messages (one JSON text each, no newline) going to the client.
#[derive(Clone)]
pub(crate) struct Outbound(mpsc::UnboundedSender<Vec<u8>>);

impl Outbound {
    pub fn channel() -> (Outbound, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Outbound(tx), rx)
    }
    /// Queues a message; a closed connection drops it silently.
    pub fn send(&self, message: Vec<u8>) {
        let _ = self.0.send(message);
    }
}

pub(crate) struct Session {
    server: Arc<ServerInner>,
    outbound: Outbound,
    /// Set by `initialize`; requests other than `ping` need it.
    peer: OnceLock<Arc<Peer>>,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    tasks: TaskTracker,
}

impl Session {
    pub fn new(server: Arc<ServerInner>, outbound: Outbound) -> Arc<Session> {
        Arc::new(Session {
            server,
            outbound,
            peer: OnceLock::new(),
            in_flight: Mutex::new(HashMap::new()),
            tasks: TaskTracker::new(),
        })
    }

    /// Waits (at most the server's shutdown timeout) for running calls to finish.
    pub async fn drain(&self) {
        self.tasks.close();
        if tokio::time::timeout(self.server.shutdown_timeout, self.tasks.wait()).await.is_err() {
            tracing::warn!(
                running = self.tasks.len(),
                "shutting down with tool calls still running; their answers are dropped"
            );
        }
    }

    fn reply(&self, id: &RequestId, result: &(impl serde::Serialize + ?Sized)) {
        self.outbound.send(encode_result(id, result));
    }

    fn reply_error(&self, id: Option<&RequestId>, error: RpcError) {
        tracing::debug!(?id, code = error.code, message = %error.message, "error response");
        self.outbound.send(encode_error(id, &error));
    }

    /// A message longer than the transport's limit: answered, then forgotten.
    pub fn reject_oversized(&self, length: usize) {
        self.reply_error(
            None,
            RpcError::new(
                INVALID_REQUEST,
                format!(
                    "message of {length} bytes exceeds this server's limit of {} bytes; it was discarded",
                    self.server.max_message_bytes
                ),
            ),
        );
    }

    /// Handles one message (one line of stdio, one HTTP body).
    pub fn handle_message(self: &Arc<Self>, bytes: &[u8]) {
        let message: RawMessage<'_> = match serde_json::from_slice(bytes) {
            Ok(m) => m,
            Err(e) => return self.reject_undecodable(bytes, e),
        };
        if message.jsonrpc.as_deref() != Some("2.0") {
            let id = message.id.and_then(parse_id);
            return self.reply_error(
                id.as_ref(),
                RpcError::new(INVALID_REQUEST, "not JSON-RPC 2.0: \"jsonrpc\" must be \"2.0\""),
            );
        }
        let Some(method) = message.method.as_deref() else {
            if message.result.is_some() || message.error.is_some() {
                // An answer to a server→client request; this server sends none yet.
                tracing::debug!("ignoring a response to a request this server did not send");
            } else {
                let id = message.id.and_then(parse_id);
                self.reply_error(
                    id.as_ref(),
                    RpcError::new(
                        INVALID_REQUEST,
                        "a message needs a \"method\" (or a \"result\"/\"error\")",
                    ),
                );
            }
            return;
        };
        let Some(raw_id) = message.id else {
            return self.handle_notification(method, message.params);
        };
        let Some(id) = parse_id(raw_id) else {
            return self.reply_error(
                None,
                RpcError::new(INVALID_REQUEST, "a request id must be a string or an integer"),
            );
        };
        self.handle_request(id, method, message.params);
    }

    fn reject_undecodable(&self, bytes: &[u8], error: serde_json::Error) {
        let (code, message) = match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Array(_)) => {
                (INVALID_REQUEST, "JSON-RPC batches are not supported (removed in MCP 2025-06-18)".to_owned())
            }
            Ok(_) => (INVALID_REQUEST, format!("not a JSON-RPC message: {error}")),
            Err(e) => (PARSE_ERROR, format!("invalid JSON: {e}")),
        };
        self.reply_error(None, RpcError::new(code, message));
    }

    fn handle_notification(&self, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/initialized" => tracing::debug!("client initialized"),
            "notifications/cancelled" => {
                let Some(params) = params.and_then(|p| serde_json::from_str::<CancelledParams>(p.get()).ok())
                else {
                    return tracing::debug!("ignoring a malformed notifications/cancelled");
                };
                let token = self.in_flight.lock().expect("in-flight lock").remove(&params.request_id);
                match token {
                    Some(token) => {
                        tracing::debug!(id = %params.request_id, "request cancelled by the client");
                        token.cancel();
                    }
                    None => {
                        tracing::debug!(id = %params.request_id, "cancellation of an unknown or finished request")
                    }
                }
            }
            other => tracing::debug!(method = other, "ignoring notification"),
        }
    }

    fn handle_request(self: &Arc<Self>, id: RequestId, method: &str, params: Option<&RawValue>) {
        match method {
            "initialize" => return self.initialize(id, params),
            "ping" => return self.reply(&id, &json!({})),
            _ => {}
        }
        let Some(peer) = self.peer.get() else {
            let known = matches!(method, "tools/list" | "tools/call" | "logging/setLevel");
            let error = if known {
                RpcError::new(
                    INVALID_REQUEST,
                    format!("`{method}` before `initialize`: initialize the session first"),
                )
            } else {
                RpcError::new(METHOD_NOT_FOUND, format!("method not found: `{method}`"))
            };
            return self.reply_error(Some(&id), error);
        };
        match method {
            "tools/call" => self.call_tool(id, params, peer.clone()),
            "tools/list" => {
                let cursor = match decode_params::<PaginatedParams>(params) {
                    Ok(p) => p.cursor,
                    Err(e) => return self.reply_error(Some(&id), e),
                };
                match self.server.registry.page(cursor.as_deref()) {
                    Some(page) => self.reply(&id, page),
                    None => self.reply_error(
                        Some(&id),
                        RpcError::invalid_params(format!("invalid cursor {:?}", cursor.unwrap_or_default())),
                    ),
                }
            }
            "logging/setLevel" => match decode_params::<SetLevelParams>(params) {
                Ok(p) => {
                    peer.set_log_level(p.level);
                    self.reply(&id, &json!({}));
                }
                Err(e) => self.reply_error(Some(&id), e),
            },
            other => self.reply_error(
                Some(&id),
                RpcError::new(METHOD_NOT_FOUND, format!("method not found: `{other}`")),
            ),
        }
    }

    fn initialize(&self, id: RequestId, params: Option<&RawValue>) {
        let params = match decode_params::<InitializeParams>(params) {
            Ok(p) => p,
            Err(e) => return self.reply_error(Some(&id), e),
        };
        let version = if SUPPORTED_PROTOCOL_VERSIONS.contains(&params.protocol_version.as_str()) {
            params.protocol_version
        } else {
            LATEST_PROTOCOL_VERSION.to_owned()
        };
        let mut peer = Peer::new(self.outbound.clone());
        peer.client_info = params.client_info.unwrap_or_default();
        peer.client_capabilities = params.capabilities;
        peer.protocol_version = version.clone();
        tracing::info!(client = %peer.client_info.name, version = %peer.client_info.version, protocol = %version, "initialize");
        if self.peer.set(Arc::new(peer)).is_err() {
            return self.reply_error(
                Some(&id),
                RpcError::new(INVALID_REQUEST, "the session is already initialized"),
            );
        }
        let server = &self.server;
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": server.info,
        });
        if let Some(instructions) = &server.instructions {
            result["instructions"] = json!(instructions);
        }
        self.reply(&id, &result);
    }

    fn call_tool(self: &Arc<Self>, id: RequestId, params: Option<&RawValue>, peer: Arc<Peer>) {
        let Some(params) = params else {
            return self.reply_error(Some(&id), RpcError::invalid_params("tools/call needs params"));
        };
        let params: CallToolParams<'_> = match serde_json::from_str(params.get()) {
            Ok(p) => p,
            Err(e) => {
                return self.reply_error(
                    Some(&id),
                    RpcError::invalid_params(format!("invalid tools/call params: {e}")),
                );
            }
        };
        let Some(entry) = self.server.registry.get(&params.name).cloned() else {
            return self
                .reply_error(Some(&id), RpcError::invalid_params(format!("unknown tool `{}`", params.name)));
        };
        let arguments: Box<RawValue> = match params.arguments {
            None => empty_object(),
            Some(raw) if raw.get() == "null" => empty_object(),
            Some(raw) => raw.to_owned(),
        };
        let cancel = CancellationToken::new();
        {
            let mut in_flight = self.in_flight.lock().expect("in-flight lock");
            if in_flight.contains_key(&id) {
                drop(in_flight);
                return self.reply_error(
                    Some(&id),
                    RpcError::new(
                        INVALID_REQUEST,
                        format!("request id {id} is already in use by a running request"),
                    ),
                );
            }
            in_flight.insert(id.clone(), cancel.clone());
        }
        let progress_token = params.meta.and_then(|m| m.progress_token);
        let ctx = Context::new(
            id.clone(),
            entry.name.clone(),
            progress_token,
            peer,
            self.server.state.clone(),
            cancel.clone(),
        );
        let session = self.clone();
        self.tasks.spawn(async move {
            // Cancellation wins over a result that becomes ready at the same moment (a handler
            // that returns because it saw the cancellation): the answer is suppressed.
            let result = tokio::select! {
                biased;
                _ = cancel.cancelled() => None,
                result = call_entry(&entry, &arguments, ctx) => Some(result),
            };
            session.in_flight.lock().expect("in-flight lock").remove(&id);
            match result {
                Some(result) => session.reply(&id, &result),
                None => tracing::debug!(%id, tool = %entry.name, "call cancelled; no answer sent"),
            }
        });
    }
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("valid JSON")
}

fn decode_params<T: serde::de::DeserializeOwned + Default>(params: Option<&RawValue>) -> Result<T, RpcError> {
    match params {
        None => Ok(T::default()),
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|e| RpcError::invalid_params(format!("invalid params: {e}"))),
    }
}

impl Default for SetLevelParams {
    fn default() -> Self {
        SetLevelParams { level: crate::LogLevel::Info }
    }
}

/// Runs one tool: decodes and checks its arguments, calls the handler (a panic becomes an
/// `isError` result), and checks structured output against a hand-written output schema.
pub(crate) async fn call_entry(entry: &ToolEntry, arguments: &RawValue, ctx: Context) -> ToolResult {
    if !arguments.get().trim_start().starts_with('{') {
        return invalid_arguments(
            entry,
            vec![format!("(root): the arguments must be a JSON object, not {}", arguments.get())],
        );
    }
    match &entry.handler {
        Handler::Static { handler, plan, .. } => {
            match std::panic::catch_unwind(AssertUnwindSafe(|| handler(arguments, ctx, *plan))) {
                Err(panic) => panicked(entry, panic),
                Ok(Err(error)) => {
                    let mut problems = schema_problems(entry, arguments);
                    if problems.is_empty() {
                        problems.push(format!("{}: {}", display_path(&error.path), error.message));
                    }
                    invalid_arguments(entry, problems)
                }
                Ok(Ok(future)) => {
                    AssertUnwindSafe(future).catch_unwind().await.unwrap_or_else(|p| panicked(entry, p))
                }
            }
        }
        Handler::Dynamic { handler, input_validator, output_validator } => {
            let value: Value = match serde_json::from_str(arguments.get()) {
                Ok(v) => v,
                Err(e) => return invalid_arguments(entry, vec![format!("(root): {e}")]),
            };
            if input_validator.is_some() {
                let problems = schema_problems(entry, arguments);
                if !problems.is_empty() {
                    return invalid_arguments(entry, problems);
                }
            }
            let future = match std::panic::catch_unwind(AssertUnwindSafe(|| handler(value, ctx))) {
                Ok(f) => f,
                Err(panic) => return panicked(entry, panic),
            };
            let result = match AssertUnwindSafe(future).catch_unwind().await {
                Ok(Ok(result)) => result,
                Ok(Err(error)) => return error.into_result(&entry.name),
                Err(panic) => return panicked(entry, panic),
            };
            match output_validator {
                Some(validator) if !result.is_error() => check_output(entry, validator, result),
                _ => result,
            }
        }
    }
}

fn schema_problems(entry: &ToolEntry, arguments: &RawValue) -> Vec<String> {
    let (Some(validator), Ok(value)) =
        (entry.explaining_validator(), serde_json::from_str::<Value>(arguments.get()))
    else {
        return Vec::new();
    };
    validator
        .iter_errors(&value)
        .map(|e| format!("{}: {}", display_path(e.instance_path().as_str()), e))
        .collect()
}

fn display_path(pointer: &str) -> &str {
    if pointer.is_empty() { "(root)" } else { pointer }
}

fn invalid_arguments(entry: &ToolEntry, problems: Vec<String>) -> ToolResult {
    tracing::debug!(tool = %entry.name, ?problems, "invalid arguments");
    let mut text = format!("Invalid arguments for tool `{}`:\n", entry.name);
    for problem in &problems {
        text.push_str("- ");
        text.push_str(problem);
        text.push('\n');
    }
    text.push_str("Fix the arguments to match the tool's input schema and call it again.");
    ToolResult::error(text)
}

fn check_output(entry: &ToolEntry, validator: &jsonschema::Validator, result: ToolResult) -> ToolResult {
    let Some(value) = result.structured_value() else {
        tracing::error!(tool = %entry.name, "tool declares an outputSchema but returned no structuredContent");
        return ToolResult::error(format!(
            "tool `{}` declares an output schema but returned no structured content",
            entry.name
        ));
    };
    let problems: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{}: {}", display_path(e.instance_path().as_str()), e))
        .collect();
    if problems.is_empty() {
        return result;
    }
    tracing::error!(tool = %entry.name, ?problems, "structured output does not match the output schema");
    ToolResult::error(format!(
        "tool `{}` produced output that does not match its output schema:\n- {}",
        entry.name,
        problems.join("\n- ")
    ))
}

fn panicked(entry: &ToolEntry, panic: Box<dyn std::any::Any + Send>) -> ToolResult {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned());
    tracing::error!(tool = %entry.name, panic = %message, "tool handler panicked");
    ToolResult::error(format!(
        "tool `{}` failed: its handler panicked (details are in the server's log)",
        entry.name
    ))
}
