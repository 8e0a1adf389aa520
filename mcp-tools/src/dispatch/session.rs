//! One client connection: decodes each message, applies the lifecycle, routes by method (one
//! `match` over [`Method`]), runs requests concurrently, and matches the client's answers to the
//! server's own requests. Transports hand it messages together with the [`Origin`] whose queue
//! answers (and the messages related to a request: progress, logs, server→client requests) go
//! to; it knows nothing of stdio or HTTP.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::call::call_entry;
use super::methods::{self, Answer, Method};
use super::{Origin, Received, ServerEvent, Shared};
use crate::context::link::{ClientLink, RequestLink, Unreachable};
use crate::context::peer::{Outbound, Peer};
use crate::context::{CallParts, Context};
use crate::protocol::jsonrpc::{
    ErrorObject, RawMessage, decode_params, encode_error, encode_notification, encode_result, parse_id,
};
use crate::protocol::messages::{
    CallToolParams, CancelledParams, InitializeParams, ProgressToken, RequestMeta, SetLevelParams,
};
use crate::protocol::{
    INTERNAL_ERROR, INVALID_REQUEST, LATEST_PROTOCOL_VERSION, METHOD_NOT_FOUND, PARSE_ERROR, RequestId,
    SUPPORTED_PROTOCOL_VERSIONS,
};

pub(crate) struct Session {
    shared: Arc<Shared>,
    /// Where messages unrelated to any request go (list changes, resource updates): stdio's
    /// single queue, or an HTTP session's GET stream while one is open.
    standalone: Mutex<Option<Outbound>>,
    /// Set by `initialize`; requests other than `ping` need it.
    peer: OnceLock<Arc<Peer>>,
    /// How calls ask the client something.
    client: Arc<dyn ClientLink>,
    /// The server→client requests awaiting an answer (`None`: a stateless session sends none).
    requests: Option<Arc<RequestLink>>,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Resource URIs this client subscribed to.
    subscriptions: Mutex<HashSet<String>>,
    tasks: TaskTracker,
    closed: CancellationToken,
}

impl Session {
    pub fn new(shared: Arc<Shared>, standalone: Option<Outbound>) -> Arc<Session> {
        let requests = Arc::new(RequestLink::new(shared.client_request_timeout));
        Arc::new(Self::with(shared, standalone, Some(requests)))
    }

    /// A session that needs no `initialize` (stateless HTTP: every request stands alone).
    pub fn new_stateless(shared: Arc<Shared>, protocol_version: Option<&str>) -> Arc<Session> {
        let session = Self::with(shared, None, None);
        let mut peer = Peer::new();
        if let Some(v) = protocol_version.filter(|v| SUPPORTED_PROTOCOL_VERSIONS.contains(v)) {
            peer.protocol_version = v.to_owned();
        }
        let _ = session.peer.set(Arc::new(peer));
        Arc::new(session)
    }

    fn with(
        shared: Arc<Shared>,
        standalone: Option<Outbound>,
        requests: Option<Arc<RequestLink>>,
    ) -> Session {
        let client: Arc<dyn ClientLink> = match &requests {
            Some(link) => link.clone(),
            None => {
                Arc::new(Unreachable("requests to the client need a session; this server runs stateless"))
            }
        };
        Session {
            shared,
            standalone: Mutex::new(standalone),
            peer: OnceLock::new(),
            client,
            requests,
            in_flight: Mutex::new(HashMap::new()),
            subscriptions: Mutex::new(HashSet::new()),
            tasks: TaskTracker::new(),
            closed: CancellationToken::new(),
        }
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
        if let Some(requests) = &self.requests {
            requests.close();
        }
    }

    /// Waits (at most the server's shutdown timeout) for running requests to finish.
    pub async fn drain(&self) {
        self.tasks.close();
        if tokio::time::timeout(self.shared.shutdown_timeout, self.tasks.wait()).await.is_err() {
            tracing::warn!(
                running = self.tasks.len(),
                "shutting down with requests still running; their answers are dropped"
            );
        }
    }

    /// Forwards server-wide events (list changes, resource updates) to this client's standalone
    /// queue until the session closes.
    pub fn forward_events(self: &Arc<Self>) {
        let mut events = self.shared.events.subscribe();
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

    fn reply_error(origin: &Origin, id: Option<&RequestId>, error: ErrorObject) {
        tracing::debug!(?id, code = error.code, message = %error.message, "error response");
        origin.reply.send(encode_error(id, &error));
    }

    /// A message longer than the transport's limit: answered, then forgotten.
    pub fn reject_oversized(&self, origin: &Origin, length: usize) {
        Self::reply_error(
            origin,
            None,
            ErrorObject::new(
                INVALID_REQUEST,
                format!(
                    "message of {length} bytes exceeds this server's limit of {} bytes; it was discarded",
                    self.shared.max_message_bytes
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
                ErrorObject::new(INVALID_REQUEST, "not JSON-RPC 2.0: \"jsonrpc\" must be \"2.0\""),
            );
            return Received::Invalid;
        }
        let Some(method) = message.method.as_deref() else {
            if message.result.is_some() || message.error.is_some() {
                if let Some(requests) = &self.requests {
                    requests.resolve(message.id, message.result, message.error);
                }
                return Received::Notification;
            }
            let id = message.id.and_then(parse_id);
            Self::reply_error(
                origin,
                id.as_ref(),
                ErrorObject::new(INVALID_REQUEST, "a message needs a \"method\" (or a \"result\"/\"error\")"),
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
                ErrorObject::new(INVALID_REQUEST, "a request id must be a string or an integer"),
            );
            return Received::Invalid;
        };
        self.handle_request(id, method, message.params, origin);
        Received::Request
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

    /// Routes a request: the lifecycle first, then one arm per method.
    fn handle_request(
        self: &Arc<Self>,
        id: RequestId,
        name: &str,
        params: Option<&RawValue>,
        origin: &Origin,
    ) {
        let Some(method) = Method::from_name(name) else {
            return Self::reply_error(
                origin,
                Some(&id),
                ErrorObject::new(METHOD_NOT_FOUND, format!("method not found: `{name}`")),
            );
        };
        let peer = match self.peer.get() {
            Some(peer) => peer.clone(),
            None if method.before_initialize() => Arc::new(Peer::new()),
            None => {
                return Self::reply_error(
                    origin,
                    Some(&id),
                    ErrorObject::new(
                        INVALID_REQUEST,
                        format!("`{name}` before `initialize`: initialize the session first"),
                    ),
                );
            }
        };
        // Methods of a capability this server did not declare are unknown to it.
        let catalog = self.shared.catalog.load();
        if method.in_catalog() && !catalog.declares(name) {
            return Self::reply_error(
                origin,
                Some(&id),
                ErrorObject::new(METHOD_NOT_FOUND, format!("method not found: `{name}`")),
            );
        }
        match method {
            Method::Initialize => self.initialize(id, params, origin),
            Method::Ping => Self::reply(origin, &id, &json!({})),
            Method::ToolsList => match methods::list_tools(&self.shared.registry.load(), params) {
                Ok(page) => Self::reply(origin, &id, page),
                Err(e) => Self::reply_error(origin, Some(&id), e),
            },
            Method::ToolsCall => self.call_tool(id, params, peer, origin),
            Method::SetLogLevel => match decode_params::<SetLevelParams>(params) {
                Ok(p) => {
                    peer.set_log_level(p.level);
                    Self::reply(origin, &id, &json!({}));
                }
                Err(e) => Self::reply_error(origin, Some(&id), e),
            },
            Method::ResourcesList => Self::reply(origin, &id, &*methods::list_resources(&catalog)),
            Method::ResourceTemplatesList => {
                Self::reply(origin, &id, &*methods::list_resource_templates(&catalog))
            }
            Method::ResourcesRead => {
                let ctx = self.context(id.clone(), name.into(), progress_token(params), peer, origin);
                self.run(id, origin, methods::read_resource(&catalog, params, ctx.clone()), ctx);
            }
            Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
                match methods::subscription_uri(params) {
                    Ok(uri) => {
                        let mut subscriptions = self.subscriptions.lock().expect("subscriptions lock");
                        if method == Method::ResourcesSubscribe {
                            subscriptions.insert(uri);
                        } else {
                            subscriptions.remove(&uri);
                        }
                        drop(subscriptions);
                        Self::reply(origin, &id, &json!({}));
                    }
                    Err(e) => Self::reply_error(origin, Some(&id), e),
                }
            }
            Method::PromptsList => Self::reply(origin, &id, &*methods::list_prompts(&catalog)),
            Method::PromptsGet => {
                let ctx = self.context(id.clone(), name.into(), progress_token(params), peer, origin);
                self.run(id, origin, methods::get_prompt(&catalog, params, ctx.clone()), ctx);
            }
            Method::Complete => {
                let ctx = self.context(id.clone(), name.into(), progress_token(params), peer, origin);
                self.run(id, origin, methods::complete(&catalog, params, ctx.clone()), ctx);
            }
        }
    }

    /// Runs a method's answer concurrently, or answers at once with its error.
    fn run(
        self: &Arc<Self>,
        id: RequestId,
        origin: &Origin,
        answer: Result<Answer, ErrorObject>,
        ctx: Context,
    ) {
        match answer {
            Ok(future) => self.spawn_request(id, origin.clone(), ctx.cancellation_token(), future),
            Err(error) => Self::reply_error(origin, Some(&id), error),
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
                ErrorObject::new(INVALID_REQUEST, "the session is already initialized"),
            );
        }
        let shared = &self.shared;
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": shared.capabilities(),
            "serverInfo": shared.info,
        });
        if let Some(instructions) = &shared.instructions {
            result["instructions"] = json!(instructions);
        }
        Self::reply(origin, &id, &result);
    }

    /// The context of one request.
    fn context(
        &self,
        id: RequestId,
        subject: Arc<str>,
        progress_token: Option<ProgressToken>,
        peer: Arc<Peer>,
        origin: &Origin,
    ) -> Context {
        Context::new(CallParts {
            request_id: id,
            subject,
            progress_token,
            peer,
            state: self.shared.state.clone(),
            cancel: CancellationToken::new(),
            reply: origin.reply.clone(),
            client: self.client.clone(),
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
            return Self::reply_error(
                origin,
                Some(&id),
                ErrorObject::invalid_params("tools/call needs params"),
            );
        };
        let call: CallToolParams<'_> = match serde_json::from_str(params.get()) {
            Ok(p) => p,
            Err(e) => {
                return Self::reply_error(
                    origin,
                    Some(&id),
                    ErrorObject::invalid_params(format!("invalid tools/call params: {e}")),
                );
            }
        };
        let Some(entry) = self.shared.registry.load().get(&call.name).cloned() else {
            return Self::reply_error(
                origin,
                Some(&id),
                ErrorObject::invalid_params(format!("unknown tool `{}`", call.name)),
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
                .map_err(|e| ErrorObject::new(INTERNAL_ERROR, e.to_string()))
        });
    }

    /// Runs a request concurrently; its answer goes to `origin` unless the client cancels it.
    fn spawn_request<F>(self: &Arc<Self>, id: RequestId, origin: Origin, cancel: CancellationToken, future: F)
    where
        F: Future<Output = Result<Box<RawValue>, ErrorObject>> + Send + 'static,
    {
        {
            let mut in_flight = self.in_flight.lock().expect("in-flight lock");
            if in_flight.contains_key(&id) {
                drop(in_flight);
                return Self::reply_error(
                    &origin,
                    Some(&id),
                    ErrorObject::new(
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
}

/// The progress token in a request's `_meta`, if any.
fn progress_token(params: Option<&RawValue>) -> Option<ProgressToken> {
    #[derive(serde::Deserialize)]
    struct MetaOnly {
        #[serde(rename = "_meta", default)]
        meta: Option<RequestMeta>,
    }
    params
        .and_then(|p| serde_json::from_str::<MetaOnly>(p.get()).ok())
        .and_then(|m| m.meta)
        .and_then(|m| m.progress_token)
}

fn reject_undecodable(origin: &Origin, bytes: &[u8], error: serde_json::Error) {
    let (code, message) = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(_)) => {
            (INVALID_REQUEST, "JSON-RPC batches are not supported (removed in MCP 2025-06-18)".to_owned())
        }
        Ok(_) => (INVALID_REQUEST, format!("not a JSON-RPC message: {error}")),
        Err(e) => (PARSE_ERROR, format!("invalid JSON: {e}")),
    };
    Session::reply_error(origin, None, ErrorObject::new(code, message));
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("valid JSON")
}
