//! One client connection: decodes each message, applies the lifecycle, routes by method, runs
//! requests concurrently, sends requests to the client and matches their answers. Transports
//! hand it messages together with the [`Outbound`] queue that answers (and the messages related
//! to a request: progress, logs, server→client requests) must go to; it knows nothing of stdio
//! or HTTP.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::call::call_entry;
use crate::context::{HttpParts, Peer};
use crate::protocol::{
    CallToolParams, CancelledParams, INVALID_REQUEST, InitializeParams, METHOD_NOT_FOUND, PARSE_ERROR,
    PaginatedParams, RawMessage, RequestId, RequestMeta, RpcError, SetLevelParams, encode_error,
    encode_notification, encode_result, parse_id,
};
use crate::server::{ServerEvent, ServerInner};
use crate::{ClientError, Context, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS};

/// A queue of encoded messages (one JSON text each, no newline) going to the client.
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
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

/// What a message turned out to be, so a transport can choose its answer (HTTP: 202 for
/// notifications and responses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Received {
    /// A request: its answer will be sent on the reply queue.
    Request,
    /// A notification or a response to a server→client request: nothing will be sent.
    Notification,
    /// Not a valid message: an error answer was sent on the reply queue.
    Invalid,
}

/// Ends the current connection of a resumable SSE stream; true if there was one.
pub(crate) type CloseStream = Arc<dyn Fn() -> bool + Send + Sync>;

/// Where a message came from: the queue its answers go to, HTTP request facts, and how to
/// close its SSE stream (resumable HTTP streams only).
#[derive(Clone)]
pub(crate) struct Origin {
    pub reply: Outbound,
    pub http: Option<Arc<HttpParts>>,
    pub close: Option<CloseStream>,
}

impl Origin {
    pub fn new(reply: Outbound) -> Self {
        Origin { reply, http: None, close: None }
    }
}

pub(crate) struct Session {
    pub(crate) server: Arc<ServerInner>,
    /// Where messages unrelated to any request go (list changes, resource updates): stdio's
    /// single queue, or an HTTP session's GET stream while one is open.
    standalone: Mutex<Option<Outbound>>,
    /// Set by `initialize`; requests other than `ping` need it.
    peer: OnceLock<Arc<Peer>>,
    /// A stateless HTTP session cannot receive answers to server→client requests.
    stateless: bool,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Server→client requests awaiting their answer, by id.
    pending: Mutex<HashMap<i64, oneshot::Sender<Result<Value, ClientError>>>>,
    next_request_id: AtomicI64,
    /// Resource URIs this client subscribed to.
    pub(crate) subscriptions: Mutex<HashSet<String>>,
    tasks: TaskTracker,
    closed: CancellationToken,
}

impl Session {
    pub fn new(server: Arc<ServerInner>, standalone: Option<Outbound>) -> Arc<Session> {
        Arc::new(Self::with(server, standalone, false))
    }

    /// A session that needs no `initialize` (stateless HTTP: every request stands alone).
    pub fn new_stateless(server: Arc<ServerInner>, protocol_version: Option<&str>) -> Arc<Session> {
        let session = Self::with(server, None, true);
        let mut peer = Peer::new();
        if let Some(v) = protocol_version.filter(|v| SUPPORTED_PROTOCOL_VERSIONS.contains(v)) {
            peer.protocol_version = v.to_owned();
        }
        let _ = session.peer.set(Arc::new(peer));
        Arc::new(session)
    }

    fn with(server: Arc<ServerInner>, standalone: Option<Outbound>, stateless: bool) -> Session {
        Session {
            server,
            standalone: Mutex::new(standalone),
            peer: OnceLock::new(),
            stateless,
            in_flight: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            next_request_id: AtomicI64::new(1),
            subscriptions: Mutex::new(HashSet::new()),
            tasks: TaskTracker::new(),
            closed: CancellationToken::new(),
        }
    }

    /// Whether this is a stateless HTTP session (no requests to the client possible).
    pub fn is_stateless(&self) -> bool {
        self.stateless
    }

    pub fn is_initialized(&self) -> bool {
        self.peer.get().is_some()
    }

    /// Sets (or clears) the queue for messages unrelated to a request.
    pub fn set_standalone(&self, outbound: Option<Outbound>) {
        *self.standalone.lock().expect("standalone lock") = outbound;
    }

    pub fn has_standalone(&self) -> bool {
        self.standalone.lock().expect("standalone lock").as_ref().is_some_and(|o| !o.is_closed())
    }

    /// Ends the session: running calls are cancelled and pending client requests fail.
    pub fn close(&self) {
        self.closed.cancel();
        for (_, token) in self.in_flight.lock().expect("in-flight lock").drain() {
            token.cancel();
        }
        for (_, waiter) in self.pending.lock().expect("pending lock").drain() {
            let _ = waiter.send(Err(ClientError::Disconnected));
        }
    }

    /// Waits (at most the server's shutdown timeout) for running requests to finish.
    pub async fn drain(&self) {
        self.tasks.close();
        if tokio::time::timeout(self.server.shutdown_timeout, self.tasks.wait()).await.is_err() {
            tracing::warn!(
                running = self.tasks.len(),
                "shutting down with requests still running; their answers are dropped"
            );
        }
    }

    /// Forwards server-wide events (list changes, resource updates) to this client's standalone
    /// queue until the session closes.
    pub fn forward_events(self: &Arc<Self>) {
        let mut events = self.server.events.subscribe();
        let session = Arc::downgrade(self);
        let closed = self.closed.clone();
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    _ = closed.cancelled() => return,
                    event = events.recv() => event,
                };
                let Some(session) = session.upgrade() else { return };
                match event {
                    Ok(event) => session.notify_event(&event),
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "a slow client missed change notifications");
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    fn notify_event(&self, event: &ServerEvent) {
        if !self.is_initialized() {
            return;
        }
        let message = match event {
            ServerEvent::ToolsChanged => encode_notification("notifications/tools/list_changed", &json!({})),
            ServerEvent::ResourcesChanged => {
                encode_notification("notifications/resources/list_changed", &json!({}))
            }
            ServerEvent::PromptsChanged => {
                encode_notification("notifications/prompts/list_changed", &json!({}))
            }
            ServerEvent::ResourceUpdated(uri) => {
                if !self.subscriptions.lock().expect("subscriptions lock").contains(uri.as_str()) {
                    return;
                }
                encode_notification("notifications/resources/updated", &json!({"uri": uri}))
            }
        };
        if let Some(out) = self.standalone.lock().expect("standalone lock").as_ref() {
            out.send(message);
        }
    }

    fn reply(origin: &Origin, id: &RequestId, result: &(impl Serialize + ?Sized)) {
        origin.reply.send(encode_result(id, result));
    }

    fn reply_error(origin: &Origin, id: Option<&RequestId>, error: RpcError) {
        tracing::debug!(?id, code = error.code, message = %error.message, "error response");
        origin.reply.send(encode_error(id, &error));
    }

    /// A message longer than the transport's limit: answered, then forgotten.
    pub fn reject_oversized(&self, origin: &Origin, length: usize) {
        Self::reply_error(
            origin,
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
    pub fn handle_message(self: &Arc<Self>, bytes: &[u8], origin: &Origin) -> Received {
        let message: RawMessage<'_> = match serde_json::from_slice(bytes) {
            Ok(m) => m,
            Err(e) => {
                reject_undecodable(origin, bytes, e);
                return Received::Invalid;
            }
        };
        if message.jsonrpc.as_deref() != Some("2.0") {
            let id = message.id.and_then(parse_id);
            Self::reply_error(
                origin,
                id.as_ref(),
                RpcError::new(INVALID_REQUEST, "not JSON-RPC 2.0: \"jsonrpc\" must be \"2.0\""),
            );
            return Received::Invalid;
        }
        let Some(method) = message.method.as_deref() else {
            if message.result.is_some() || message.error.is_some() {
                self.handle_response(message.id, message.result, message.error);
                return Received::Notification;
            }
            let id = message.id.and_then(parse_id);
            Self::reply_error(
                origin,
                id.as_ref(),
                RpcError::new(INVALID_REQUEST, "a message needs a \"method\" (or a \"result\"/\"error\")"),
            );
            return Received::Invalid;
        };
        let Some(raw_id) = message.id else {
            self.handle_notification(method, message.params);
            return Received::Notification;
        };
        let Some(id) = parse_id(raw_id) else {
            Self::reply_error(
                origin,
                None,
                RpcError::new(INVALID_REQUEST, "a request id must be a string or an integer"),
            );
            return Received::Invalid;
        };
        self.handle_request(id, method, message.params, origin);
        Received::Request
    }

    fn handle_response(&self, id: Option<&RawValue>, result: Option<&RawValue>, error: Option<&RawValue>) {
        let Some(id) = id.and_then(|raw| serde_json::from_str::<i64>(raw.get()).ok()) else {
            return tracing::debug!("ignoring a response whose id this server never used");
        };
        let Some(waiter) = self.pending.lock().expect("pending lock").remove(&id) else {
            return tracing::debug!(id, "ignoring a response to an unknown or finished request");
        };
        let outcome = match (result, error) {
            (Some(result), _) => serde_json::from_str(result.get())
                .map_err(|e| ClientError::Malformed(format!("the client's result is not JSON: {e}"))),
            (None, Some(error)) => {
                let error: Value = serde_json::from_str(error.get()).unwrap_or(Value::Null);
                Err(ClientError::Rejected {
                    code: error["code"].as_i64().unwrap_or_default(),
                    message: error["message"].as_str().unwrap_or("(no message)").to_owned(),
                })
            }
            (None, None) => Err(ClientError::Malformed("a response with neither result nor error".into())),
        };
        let _ = waiter.send(outcome);
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
            "notifications/roots/list_changed" => tracing::debug!("the client's roots changed"),
            other => tracing::debug!(method = other, "ignoring notification"),
        }
    }

    fn handle_request(
        self: &Arc<Self>,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        origin: &Origin,
    ) {
        match method {
            "initialize" => return self.initialize(id, params, origin),
            "ping" => return Self::reply(origin, &id, &json!({})),
            _ => {}
        }
        let Some(peer) = self.peer.get().cloned() else {
            let known = matches!(
                method,
                "tools/list"
                    | "tools/call"
                    | "logging/setLevel"
                    | "resources/list"
                    | "resources/read"
                    | "resources/templates/list"
                    | "resources/subscribe"
                    | "resources/unsubscribe"
                    | "prompts/list"
                    | "prompts/get"
                    | "completion/complete"
            );
            let error = if known {
                RpcError::new(
                    INVALID_REQUEST,
                    format!("`{method}` before `initialize`: initialize the session first"),
                )
            } else {
                RpcError::new(METHOD_NOT_FOUND, format!("method not found: `{method}`"))
            };
            return Self::reply_error(origin, Some(&id), error);
        };
        match method {
            "tools/call" => self.call_tool(id, params, peer, origin),
            "tools/list" => {
                let cursor = match decode_params::<PaginatedParams>(params) {
                    Ok(p) => p.cursor,
                    Err(e) => return Self::reply_error(origin, Some(&id), e),
                };
                let registry = self.server.registry.load();
                match registry.page(cursor.as_deref()) {
                    Some(page) => Self::reply(origin, &id, page),
                    None => Self::reply_error(
                        origin,
                        Some(&id),
                        RpcError::invalid_params(format!("invalid cursor {:?}", cursor.unwrap_or_default())),
                    ),
                }
            }
            "logging/setLevel" => match decode_params::<SetLevelParams>(params) {
                Ok(p) => {
                    peer.set_log_level(p.level);
                    Self::reply(origin, &id, &json!({}));
                }
                Err(e) => Self::reply_error(origin, Some(&id), e),
            },
            other => {
                let params: Option<Box<RawValue>> = params.map(ToOwned::to_owned);
                let progress_token = params
                    .as_deref()
                    .and_then(|p| serde_json::from_str::<MetaOnly>(p.get()).ok())
                    .and_then(|m| m.meta)
                    .and_then(|m| m.progress_token);
                let ctx = self.context(id.clone(), other.into(), progress_token, peer, origin);
                let cancel = ctx.cancellation_token();
                let Some(future) = crate::catalog::route(self, other, params, ctx) else {
                    return Self::reply_error(
                        origin,
                        Some(&id),
                        RpcError::new(METHOD_NOT_FOUND, format!("method not found: `{other}`")),
                    );
                };
                self.spawn_request(id, origin.clone(), cancel, future);
            }
        }
    }

    fn initialize(self: &Arc<Self>, id: RequestId, params: Option<&RawValue>, origin: &Origin) {
        let params = match decode_params::<InitializeParams>(params) {
            Ok(p) => p,
            Err(e) => return Self::reply_error(origin, Some(&id), e),
        };
        let version = if SUPPORTED_PROTOCOL_VERSIONS.contains(&params.protocol_version.as_str()) {
            params.protocol_version
        } else {
            LATEST_PROTOCOL_VERSION.to_owned()
        };
        let mut peer = Peer::new();
        peer.client_info = params.client_info.unwrap_or_default();
        peer.client_capabilities = params.capabilities;
        peer.protocol_version = version.clone();
        tracing::info!(client = %peer.client_info.name, version = %peer.client_info.version, protocol = %version, "initialize");
        if self.peer.set(Arc::new(peer)).is_err() {
            return Self::reply_error(
                origin,
                Some(&id),
                RpcError::new(INVALID_REQUEST, "the session is already initialized"),
            );
        }
        let server = &self.server;
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": server.capabilities(),
            "serverInfo": server.info,
        });
        if let Some(instructions) = &server.instructions {
            result["instructions"] = json!(instructions);
        }
        Self::reply(origin, &id, &result);
    }

    /// The context of one request.
    fn context(
        self: &Arc<Self>,
        id: RequestId,
        subject: Arc<str>,
        progress_token: Option<crate::protocol::ProgressToken>,
        peer: Arc<Peer>,
        origin: &Origin,
    ) -> Context {
        Context::new(crate::context::CallParts {
            request_id: id,
            subject,
            progress_token,
            peer,
            state: self.server.state.clone(),
            cancel: CancellationToken::new(),
            reply: origin.reply.clone(),
            session: self.clone(),
            http: origin.http.clone(),
            close_stream: origin.close.clone(),
        })
    }

    fn call_tool(
        self: &Arc<Self>,
        id: RequestId,
        params: Option<&RawValue>,
        peer: Arc<Peer>,
        origin: &Origin,
    ) {
        let Some(params) = params else {
            return Self::reply_error(origin, Some(&id), RpcError::invalid_params("tools/call needs params"));
        };
        let call: CallToolParams<'_> = match serde_json::from_str(params.get()) {
            Ok(p) => p,
            Err(e) => {
                return Self::reply_error(
                    origin,
                    Some(&id),
                    RpcError::invalid_params(format!("invalid tools/call params: {e}")),
                );
            }
        };
        let Some(entry) = self.server.registry.load().get(&call.name).cloned() else {
            return Self::reply_error(
                origin,
                Some(&id),
                RpcError::invalid_params(format!("unknown tool `{}`", call.name)),
            );
        };
        let arguments: Box<RawValue> = match call.arguments {
            None => empty_object(),
            Some(raw) if raw.get() == "null" => empty_object(),
            Some(raw) => raw.to_owned(),
        };
        let progress_token = call.meta.and_then(|m| m.progress_token);
        let ctx = self.context(id.clone(), entry.name.clone(), progress_token, peer, origin);
        let cancel = ctx.cancellation_token();
        self.spawn_request(id, origin.clone(), cancel, async move {
            let result = call_entry(&entry, &arguments, ctx).await;
            serde_json::value::to_raw_value(&result)
                .map_err(|e| RpcError::new(crate::protocol::INTERNAL_ERROR, e.to_string()))
        });
    }

    /// Runs a request concurrently; its answer goes to `origin` unless the client cancels it.
    fn spawn_request<F>(self: &Arc<Self>, id: RequestId, origin: Origin, cancel: CancellationToken, future: F)
    where
        F: Future<Output = Result<Box<RawValue>, RpcError>> + Send + 'static,
    {
        {
            let mut in_flight = self.in_flight.lock().expect("in-flight lock");
            if in_flight.contains_key(&id) {
                drop(in_flight);
                return Self::reply_error(
                    &origin,
                    Some(&id),
                    RpcError::new(
                        INVALID_REQUEST,
                        format!("request id {id} is already in use by a running request"),
                    ),
                );
            }
            in_flight.insert(id.clone(), cancel.clone());
        }
        let session = self.clone();
        self.tasks.spawn(async move {
            // Cancellation wins over a result that becomes ready at the same moment (a handler
            // that returns because it saw the cancellation): the answer is suppressed.
            let result = tokio::select! {
                biased;
                _ = cancel.cancelled() => None,
                result = future => Some(result),
            };
            session.in_flight.lock().expect("in-flight lock").remove(&id);
            match result {
                Some(Ok(result)) => Self::reply(&origin, &id, &*result),
                Some(Err(error)) => Self::reply_error(&origin, Some(&id), error),
                None => tracing::debug!(%id, "request cancelled; no answer sent"),
            }
        });
    }

    /// Sends a request to the client on `via` (the stream of the request being served) and
    /// waits for its answer.
    pub(crate) async fn request_client(
        &self,
        method: &str,
        params: Value,
        via: &Outbound,
        cancel: &CancellationToken,
    ) -> Result<Value, ClientError> {
        if self.stateless {
            return Err(ClientError::Unsupported(
                "requests to the client need a session; this server runs stateless".into(),
            ));
        }
        let id = self.next_request_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("pending lock").insert(id, tx);
        #[derive(Serialize)]
        struct Request<'a> {
            jsonrpc: &'static str,
            id: i64,
            method: &'a str,
            params: &'a Value,
        }
        via.send(
            serde_json::to_vec(&Request { jsonrpc: "2.0", id, method, params: &params }).expect("serializes"),
        );
        let outcome = tokio::select! {
            outcome = rx => outcome.unwrap_or(Err(ClientError::Disconnected)),
            _ = cancel.cancelled() => Err(ClientError::Cancelled),
            _ = self.closed.cancelled() => Err(ClientError::Disconnected),
            _ = tokio::time::sleep(self.server.client_request_timeout) => Err(ClientError::Timeout),
        };
        if outcome.is_err() {
            self.pending.lock().expect("pending lock").remove(&id);
            if matches!(outcome, Err(ClientError::Cancelled | ClientError::Timeout)) {
                let reason =
                    if matches!(outcome, Err(ClientError::Timeout)) { "timed out" } else { "cancelled" };
                via.send(encode_notification(
                    "notifications/cancelled",
                    &json!({"requestId": id, "reason": reason}),
                ));
            }
        }
        outcome
    }
}

#[derive(serde::Deserialize)]
struct MetaOnly {
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

fn reject_undecodable(origin: &Origin, bytes: &[u8], error: serde_json::Error) {
    let (code, message) = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(_)) => {
            (INVALID_REQUEST, "JSON-RPC batches are not supported (removed in MCP 2025-06-18)".to_owned())
        }
        Ok(_) => (INVALID_REQUEST, format!("not a JSON-RPC message: {error}")),
        Err(e) => (PARSE_ERROR, format!("invalid JSON: {e}")),
    };
    Session::reply_error(origin, None, RpcError::new(code, message));
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("valid JSON")
}

pub(crate) fn decode_params<T: serde::de::DeserializeOwned + Default>(
    params: Option<&RawValue>,
) -> Result<T, RpcError> {
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
