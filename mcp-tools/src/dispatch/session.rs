//! One client connection: decodes each message, serves each request in its era (a 2025-11-25
//! session's lifecycle, or a 2026-07-28 request's own envelope), routes by method (one `match`
//! over [`Method`]), runs requests concurrently, and matches the client's answers to the
//! server's own requests. Transports hand it messages together with the [`Origin`] whose queue
//! answers (and the messages related to a request: progress, logs, server→client requests) go
//! to; it knows nothing of stdio or HTTP.

use std::borrow::Cow;
use std::collections::HashSet;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use futures_util::FutureExt as _;
use futures_util::future::Either;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::call::{call_entry, panic_message, timed_out};
use super::events::ServerEvent;
use super::extensions::{ExtensionRequest, Extensions};
use super::methods::{self, Answer, Method};
use super::observe::{self, Begun, Observed, Watched};
use super::pipeline::{Listing, Viewer};
use super::quota::{Caller, next_connection};
#[cfg(feature = "http")]
use super::session_store::SessionRecord;
use super::shared::Shared;
use super::stateless::{self, ListenFilter, Round, StatelessClient};
use super::tasks;
use super::{Origin, Received};
use crate::context::auth::permits;
use crate::context::link::{ClientLink, InputLink, RequestLink, Unreachable};
use crate::context::peer::{Outbound, Peer};
use crate::context::{CallParts, Context};
use crate::model::task::TaskSupport;
use crate::protocol::extensions::TASKS;
use crate::protocol::jsonrpc::{
    ErrorObject, RawMessage, decode_params, encode_error, encode_notification, encode_raw_result,
    encode_result, parse_id, parse_message, shown,
};
use crate::protocol::messages::{
    CallToolParams, CancelledParams, InitializeParams, ProgressToken, RequestMeta, SetLevelParams,
};
use crate::protocol::stateless::{CacheHint, StatelessParams, complete, complete_value, has_envelope};
use crate::protocol::{
    Era, HANDSHAKE_VERSIONS, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, LATEST_HANDSHAKE_VERSION,
    METHOD_NOT_FOUND, RequestId,
};
use crate::registry::tools::ToolEntry;

pub(crate) struct Session {
    shared: Arc<Shared>,
    /// Where messages unrelated to any request go (list changes, resource updates): stdio's
    /// single queue, or an HTTP session's GET stream while one is open.
    standalone: Mutex<Option<Outbound>>,
    /// Set by `initialize`; requests other than `ping` need it (2025-11-25).
    peer: OnceLock<Arc<Peer>>,
    /// The connection's era, once a request decided it (see [`Session::era_of`]).
    era: OnceLock<Era>,
    /// How calls ask the client something.
    client: Arc<dyn ClientLink>,
    /// The server→client requests awaiting an answer (`None`: a stateless session sends none).
    requests: Option<Arc<RequestLink>>,
    /// The id under which this 2025-11-25 session is shared with the service's other instances
    /// (set by the HTTP endpoint when it is): an answer to a request none of this copy's calls
    /// sent is passed to them, since one of theirs did.
    #[cfg(feature = "http")]
    shared_as: OnceLock<String>,
    /// Requests running or waiting for a place, by id, and those waiting.
    in_flight: Mutex<InFlight>,
    next_generation: AtomicU64,
    /// Resource URIs this client subscribed to.
    subscriptions: Mutex<HashSet<String>>,
    /// The connection's number, for a session that is one (stdio, in process, a 2025-11-25
    /// HTTP session); `None` for one HTTP request of the stateless revision.
    connection: Option<u64>,
    tasks: TaskTracker,
    /// The input ended: requests that would run forever (listen streams) finish.
    stopping: CancellationToken,
    closed: CancellationToken,
}

impl Session {
    pub fn new(shared: Arc<Shared>, standalone: Option<Outbound>) -> Arc<Session> {
        let requests = Arc::new(RequestLink::new(shared.client_request_timeout));
        let mut session = Self::with(shared, standalone, Some(requests));
        session.connection = Some(next_connection());
        Arc::new(session)
    }

    /// A 2025-11-25 session that needs no `initialize` (stateless mode of the HTTP transport:
    /// every request stands alone); the version is the request's header, if any.
    #[cfg(feature = "http")]
    pub fn new_stateless(shared: Arc<Shared>, protocol_version: Option<&str>) -> Arc<Session> {
        let session = Self::with(shared, None, None);
        // A request without the header is assumed to be 2025-03-26 (the revision that
        // introduced the header), as the specification says.
        let mut peer = Peer::new();
        let known = protocol_version.and_then(|v| HANDSHAKE_VERSIONS.iter().find(|known| **known == v));
        peer.protocol_version = Cow::Borrowed(known.unwrap_or(&"2025-03-26"));
        let _ = session.peer.set(Arc::new(peer));
        let _ = session.era.set(Era::Handshake);
        Arc::new(session)
    }

    /// A copy of a shared 2025-11-25 session, made from its record on an instance that did not
    /// create it: initialized, with the record's client, revision, log level and subscriptions.
    #[cfg(feature = "http")]
    pub fn restore(shared: Arc<Shared>, record: &SessionRecord) -> Arc<Session> {
        let session = Self::new(shared, None);
        let mut peer = Peer::new();
        peer.client_info = record.client_info.clone();
        peer.client_capabilities = record.client_capabilities.clone();
        peer.protocol_version = match HANDSHAKE_VERSIONS.iter().find(|v| **v == record.protocol_version) {
            Some(known) => Cow::Borrowed(known),
            None => Cow::Owned(record.protocol_version.clone()),
        };
        let _ = session.peer.set(Arc::new(peer));
        let _ = session.era.set(Era::Handshake);
        session.apply(record);
        session
    }

    /// What a shared store keeps of this session (`None`: not initialized).
    #[cfg(feature = "http")]
    pub fn record(&self, owner: Option<String>, caller: String) -> Option<SessionRecord> {
        let peer = self.peer.get()?;
        let mut subscriptions: Vec<String> =
            self.subscriptions.lock().expect("subscriptions lock").iter().cloned().collect();
        subscriptions.sort();
        Some(SessionRecord {
            owner,
            caller,
            protocol_version: peer.protocol_version.to_string(),
            client_info: peer.client_info.clone(),
            client_capabilities: peer.client_capabilities.clone(),
            log_level: peer.log_level(),
            subscriptions,
        })
    }

    /// Takes what the client changed through another instance (its log level, its
    /// subscriptions) from the session's `record`.
    #[cfg(feature = "http")]
    pub fn apply(&self, record: &SessionRecord) {
        if let (Some(peer), Some(level)) = (self.peer.get(), record.log_level) {
            peer.set_log_level(level);
        }
        *self.subscriptions.lock().expect("subscriptions lock") =
            record.subscriptions.iter().cloned().collect();
    }

    /// The session of one 2026-07-28 request (over HTTP every request stands alone).
    #[cfg(feature = "http")]
    pub fn for_request(shared: Arc<Shared>) -> Arc<Session> {
        let session = Self::with(shared, None, None);
        let _ = session.era.set(Era::Stateless);
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
            era: OnceLock::new(),
            client,
            requests,
            #[cfg(feature = "http")]
            shared_as: OnceLock::new(),
            in_flight: Mutex::new(InFlight::default()),
            next_generation: AtomicU64::new(0),
            subscriptions: Mutex::new(HashSet::new()),
            connection: None,
            tasks: TaskTracker::new(),
            stopping: CancellationToken::new(),
            closed: CancellationToken::new(),
        }
    }

    pub fn is_initialized(&self) -> bool {
        self.peer.get().is_some()
    }

    /// Who sent a request that came from `origin`: its verified identity, else this connection,
    /// else its network address.
    fn caller(&self, origin: &Origin) -> Caller {
        let http = origin.http.as_deref();
        Caller::of(
            http.and_then(|h| h.auth.as_deref()),
            self.connection,
            http.and_then(|h| h.peer_addr).map(|a| a.ip()),
        )
    }

    /// Sets (or clears) the queue for messages unrelated to a request.
    #[cfg(feature = "http")]
    pub fn set_standalone(&self, outbound: Option<Outbound>) {
        *self.standalone.lock().expect("standalone lock") = outbound;
    }

    /// Whether something is going on: a request running, or a stream open for notifications.
    #[cfg(feature = "http")]
    pub fn is_busy(&self) -> bool {
        self.is_running() || self.has_standalone()
    }

    /// Whether a request is running.
    pub fn is_running(&self) -> bool {
        !self.in_flight.lock().expect("in-flight lock").entries.is_empty()
    }

    #[cfg(feature = "http")]
    pub fn has_standalone(&self) -> bool {
        self.standalone.lock().expect("standalone lock").as_ref().is_some_and(|o| !o.is_closed())
    }

    /// Ends the session: running calls are cancelled and pending client requests fail.
    pub fn close(&self) {
        self.closed.cancel();
        let mut in_flight = self.in_flight.lock().expect("in-flight lock");
        // Requests waiting for a place are dropped unanswered, like the running ones.
        in_flight.waiting.clear();
        for (_, (_, token)) in in_flight.entries.drain() {
            token.cancel();
        }
        drop(in_flight);
        if let Some(requests) = &self.requests {
            requests.close();
        }
    }

    /// Waits (at most the server's shutdown timeout) for running requests to finish.
    pub async fn drain(&self) {
        self.stopping.cancel();
        self.tasks.close();
        if tokio::time::timeout(self.shared.shutdown_timeout, self.tasks.wait()).await.is_err() {
            tracing::warn!(
                running = self.tasks.len(),
                "shutting down with requests still running; their answers are dropped"
            );
        }
    }

    /// Marks this 2025-11-25 session as shared with the service's other instances under `id`
    /// (its `Mcp-Session-Id`): its requests to the client are numbered so that no other copy
    /// uses the same ids, and answers it was not waiting for are passed to the other copies.
    #[cfg(feature = "http")]
    pub fn share_as(&self, id: &str) {
        if self.shared_as.set(id.to_owned()).is_ok()
            && let Some(requests) = &self.requests
        {
            requests.spread_ids();
        }
    }

    /// Hands over an answer another instance's copy of this session received (see
    /// [`share_as`](Self::share_as)); ignored when none of this copy's requests waits for it.
    #[cfg(feature = "http")]
    pub fn take_passed_answer(&self, response: &Value) {
        let Some(requests) = &self.requests else { return };
        let raw = |member: &str| response.get(member).and_then(|v| serde_json::value::to_raw_value(v).ok());
        let (id, result, error) = (raw("id"), raw("result"), raw("error"));
        requests.resolve(id.as_deref(), result.as_deref(), error.as_deref());
    }

    /// An answer from the client that no request of this copy waits for: in a shared session,
    /// the other instances hear it (one of them sent the request); else it is dropped.
    #[cfg_attr(not(feature = "http"), allow(unused_variables))]
    fn pass_answer_on(&self, id: Option<&RawValue>, result: Option<&RawValue>, error: Option<&RawValue>) {
        #[cfg(feature = "http")]
        if let Some(session_id) = self.shared_as.get() {
            let member =
                |raw: Option<&RawValue>| raw.and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok());
            let mut response = serde_json::Map::new();
            response.insert("id".into(), member(id).unwrap_or(Value::Null));
            if let Some(result) = member(result) {
                response.insert("result".into(), result);
            } else if let Some(error) = member(error) {
                response.insert("error".into(), error);
            }
            let event = ServerEvent::SessionAnswer(session_id.clone(), Arc::new(Value::Object(response)));
            self.shared.events.tell_others(&event);
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
            // Tasks are of the stateless era: a session hears nothing of them; the sessions'
            // own events are the HTTP endpoint's.
            ServerEvent::TaskChanged(..)
            | ServerEvent::SessionChanged(_)
            | ServerEvent::SessionEnded(_)
            | ServerEvent::SessionAnswer(..) => return,
        };
        if let Some(out) = self.standalone.lock().expect("standalone lock").as_ref() {
            out.notify(message);
        }
    }

    fn reply(origin: &Origin, id: &RequestId, result: &(impl Serialize + ?Sized)) {
        if let Some(observed) = &origin.observed {
            observed.end(observe::Outcome::Answered);
        }
        origin.reply.send(encode_result(id, result));
    }

    /// [`reply`](Self::reply) for a result that is JSON text already.
    fn reply_raw(origin: &Origin, id: &RequestId, result: &RawValue) {
        if let Some(observed) = &origin.observed {
            observed.end_with_result(result);
        }
        origin.reply.send(encode_raw_result(id, result));
    }

    fn reply_error(origin: &Origin, id: Option<&RequestId>, error: ErrorObject) {
        tracing::debug!(?id, code = error.code, message = %error.message, "error response");
        if let Some(observed) = &origin.observed {
            observed.end(observe::Outcome::Error(error.code));
        }
        origin.reply.send(encode_error(id, &error));
    }

    /// The origin of a request watched by the server's observer (telemetry), if it has one:
    /// told what `read` (the request's params, read once for it and its handling) names.
    fn observed(
        &self,
        id: &RequestId,
        name: &str,
        read: Option<&StatelessParams<'_>>,
        origin: &Origin,
    ) -> Option<Origin> {
        let observer = self.shared.observer.get()?.as_ref();
        let uri: Option<Cow<'_, str>> =
            read.and_then(|read| read.uri).and_then(|uri| serde_json::from_str(uri.get()).ok());
        let http = origin.http.as_deref();
        let begun = Begun {
            method: name,
            id,
            target: read.and_then(|read| read.name.as_deref()).or(uri.as_deref()),
            protocol_version: self.peer.get().map(|p| &*p.protocol_version),
            session_id: http.and_then(|h| h.session_id.as_deref()),
            meta: read.and_then(|read| read.meta),
            http,
        };
        Some(Origin { observed: Some(Observed::begin(observer, &begun)), ..origin.clone() })
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
                    self.shared.limits.max_message_bytes
                ),
            ),
        );
    }

    /// Handles one message (one line of stdio, one HTTP body).
    pub fn handle_message(self: &Arc<Self>, bytes: &[u8], origin: &Origin) -> Received {
        self.handle_parsed(parse_message(bytes, self.shared.limits.max_json_depth), origin)
    }

    /// Handles one message its transport has already parsed ([`parse_message`]).
    pub fn handle_parsed(
        self: &Arc<Self>,
        parsed: Result<RawMessage<'_>, ErrorObject>,
        origin: &Origin,
    ) -> Received {
        let message = match parsed {
            Ok(message) => message,
            Err(error) => {
                Self::reply_error(origin, None, error);
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
                if let Some(requests) = &self.requests
                    && !requests.resolve(message.id, message.result, message.error)
                {
                    self.pass_answer_on(message.id, message.result, message.error);
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
                let token = self
                    .in_flight
                    .lock()
                    .expect("in-flight lock")
                    .entries
                    .remove(&params.request_id)
                    .map(|(_, token)| token);
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

    /// The era a request is served in: the connection's, once a request decided it (a
    /// successful `initialize`, or a valid stateless request), else the request's own (its
    /// envelope, or `server/discover`, make it stateless).
    fn era_of(&self, name: &str, params: Option<&RawValue>) -> Era {
        if let Some(era) = self.shared.only_era {
            return era;
        }
        match self.era.get() {
            Some(era) => *era,
            None if name == "server/discover" || has_envelope(params) => Era::Stateless,
            None => Era::Handshake,
        }
    }

    /// Routes a request: its era's front end (the session's lifecycle, or the request's own
    /// envelope), then one arm per method.
    fn handle_request(
        self: &Arc<Self>,
        id: RequestId,
        name: &str,
        params: Option<&RawValue>,
        origin: &Origin,
    ) {
        let era = self.era_of(name, params);
        // A stateless request's params are read once, here: its envelope, a call's tool, and
        // what an observer is told of it (an error in them is answered once the method is known).
        let decoded = match era {
            Era::Handshake => None,
            Era::Stateless => Some(StatelessParams::decode(params)),
        };
        // A 2025-11-25 request an observer watches is read once too, for the observer and (a
        // `tools/call`) the call.
        let read = match era {
            Era::Handshake if self.shared.observer.get().is_some() => StatelessParams::decode(params).ok(),
            _ => None,
        };
        let read_already = decoded.as_ref().and_then(|d| d.as_ref().ok()).or(read.as_ref());
        let observed = self.observed(&id, name, read_already, origin);
        let origin = observed.as_ref().unwrap_or(origin);
        // A method of the session's table, else one an extension of this era answers.
        let known = Method::from_name(name).filter(|m| m.exists_in(era));
        let extension = || self.shared.extensions.method(name, era).map(|_| Method::Extension);
        let Some(method) = known.or_else(extension) else {
            let why = match era {
                Era::Stateless if Method::from_name(name).is_some() => {
                    format!(
                        "method not found: `{}` does not exist in the stateless protocol (2026-07-28)",
                        shown(name)
                    )
                }
                _ => format!("method not found: `{}`", shown(name)),
            };
            return Self::reply_error(origin, Some(&id), ErrorObject::new(METHOD_NOT_FOUND, why));
        };
        let decoded = match decoded {
            None => None,
            Some(Ok(decoded)) => Some(decoded),
            Some(Err(why)) => return Self::reply_error(origin, Some(&id), ErrorObject::invalid_params(why)),
        };
        let front = match &decoded {
            None => self.handshake_front(method, name),
            Some(decoded) => self.stateless_front(method, params, decoded),
        };
        let front = match front {
            Ok(front) => front,
            Err(error) => return Self::reply_error(origin, Some(&id), error),
        };
        if let (Some(observed), Era::Stateless) = (&origin.observed, front.era) {
            observed.protocol_version(&front.peer.protocol_version);
        }
        // The one check of what the client declared: an extension's method may need it.
        if let Err(error) = self.shared.extensions.check(name, &front.peer.client_capabilities) {
            return Self::reply_error(origin, Some(&id), error);
        }
        // Methods of a capability this server did not declare are unknown to it.
        let catalog = self.shared.catalog.load();
        if method.in_catalog() && !catalog.declares(name) {
            return Self::reply_error(
                origin,
                Some(&id),
                ErrorObject::new(METHOD_NOT_FOUND, format!("method not found: `{}`", shown(name))),
            );
        }
        // Over HTTP with authorization, the caller's identity: what it may see and use.
        let caller = origin.http.as_deref().and_then(|h| h.auth.as_deref());
        let pipeline = &self.shared.pipeline;
        let list_cache = match caller {
            // Lists may vary with the caller's authorization (or with a list filter): no shared
            // cache may keep them.
            Some(_) => Some(CacheHint { public: false, ..self.shared.list_cache }),
            None if pipeline.filters_lists() => Some(CacheHint { public: false, ..self.shared.list_cache }),
            None => Some(self.shared.list_cache),
        };
        // Who a list filter shows a list to.
        let viewer = || Viewer::new(caller, front.era, &front.peer.client_info, origin.http.as_deref());
        match method {
            Method::Initialize => self.initialize(id, params, origin),
            Method::Ping => Self::reply(origin, &id, &json!({})),
            Method::ServerDiscover => {
                let shared = &self.shared;
                let capabilities = shared.capabilities(Era::Stateless);
                let discovered =
                    stateless::discover(&shared.info, shared.instructions.as_deref(), capabilities);
                Self::reply(origin, &id, &*discovered)
            }
            Method::SubscriptionsListen => self.listen(id, params, &front, origin),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
                let tasks = self.shared.tasks.clone();
                let params: Option<Box<RawValue>> = params.map(ToOwned::to_owned);
                // Only the caller who created a task may see it.
                let owner = self.caller(origin).owner();
                self.spawn_request(id, origin.clone(), CancellationToken::new(), async move {
                    let (params, owner) = (params.as_deref(), owner.as_deref());
                    match method {
                        Method::TasksGet => tasks.get(params, owner).await,
                        Method::TasksUpdate => tasks.update(params, owner).await,
                        _ => tasks.cancel(params, owner).await,
                    }
                });
            }
            Method::ToolsList if pipeline.filters_lists() => {
                let registry = self.shared.registry.load();
                let keep = |item: &mut Map<String, Value>| pipeline.shows(Listing::Tool, &viewer(), item);
                match methods::list_tools_shown(&registry, params, front.era, caller, keep) {
                    Ok(page) => Self::reply_raw(origin, &id, &page),
                    Err(e) => Self::reply_error(origin, Some(&id), e),
                }
            }
            Method::ToolsList => {
                match methods::list_tools(&self.shared.registry.load(), params, front.era, caller) {
                    Ok(page) => Self::reply_raw(origin, &id, &page),
                    Err(e) => Self::reply_error(origin, Some(&id), e),
                }
            }
            Method::ToolsCall => self.call_tool(id, params, decoded.as_ref(), read.as_ref(), front, origin),
            Method::SetLogLevel => match decode_params::<SetLevelParams>(params) {
                Ok(p) => {
                    front.peer.set_log_level(p.level);
                    Self::reply(origin, &id, &json!({}));
                }
                Err(e) => Self::reply_error(origin, Some(&id), e),
            },
            Method::ResourcesList => {
                let keep = |item: &mut Map<String, Value>| pipeline.shows(Listing::Resource, &viewer(), item);
                let resources = methods::list_resources(&catalog, caller, keep);
                Self::reply_complete(origin, &id, front.era, &resources, list_cache)
            }
            Method::ResourceTemplatesList => {
                let keep = |item: &mut Map<String, Value>| {
                    pipeline.shows(Listing::ResourceTemplate, &viewer(), item)
                };
                let templates = methods::list_resource_templates(&catalog, caller, keep);
                Self::reply_complete(origin, &id, front.era, &templates, list_cache)
            }
            Method::ResourcesRead => {
                let read = |ctx| methods::read_resource(&catalog, params, ctx);
                let private = Some(CacheHint { ttl_ms: 0, public: false });
                self.run(id, name, params, front, origin, private, read);
            }
            Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
                let subscribed = methods::subscription_uri(params).and_then(|uri| {
                    let mut subscriptions = self.subscriptions.lock().expect("subscriptions lock");
                    if method == Method::ResourcesUnsubscribe {
                        subscriptions.remove(&uri);
                        return Ok(());
                    }
                    // Only what this server serves (to this caller), and a bounded number of them.
                    let Some(found) = catalog.find_resource(&uri) else {
                        return Err(no_such_resource(&uri));
                    };
                    if !permits(caller, &found.scopes) {
                        return Err(ErrorObject::insufficient_scope(&found.scopes));
                    }
                    let limit = self.shared.limits.max_subscriptions;
                    if !subscriptions.contains(&uri) && subscriptions.len() >= limit {
                        return Err(ErrorObject::invalid_params(format!(
                            "this session already has {limit} subscriptions, this server's limit; unsubscribe from some first"
                        )));
                    }
                    subscriptions.insert(uri);
                    Ok(())
                });
                match subscribed {
                    Ok(()) => Self::reply(origin, &id, &json!({})),
                    Err(e) => Self::reply_error(origin, Some(&id), e),
                }
            }
            Method::PromptsList => {
                let keep = |item: &mut Map<String, Value>| pipeline.shows(Listing::Prompt, &viewer(), item);
                let prompts = methods::list_prompts(&catalog, caller, keep);
                Self::reply_complete(origin, &id, front.era, &prompts, list_cache)
            }
            Method::PromptsGet => self
                .run(id, name, params, front, origin, None, |ctx| methods::get_prompt(&catalog, params, ctx)),
            Method::Complete => self
                .run(id, name, params, front, origin, None, |ctx| methods::complete(&catalog, params, ctx)),
            Method::Extension => {
                let Some(method) = self.shared.extensions.method(name, front.era) else {
                    unreachable!("routed only when an extension of its era answers it")
                };
                let handler = method.handler.as_ref().expect("an extension's own method has a handler");
                let request = ExtensionRequest { params, era: front.era, caller };
                let cache = if method.cacheable { list_cache } else { None };
                match handler(request) {
                    Ok(result) => {
                        let result = serde_json::value::to_raw_value(&result).expect("JSON serializes");
                        Self::reply_complete(origin, &id, front.era, &result, cache)
                    }
                    Err(error) => Self::reply_error(origin, Some(&id), error),
                }
            }
        }
    }

    /// The lifecycle of a 2025-11-25 session: everything but `initialize` and `ping` needs it.
    fn handshake_front(&self, method: Method, name: &str) -> Result<Front, ErrorObject> {
        let peer = match self.peer.get() {
            Some(peer) => peer.clone(),
            None if method.before_initialize() => Arc::new(Peer::new()),
            None => {
                return Err(ErrorObject::new(
                    INVALID_REQUEST,
                    format!("`{name}` before `initialize`: initialize the session first"),
                ));
            }
        };
        Ok(Front { era: Era::Handshake, peer, round: None, progress_token: None, tool: None })
    }

    /// The envelope of a 2026-07-28 request: its revision and the client's capabilities (the
    /// request's peer), its progress token, and the answers of a previous round.
    fn stateless_front(
        &self,
        method: Method,
        params: Option<&RawValue>,
        decoded: &StatelessParams<'_>,
    ) -> Result<Front, ErrorObject> {
        let StatelessClient { peer, progress_token } = self.shared.envelopes.client(decoded.meta)?;
        let tool = match (method, &decoded.name) {
            (Method::ToolsCall, Some(name)) => self.shared.registry.load().get(name).cloned(),
            _ => None,
        };
        // A tool that cannot reach the client (no `Context` parameter) and never runs as a task
        // asks nothing: its calls keep no record of the request for a `requestState`.
        let may_ask = match &tool {
            Some(tool) => tool.reaches_client || tool.task != TaskSupport::Forbidden,
            None => method.takes_input(),
        };
        // A state sent anyway must still be one this server sealed for this request.
        let opens_state = method.takes_input() && decoded.request_state.is_some();
        let round = if may_ask || opens_state {
            let mut round = Round::new(method.name(), params);
            if let Some(state) = decoded.request_state() {
                let limit = self.shared.limits.max_request_state_bytes;
                round.answers = stateless::open(&self.shared.state_key(), round.binding(), &state, limit)?;
            }
            Some(round)
        } else {
            None
        };
        let _ = self.era.set(Era::Stateless);
        Ok(Front { era: Era::Stateless, peer, round, progress_token, tool })
    }

    /// A result as `era` shapes it: 2026-07-28 results are marked complete (lists and reads with
    /// their cache hints); 2025-11-25 ones are sent as they are.
    fn reply_complete(
        origin: &Origin,
        id: &RequestId,
        era: Era,
        result: &RawValue,
        cache: Option<CacheHint>,
    ) {
        match era {
            Era::Handshake => Self::reply(origin, id, result),
            Era::Stateless => Self::reply(origin, id, &*complete(result, cache)),
        }
    }

    /// Runs a method whose answer comes from a handler, concurrently, in its era: a stateless
    /// request's handler may ask the client (an `input_required` result), its result is marked
    /// complete, and its errors are said in the revision's terms.
    #[allow(clippy::too_many_arguments)]
    fn run(
        self: &Arc<Self>,
        id: RequestId,
        name: &str,
        params: Option<&RawValue>,
        front: Front,
        origin: &Origin,
        cache: Option<CacheHint>,
        start: impl FnOnce(Context) -> Result<Answer, ErrorObject>,
    ) {
        let meta = meta_of(params);
        // A stateless request's token was read with its envelope.
        let progress_token = match front.era {
            Era::Handshake => meta.and_then(progress_token_in),
            Era::Stateless => front.progress_token.clone(),
        };
        let (ctx, input) = self.context_for(id.clone(), name.into(), progress_token, meta, &front, origin);
        let cancel = ctx.cancellation_token();
        // The handler's synchronous part (a runtime closure's) runs here: a panic in it is an
        // internal error like one in its future, not the end of the connection.
        let answer = match std::panic::catch_unwind(AssertUnwindSafe(|| start(ctx))) {
            Ok(Ok(answer)) => answer,
            Ok(Err(error)) => return Self::reply_error(origin, Some(&id), front.finish_error(error)),
            Err(panic) => {
                tracing::error!(%id, panic = %panic_message(&*panic), "a request's handler panicked");
                let error = ErrorObject::new(
                    INTERNAL_ERROR,
                    "the request failed: its handler panicked (details are in the server's log)",
                );
                return Self::reply_error(origin, Some(&id), error);
            }
        };
        let key = self.shared.state_key();
        let timeout = self.shared.limits.request_timeout;
        let method = name.to_owned();
        // Made inside the request's future rather than captured by it (see `call_tool`).
        let answer = move || async move {
            let Some(limit) = timeout else { return answer.await };
            tokio::time::timeout(limit, answer).await.unwrap_or_else(|_| {
                tracing::warn!(method, ?limit, "request timed out and was cancelled");
                Err(ErrorObject::new(
                    INTERNAL_ERROR,
                    format!(
                        "`{method}` did not finish within {} and was cancelled",
                        humantime::format_duration(limit)
                    ),
                ))
            })
        };
        let max_state = self.shared.limits.max_request_state_bytes;
        self.spawn_request(id, origin.clone(), cancel, async move {
            match until_input(std::pin::pin!(answer()), input.as_deref()).await {
                Ok(Ok(result)) => Ok(front.finish(&result, cache)),
                Ok(Err(error)) => Err(front.finish_error(error)),
                Err(questions) => {
                    let input = input.as_deref().expect("only a call with an input link asks questions");
                    front.input_required(&key, questions, input, max_state)
                }
            }
        });
    }

    fn initialize(self: &Arc<Self>, id: RequestId, params: Option<&RawValue>, origin: &Origin) {
        let params = match decode_params::<InitializeParams>(params) {
            Ok(p) => p,
            Err(e) => return Self::reply_error(origin, Some(&id), e),
        };
        let version = if HANDSHAKE_VERSIONS.contains(&params.protocol_version.as_str()) {
            params.protocol_version
        } else {
            LATEST_HANDSHAKE_VERSION.to_owned()
        };
        // The session keeps what the client declares: a bounded amount of it.
        let declared = serde_json::to_string(&params.capabilities).map_or(usize::MAX, |s| s.len());
        let limit = self.shared.limits.max_capabilities_bytes;
        if declared > limit {
            let error = ErrorObject::invalid_params(format!(
                "the declared capabilities take {declared} bytes, more than this server's limit of {limit}"
            ));
            return Self::reply_error(origin, Some(&id), error);
        }
        let mut peer = Peer::new();
        peer.client_info = params.client_info.unwrap_or_default();
        peer.client_capabilities = params.capabilities;
        peer.protocol_version = Cow::Owned(version.clone());
        tracing::info!(client = %peer.client_info.name, version = %peer.client_info.version, protocol = %version, "initialize");
        if self.peer.set(Arc::new(peer)).is_err() {
            return Self::reply_error(
                origin,
                Some(&id),
                ErrorObject::new(INVALID_REQUEST, "the session is already initialized"),
            );
        }
        let _ = self.era.set(Era::Handshake);
        let shared = &self.shared;
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": shared.capabilities(Era::Handshake),
            "serverInfo": shared.info,
        });
        if let Some(instructions) = &shared.instructions {
            result["instructions"] = json!(instructions);
        }
        Self::reply(origin, &id, &result);
    }

    /// The context of one request, and the link that records its questions when they make an
    /// `input_required` result (stateless requests that may take input).
    fn context_for(
        &self,
        id: RequestId,
        subject: Arc<str>,
        progress_token: Option<ProgressToken>,
        meta: Option<&RawValue>,
        front: &Front,
        origin: &Origin,
    ) -> (Context, Option<Arc<InputLink>>) {
        let (client, input): (Arc<dyn ClientLink>, _) = match (&front.era, &front.round) {
            (Era::Handshake, _) => (self.client.clone(), None),
            (Era::Stateless, Some(round)) => {
                let link = Arc::new(InputLink::new(round.answers.clone(), round.params()));
                (link.clone(), Some(link))
            }
            (Era::Stateless, None) => (CANNOT_ASK.clone(), None),
        };
        let ctx = Context::new(CallParts {
            request_id: id,
            subject,
            progress_token,
            peer: front.peer.clone(),
            state: self.shared.state.clone(),
            cancel: CancellationToken::new(),
            reply: origin.reply.clone(),
            client,
            http: origin.http.clone(),
            close_stream: origin.close.clone(),
            meta: meta.map(ToOwned::to_owned),
            meta_read: std::sync::OnceLock::new(),
            connection: self.connection,
            caller_read: std::sync::OnceLock::new(),
        });
        (ctx, input)
    }

    /// `tools/call`; `decoded` are a stateless request's params, read already, and `read` a
    /// 2025-11-25 request's, when they were read for its observer.
    fn call_tool(
        self: &Arc<Self>,
        id: RequestId,
        params: Option<&RawValue>,
        decoded: Option<&StatelessParams<'_>>,
        read: Option<&StatelessParams<'_>>,
        mut front: Front,
        origin: &Origin,
    ) {
        let Some(params) = params else {
            return Self::reply_error(
                origin,
                Some(&id),
                ErrorObject::invalid_params("tools/call needs params"),
            );
        };
        let call = match decoded.or(read) {
            Some(StatelessParams { name: Some(name), arguments, meta, .. }) => {
                Ok(CallToolParams { name: name.clone(), arguments: *arguments, meta: *meta })
            }
            Some(_) if decoded.is_some() => Err("missing field `name`".to_owned()),
            // (Params without a name, read for an observer: read again, for serde's own words.)
            _ => serde_json::from_str::<CallToolParams<'_>>(params.get()).map_err(|e| e.to_string()),
        };
        let call = match call {
            Ok(call) => call,
            Err(e) => {
                return Self::reply_error(
                    origin,
                    Some(&id),
                    ErrorObject::invalid_params(format!("invalid tools/call params: {e}")),
                );
            }
        };
        let found = front.tool.take().or_else(|| self.shared.registry.load().get(&call.name).cloned());
        let Some(entry) = found else {
            return Self::reply_error(
                origin,
                Some(&id),
                ErrorObject::invalid_params(format!("unknown tool `{}`", shown(&call.name))),
            );
        };
        // A caller without the tool's scopes gets the step-up challenge naming them all.
        let caller = origin.http.as_deref().and_then(|h| h.auth.as_deref());
        if !permits(caller, &entry.scopes) {
            return Self::reply_error(origin, Some(&id), ErrorObject::insufficient_scope(&entry.scopes));
        }
        let arguments: Box<RawValue> = match call.arguments {
            None => empty_object(),
            Some(raw) if raw.get() == "null" => empty_object(),
            Some(raw) => raw.to_owned(),
        };
        // A task-capable tool becomes a task for a stateless client that supports tasks; one
        // that must be a task refuses the others.
        let as_task = front.era == Era::Stateless && entry.task != TaskSupport::Forbidden;
        // Most clients declare no tasks: the error is made only when it is the answer.
        let declared = Extensions::declares(TASKS, &front.peer.client_capabilities);
        if as_task
            && entry.task == TaskSupport::Required
            && let Err(error) = Extensions::require(TASKS, &front.peer.client_capabilities)
        {
            return Self::reply_error(origin, Some(&id), error);
        }
        // Room for the task it may become is taken before it starts: a call is refused whole,
        // never stopped half-way.
        let task_engine = match as_task && declared {
            false => None,
            true => {
                let caller = self.caller(origin);
                match self.shared.tasks.reserve(&caller, || self.shared.hold_place()) {
                    Ok(reserved) => Some((self.shared.tasks.clone(), self.shared.events.clone(), reserved)),
                    Err(error) => return Self::reply_error(origin, Some(&id), error),
                }
            }
        };
        let max_state = self.shared.limits.max_request_state_bytes;
        // A stateless request's token was read with its envelope.
        let progress_token = match front.era {
            Era::Handshake => call.meta.and_then(progress_token_in),
            Era::Stateless => front.progress_token.clone(),
        };
        let (ctx, input) =
            self.context_for(id.clone(), entry.name.clone(), progress_token, call.meta, &front, origin);
        let cancel = ctx.cancellation_token();
        let key = self.shared.state_key();
        let has_caller = caller.is_some();
        let becomes_task_itself = entry.becomes_task_itself;
        // A tool's own timeout applies in `call_entry`; the server's to the others.
        let timeout = if entry.timeout.is_none() { self.shared.limits.request_timeout } else { None };
        // The call's future is made inside the request's, not captured by it: a captured future
        // would be stored twice (as the capture and where it is awaited), and the request's
        // future is copied whole into its box.
        // Through the server's layers, if it has any (none: the tool runs directly).
        let layered = self.shared.pipeline.layered(&entry);
        let run = move || async move {
            let limited = timeout.map(|limit| (limit, entry.name.clone(), ctx.cancellation_token()));
            let call = async move {
                match layered {
                    None => call_entry(&entry, &arguments, ctx).await,
                    // Boxed: a call without layers does not carry the pipeline's future.
                    Some(pipeline) => Box::pin(pipeline.call(entry, arguments, ctx)).await,
                }
            };
            match limited {
                None => call.await,
                Some((limit, name, cancel)) => tokio::time::timeout(limit, call)
                    .await
                    .unwrap_or_else(|_| timed_out(&name, limit, &cancel)),
            }
        };
        self.spawn_request(id, origin.clone(), cancel.clone(), async move {
            let outcome = match (task_engine, &input) {
                (Some((tasks, events, reserved)), Some(input)) => {
                    // It runs as a call until it first waits for something other than the
                    // client's answer (or, for a tool that says itself, until it says so):
                    // then it becomes a task.
                    let mut call: tasks::Call = Box::pin(run());
                    let outcome = match becomes_task_itself {
                        false => poll_once(&mut call).await.map(Ok),
                        true => tokio::select! {
                            biased;
                            result = &mut call => Some(Ok(result)),
                            () = input.wait_for_questions() => Some(Err(input.take_questions())),
                            () = input.wait_for_task_start() => None,
                        },
                    };
                    match outcome {
                        Some(Ok(result)) => Ok(result),
                        Some(Err(questions)) => Err(questions),
                        None if input.has_questions() => Err(input.take_questions()),
                        None => return Box::pin(tasks.start(call, input, cancel, events, reserved)).await,
                    }
                }
                _ => until_input(std::pin::pin!(run()), input.as_deref()).await,
            };
            match outcome {
                Err(questions) => {
                    let input = input.as_deref().expect("only a call with an input link asks questions");
                    front.input_required(&key, questions, input, max_state)
                }
                Ok(result) => match (front.era, result.missing_capability()) {
                    // The call decided the caller lacks scopes: the step-up challenge.
                    _ if result.required_scopes().is_some() && has_caller => {
                        Err(ErrorObject::insufficient_scope(result.required_scopes().unwrap_or_default()))
                    }
                    (Era::Stateless, Some(capability)) => Err(stateless::missing_capability(capability)),
                    // The call failed at the protocol level (a mounted server's JSON-RPC error):
                    // the caller gets that error, not a result.
                    _ if result.protocol_error().is_some() => {
                        Err(front.finish_error(protocol_error(&result)))
                    }
                    _ => front
                        .finish_value(&result)
                        .map_err(|e| ErrorObject::new(INTERNAL_ERROR, e.to_string())),
                },
            }
        });
    }

    /// `subscriptions/listen`: checks the filter by the rules of `resources/subscribe` (served
    /// resources the caller may read, the caller's own tasks, a bounded number of them), takes
    /// one of the caller's listen streams, acknowledges the filter it honors, then forwards the
    /// server's changes it asks for, each tagged with the request's id, until the client goes
    /// away, the request is cancelled or the connection ends (then its final result ends the
    /// stream). A stream holds none of the places ordinary requests run in.
    fn listen(self: &Arc<Self>, id: RequestId, params: Option<&RawValue>, front: &Front, origin: &Origin) {
        #[derive(serde::Deserialize, Default)]
        struct ListenParams {
            #[serde(default)]
            notifications: ListenFilter,
        }
        let requested = match decode_params::<ListenParams>(params) {
            Ok(p) => p.notifications,
            Err(e) => return Self::reply_error(origin, Some(&id), e),
        };
        if !requested.task_ids.is_empty()
            && let Err(error) = Extensions::require(TASKS, &front.peer.client_capabilities)
        {
            return Self::reply_error(origin, Some(&id), error);
        }
        let catalog = self.shared.catalog.load();
        let filter = ListenFilter::honored(
            requested,
            catalog.declares("resources/list"),
            catalog.declares("prompts/list"),
        );
        let limit = self.shared.limits.max_subscriptions;
        let followed = filter.resource_subscriptions.len() + filter.task_ids.len();
        if followed > limit {
            let error = ErrorObject::invalid_params(format!(
                "a listen stream may follow at most {limit} resources and tasks, this server's limit; this one names {followed}"
            ));
            return Self::reply_error(origin, Some(&id), error);
        }
        let caller = origin.http.as_deref().and_then(|h| h.auth.as_deref());
        for uri in &filter.resource_subscriptions {
            let Some(found) = catalog.find_resource(uri) else {
                return Self::reply_error(origin, Some(&id), no_such_resource(uri));
            };
            if !permits(caller, &found.scopes) {
                return Self::reply_error(origin, Some(&id), ErrorObject::insufficient_scope(&found.scopes));
            }
        }
        let who = self.caller(origin);
        let share = match self.shared.listens.take(&who) {
            Ok(share) => share,
            Err(refused) => {
                tracing::debug!(caller = %who, ?refused, "a listen stream was refused");
                let error = ErrorObject::new(INTERNAL_ERROR, self.shared.listens.refusal(&refused));
                return Self::reply_error(origin, Some(&id), error);
            }
        };
        let owner = who.owner();
        let tasks = self.shared.tasks.clone();
        let events = self.shared.events.clone();
        let reply = origin.reply.clone();
        let stopping = self.stopping.clone();
        let subscription = id.clone();
        let cancel = CancellationToken::new();
        self.spawn_stream(id, origin.clone(), cancel, async move {
            let _share = share;
            // Only the caller's own tasks: another's is as unknown as one that never was.
            for task_id in &filter.task_ids {
                tasks.owned(task_id, owner.as_deref()).await?;
            }
            // Subscribed before the acknowledgement, so no change after it is missed.
            let mut events = events.subscribe();
            reply.send(filter.acknowledgement(&subscription));
            loop {
                let event = tokio::select! {
                    _ = reply.closed() => break,
                    _ = stopping.cancelled() => break,
                    event = events.recv() => event,
                };
                match event {
                    Ok(event) => {
                        if let Some(notification) = filter.notification(&event, &subscription) {
                            reply.notify(notification);
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "a slow listener missed change notifications");
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
            Ok(stateless::listen_ended(&subscription))
        });
    }

    /// Runs a request that lasts (a listen stream) like [`spawn_request`](Self::spawn_request),
    /// cancellable and answered the same way, but outside the places requests run in: neither
    /// the connection's nor the server's (its own limits hold it).
    fn spawn_stream<F>(self: &Arc<Self>, id: RequestId, origin: Origin, cancel: CancellationToken, future: F)
    where
        F: Future<Output = Result<Box<RawValue>, ErrorObject>> + Send + 'static,
    {
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
        {
            let mut in_flight = self.in_flight.lock().expect("in-flight lock");
            if in_flight.entries.contains_key(&id) {
                drop(in_flight);
                let error = ErrorObject::new(
                    INVALID_REQUEST,
                    format!("request id {id} is already in use by a running request"),
                );
                return Self::reply_error(&origin, Some(&id), error);
            }
            in_flight.entries.insert(id.clone(), (generation, cancel.clone()));
        }
        self.start(id, generation, origin, cancel, Box::pin(future), false);
    }

    /// Runs a request concurrently; its answer goes to `origin` unless the client cancels it. A
    /// panic in it is answered with an internal error; either way its id is free again after.
    /// A connection runs at most `max_in_flight_per_connection` requests at once; as many more
    /// wait for a place, in the order they came, and only requests beyond those are refused.
    fn spawn_request<F>(self: &Arc<Self>, id: RequestId, origin: Origin, cancel: CancellationToken, future: F)
    where
        F: Future<Output = Result<Box<RawValue>, ErrorObject>> + Send + 'static,
    {
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
        let limit = self.shared.limits.max_in_flight_per_connection;
        // A request's future (handler, timeout, input retries) takes kilobytes: boxed, the task
        // moves a pointer instead of copying it on every step of spawning (a third of a call's
        // instructions before).
        let future: RequestFuture = Box::pin(future);
        let refused = {
            let mut in_flight = self.in_flight.lock().expect("in-flight lock");
            if in_flight.entries.contains_key(&id) {
                Some(ErrorObject::new(
                    INVALID_REQUEST,
                    format!("request id {id} is already in use by a running request"),
                ))
            } else if in_flight.running < limit && in_flight.waiting.is_empty() {
                in_flight.entries.insert(id.clone(), (generation, cancel.clone()));
                in_flight.running += 1;
                None
            } else if in_flight.waiting.len() < limit {
                in_flight.entries.insert(id.clone(), (generation, cancel.clone()));
                in_flight.waiting.push_back(Waiting { id, generation, origin, cancel, future });
                return;
            } else {
                Some(ErrorObject::new(
                    INTERNAL_ERROR,
                    format!(
                        "too many requests on this connection ({limit} running and {limit} waiting, the server's limits): retry when some have finished"
                    ),
                ))
            }
        };
        match refused {
            Some(error) => Self::reply_error(&origin, Some(&id), error),
            None => self.start(id, generation, origin, cancel, future, true),
        }
    }

    /// Starts a request that has its place among the connection's running ones (`counted`; a
    /// stream has none, and takes none of the server's).
    fn start(
        self: &Arc<Self>,
        id: RequestId,
        generation: u64,
        origin: Origin,
        cancel: CancellationToken,
        future: RequestFuture,
        counted: bool,
    ) {
        let limits = &self.shared.limits;
        let mut running =
            Running { session: self.clone(), id: id.clone(), generation, has_place: false, counted };
        if counted && !self.shared.take_place() {
            drop(running);
            let error = ErrorObject::new(
                INTERNAL_ERROR,
                format!(
                    "the server is busy: {} requests are running, its limit; retry shortly",
                    limits.max_in_flight
                ),
            );
            return Self::reply_error(&origin, Some(&id), error);
        }
        running.has_place = counted;
        // A transport that runs the request itself gets it (still tracked for shutdown); if it
        // drops it unfinished (its client went away), the request is cancelled. The slot stays
        // locked until the request is in it.
        let observed = origin.observed.clone();
        let inline = origin.inline.clone();
        let mut slot = inline.as_deref().map(|slot| slot.lock().expect("inline slot lock"));
        let slot = slot.as_mut().filter(|slot| slot.is_none());
        let cancelled_if_dropped = slot.is_some().then(|| cancel.clone().drop_guard());
        let task = async move {
            let result = match run_unless_cancelled(future, &cancel, &origin.reply).await {
                Outcome::Done(result) => Some(result.unwrap_or_else(|panic| {
                    tracing::error!(%id, panic = %panic_message(&*panic), "a request's handler panicked");
                    Err(ErrorObject::new(
                        INTERNAL_ERROR,
                        "the request failed: its handler panicked (details are in the server's log)",
                    ))
                })),
                Outcome::Cancelled => None,
                Outcome::ClientGone => {
                    tracing::debug!(%id, "the client disconnected: cancelling its request");
                    cancel.cancel();
                    None
                }
            };
            // The request is over: nothing left to cancel if the transport drops it now.
            if let Some(guard) = cancelled_if_dropped {
                guard.disarm();
            }
            // Backpressure: the answer waits for room in the client's queue (a stalled client is
            // disconnected instead).
            let deliver = result.is_some() && origin.reply.ready().await;
            // The request is over before its answer leaves: a client that sends another (with
            // the same id, or up to the limit) as soon as it reads the answer finds room.
            drop(running);
            if result.is_some() && !deliver {
                return tracing::debug!(%id, "the client is not reading: answer dropped");
            }
            match result {
                Some(Ok(result)) => Self::reply_raw(&origin, &id, &result),
                Some(Err(error)) => Self::reply_error(&origin, Some(&id), error),
                None => tracing::debug!(%id, "request cancelled; no answer sent"),
            }
        };
        // Watched, it runs in its span (the handler's spans are its children).
        let task = match observed {
            Some(observed) => Either::Left(Watched::new(observed, task)),
            None => Either::Right(task),
        };
        // The guard is in the request's own future: a wrapper awaiting it would hold the
        // request's future twice.
        match slot {
            Some(slot) => **slot = Some(Box::pin(self.tasks.track_future(task))),
            None => drop(self.tasks.spawn(task)),
        }
    }
}

/// A request's future, as it waits or runs.
type RequestFuture = std::pin::Pin<Box<dyn Future<Output = Result<Box<RawValue>, ErrorObject>> + Send>>;

/// How a request's run ended.
enum Outcome {
    /// Its handler returned (or panicked).
    Done(std::thread::Result<Result<Box<RawValue>, ErrorObject>>),
    /// It was cancelled (by the client, a timeout or the shutdown).
    Cancelled,
    /// The client went away (its HTTP connection closed, its stdio ended, or it stopped
    /// reading): nobody waits for the answer any more.
    ClientGone,
}

/// Runs `future` until it returns, `cancel` fires, or `reply`'s client goes away. Cancellation
/// wins over a result that becomes ready at the same moment (a handler that returns because it
/// saw the cancellation). The waits for the cancellation and the client are made (boxed) and
/// registered only once the handler is pending: a request that finishes in its first poll (most
/// do) registers nothing on its connection's queue, which the connection's other requests
/// share, and its future, copied as it is spawned, does not hold them.
async fn run_unless_cancelled(
    future: RequestFuture,
    cancel: &CancellationToken,
    reply: &Outbound,
) -> Outcome {
    use std::task::Poll;
    type Waits<'a> = std::pin::Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;
    let mut handler = std::pin::pin!(AssertUnwindSafe(future).catch_unwind());
    let mut waits: Option<Waits<'_>> = None;
    std::future::poll_fn(|cx| {
        if cancel.is_cancelled() {
            return Poll::Ready(Outcome::Cancelled);
        }
        if reply.is_closed() {
            return Poll::Ready(Outcome::ClientGone);
        }
        if let Poll::Ready(result) = handler.as_mut().poll(cx) {
            return Poll::Ready(Outcome::Done(result));
        }
        let waits = waits.get_or_insert_with(|| {
            Box::pin(async move {
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => Outcome::Cancelled,
                    _ = reply.closed() => Outcome::ClientGone,
                }
            })
        });
        waits.as_mut().poll(cx)
    })
    .await
}

/// A connection's requests: running or waiting for a place.
#[derive(Default)]
struct InFlight {
    /// By id: each with its generation (so a finished request removes its own entry, never a
    /// newer request's with the same id) and its cancellation. Hashed with foldhash, fast and
    /// seeded at random: the ids are the client's, but the table never holds more than twice
    /// the connection's limit of requests, so colliding ids cannot make it slow.
    entries: foldhash::HashMap<RequestId, (u64, CancellationToken)>,
    /// How many are running.
    running: usize,
    /// Those waiting for a place, oldest first.
    waiting: std::collections::VecDeque<Waiting>,
}

/// A request accepted while its connection had no place for it: it starts when one frees up.
struct Waiting {
    id: RequestId,
    generation: u64,
    origin: Origin,
    cancel: CancellationToken,
    future: RequestFuture,
}

/// A running request's entry in the in-flight table, removed when the request ends however it
/// ends (answered, cancelled, panicked), unless a newer request took the id meanwhile; its place
/// goes to the oldest request waiting for one.
struct Running {
    session: Arc<Session>,
    id: RequestId,
    generation: u64,
    /// Whether it holds one of the server's places for running requests.
    has_place: bool,
    /// Whether it holds one of the connection's places (a stream does not).
    counted: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.has_place {
            self.session.shared.free_place();
        }
        let mut in_flight = self.session.in_flight.lock().expect("in-flight lock");
        let entries = &mut in_flight.entries;
        // Put back if a newer request took the id meanwhile (rare: one lookup otherwise).
        if let Some(entry) = entries.remove(&self.id)
            && entry.0 != self.generation
        {
            entries.insert(self.id.clone(), entry);
        }
        if !self.counted {
            return;
        }
        in_flight.running -= 1;
        // The oldest waiting request still wanted (not cancelled meanwhile) takes the place.
        let next = loop {
            let Some(waiting) = in_flight.waiting.pop_front() else { break None };
            let wanted = in_flight
                .entries
                .get(&waiting.id)
                .is_some_and(|(generation, _)| *generation == waiting.generation);
            if wanted {
                in_flight.running += 1;
                break Some(waiting);
            }
        };
        drop(in_flight);
        if let Some(Waiting { id, generation, mut origin, cancel, future }) = next {
            // Its transport stopped waiting to run it in place: it runs as a task.
            origin.inline = None;
            self.session.start(id, generation, origin, cancel, future, true);
        }
    }
}

/// The JSON-RPC error a result failed with at the protocol level
/// ([`ToolResult::protocol_error`]; one that does not read as an error object: an internal error).
fn protocol_error(result: &crate::model::result::ToolResult) -> ErrorObject {
    result
        .protocol_error()
        .and_then(|error| serde_json::from_value(error.clone()).ok())
        .unwrap_or_else(|| ErrorObject::new(INTERNAL_ERROR, "the call failed at the protocol level"))
}

/// The client link of a stateless request that cannot ask anything (most calls: shared).
static CANNOT_ASK: std::sync::LazyLock<Arc<dyn ClientLink>> =
    std::sync::LazyLock::new(|| Arc::new(Unreachable("this request cannot ask the client anything")));

/// What a request's era front end found: the era, the client, and the round of a stateless
/// request that may take input.
struct Front {
    era: Era,
    peer: Arc<Peer>,
    round: Option<Round>,
    /// A stateless request's progress token, read with its envelope.
    progress_token: Option<ProgressToken>,
    /// The tool a stateless `tools/call` names, found already (if it exists).
    tool: Option<Arc<ToolEntry>>,
}

impl Front {
    /// A complete result as this era sends it.
    fn finish(&self, result: &RawValue, cache: Option<CacheHint>) -> Box<RawValue> {
        match self.era {
            Era::Handshake => result.to_owned(),
            Era::Stateless => complete(result, cache),
        }
    }

    /// [`finish`](Self::finish) for a result not serialised yet: serialised once, as this era
    /// sends it.
    fn finish_value<T: Serialize>(&self, result: &T) -> Result<Box<RawValue>, serde_json::Error> {
        match self.era {
            Era::Handshake => serde_json::value::to_raw_value(result),
            Era::Stateless => complete_value(result, None),
        }
    }

    /// An error as this era says it.
    fn finish_error(&self, error: ErrorObject) -> ErrorObject {
        match self.era {
            Era::Handshake => error,
            Era::Stateless => stateless::in_stateless_terms(error),
        }
    }

    /// The `input_required` result asking `questions`, with the answers so far sealed (those of
    /// the previous rounds, and those `input` read): an error when they take more than
    /// `max_state` bytes.
    fn input_required(
        &self,
        key: &[u8; 32],
        questions: Vec<(String, Value)>,
        input: &InputLink,
        max_state: usize,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let round = self.round.as_ref().expect("only a stateless round asks questions");
        let state = stateless::seal(key, round, &input.used(), max_state)?;
        Ok(stateless::input_required(questions, state))
    }
}

/// Runs `future` until it completes, or, when `input` is given, until the call asked the client
/// something it has no answer to (`Err` with the questions: the call is dropped, to run again
/// from the start once the client answered).
///
/// The future is pinned by the caller: taken by value, it would be stored twice in this one's
/// state (as the argument and where it is awaited).
async fn until_input<F: Future>(
    mut future: std::pin::Pin<&mut F>,
    input: Option<&InputLink>,
) -> Result<F::Output, Vec<(String, Value)>> {
    let Some(input) = input else { return Ok(future.await) };
    // Most calls finish without waiting: no race to set up for them.
    if let Some(output) = poll_once(&mut future).await {
        return Ok(output);
    }
    tokio::select! {
        biased;
        output = future => Ok(output),
        _ = input.wait_for_questions() => Err(input.take_questions()),
    }
}

/// Polls `future` once: its output if it is ready, `None` if it waits.
pub(crate) async fn poll_once<F: Future + Unpin>(future: &mut F) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut *future).poll(cx) {
            std::task::Poll::Ready(output) => Some(output),
            std::task::Poll::Pending => None,
        })
    })
    .await
}

/// A request's `_meta`, if any.
fn meta_of(params: Option<&RawValue>) -> Option<&RawValue> {
    #[derive(serde::Deserialize)]
    struct MetaOnly<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<&'a RawValue>,
    }
    params.and_then(|p| serde_json::from_str::<MetaOnly<'_>>(p.get()).ok()).and_then(|m| m.meta)
}

/// The progress token in a request's `_meta`, if any.
fn progress_token_in(meta: &RawValue) -> Option<ProgressToken> {
    serde_json::from_str::<RequestMeta>(meta.get()).ok().and_then(|m| m.progress_token)
}

/// The error of a subscription to a resource this server does not serve.
fn no_such_resource(uri: &str) -> ErrorObject {
    ErrorObject {
        code: INVALID_PARAMS,
        message: format!("cannot subscribe to {:?}: no such resource", shown(uri)),
        data: Some(json!({"uri": uri})),
    }
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("valid JSON")
}
