//! An MCP client (feature `client`): connects to a server over stdio (a command it spawns),
//! over Streamable HTTP, or in process, speaks whichever revision the server does (2026-07-28
//! first, else a 2025-11-25 session), and calls its tools, reads its resources, gets its
//! prompts; the server's questions (sampling, elicitation, roots) are answered by handlers, in
//! both eras (2025-11-25 requests, 2026-07-28 `input_required` rounds).
//!
//! ```no_run
//! use mcp_tools::client::Client;
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), mcp_tools::client::ClientError> {
//! let mut command = tokio::process::Command::new("my-mcp-server");
//! command.env("API_KEY", "…");
//! let client = Client::builder().name("my-agent").connect_stdio(command).await?;
//! for tool in client.list_tools().await? {
//!     println!("{}: {}", tool["name"], tool["description"]);
//! }
//! let result = client.call_tool("get_weather", json!({"city": "Oslo"})).await?;
//! println!("{}", result.text());
//! # Ok(())
//! # }
//! ```

mod auth;
mod error;
mod handlers;
mod http;
mod oauth;
mod result;
#[cfg(feature = "skills")]
mod skill;
#[cfg(feature = "skills")]
mod skills;
pub(crate) mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

pub use auth::{Authenticator, BearerToken};
pub use error::ClientError;
pub use handlers::{Root, elicitation_defaults};
pub use oauth::{
    ClientAuthMethod, ClientCredentials, DEFAULT_REDIRECT_URI, Headless, Loopback, OAuth, UserAgent,
};
pub use result::{CallResult, ServerNotification};
#[cfg(feature = "skills")]
pub use skill::{Skill, SkillFile, SkillResources};
use wire::{Incoming, IncomingHandler, IncomingTx, Kind, Outgoing, Pipe, SharedWire, header_text};

use crate::protocol::{Era, Implementation, LATEST_HANDSHAKE_VERSION, LATEST_PROTOCOL_VERSION};

/// A handler of a question the server asks (`sampling/createMessage`, `elicitation/create`):
/// gets its params, answers its result.
pub type QuestionHandler = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, ClientError>> + Send + Sync>;

/// A question the server asks in the course of one request (a 2025-11-25 request of its own
/// while the request runs, or a 2026-07-28 input request), for that request's own handler
/// ([`CallOptions::questions`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Question {
    /// `sampling/createMessage`, `elicitation/create` or `roots/list`.
    pub method: String,
    /// Its params.
    pub params: Value,
    /// The key the server gave the question among the request's others (2026-07-28).
    pub key: Option<String>,
}

/// A request's own handler of the server's questions.
pub type CallQuestions =
    Arc<dyn Fn(Question) -> BoxFuture<'static, Result<Value, ClientError>> + Send + Sync>;

/// What goes with one request ([`Client::request_with`], [`Client::call_tool_with`]): its
/// `_meta`, where its progress goes, and who answers the questions and takes the log messages
/// the server sends while it runs (instead of the client's handlers and
/// [`notifications`](Client::notifications)).
///
/// Which request a message belongs to is known for a 2026-07-28 input request, for progress (by
/// its token) and over Streamable HTTP (a request's own response stream). Over a pipe, a
/// 2025-11-25 server's requests and log messages name no request: they go to the one request
/// in progress that has a handler for them, and to the client's handlers when there are
/// several (a question no handler can answer is refused).
#[derive(Clone, Default)]
#[must_use]
pub struct CallOptions {
    meta: Option<Map<String, Value>>,
    progress: Option<mpsc::UnboundedSender<Progress>>,
    questions: Option<CallQuestions>,
    logs: Option<mpsc::UnboundedSender<ServerNotification>>,
    /// 2026-07-28: which questions this request's asker can answer (`sampling`, `elicitation`,
    /// `roots`), declared in its envelope instead of the client's.
    answers: Option<Map<String, Value>>,
    /// HTTP: the request's own `Authorization` value.
    authorization: Option<String>,
    /// 2026-07-28: whether this request declares the tasks extension (`None`: as the client
    /// does).
    tasks: Option<bool>,
    /// Told when the request became a task, before the task is followed.
    on_task: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("meta", &self.meta)
            .field("progress", &self.progress.is_some())
            .field("questions", &self.questions.is_some())
            .field("logs", &self.logs.is_some())
            .field("authorization", &self.authorization.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl CallOptions {
    /// No `_meta`, no progress, the client's handlers.
    pub fn new() -> Self {
        CallOptions::default()
    }
    /// The request's `_meta` (a `traceparent`, say); merged under the envelope in 2026-07-28.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }
    /// Asks for progress (a progress token) and sends it to `progress`.
    pub fn progress(mut self, progress: mpsc::UnboundedSender<Progress>) -> Self {
        self.progress = Some(progress);
        self
    }
    /// Answers the questions the server asks for this request.
    pub fn questions<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Question) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, ClientError>> + Send + 'static,
    {
        self.questions = Some(Arc::new(move |question| Box::pin(handler(question))));
        self
    }
    /// Sends the log messages (`notifications/message`) of this request to `logs`.
    pub fn logs(mut self, logs: mpsc::UnboundedSender<ServerNotification>) -> Self {
        self.logs = Some(logs);
        self
    }

    /// HTTP: sends `value` as this request's `Authorization` header (`Bearer …`) in place of
    /// the client's credentials, which are then neither sent nor renewed for it: a refusal is
    /// the request's error ([`ClientError::Unauthorized`]). The requests that follow a task this
    /// request started carry it too. Ignored over stdio and in process.
    pub fn authorization(mut self, value: impl Into<String>) -> Self {
        self.authorization = Some(value.into());
        self
    }

    /// 2026-07-28: declares, for this request, the question capabilities (`sampling`,
    /// `elicitation`, `roots`) in `capabilities` instead of the client's (a gateway declares its
    /// caller's).
    pub(crate) fn answers(mut self, capabilities: Map<String, Value>) -> Self {
        self.answers = Some(capabilities);
        self
    }

    /// 2026-07-28: declares the tasks extension for this request, or not, whatever the client
    /// declares (a gateway declares what its caller does).
    pub(crate) fn tasks(mut self, declared: bool) -> Self {
        self.tasks = Some(declared);
        self
    }

    /// Calls `started` when the request becomes a task upstream, before the task is followed
    /// (a gateway's call then becomes a task too).
    pub(crate) fn on_task(mut self, started: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_task = Some(Arc::new(started));
        self
    }

    /// Where the messages of this request that name no request go, if anywhere.
    fn route(&self) -> Option<Route> {
        (self.questions.is_some() || self.logs.is_some())
            .then(|| Route { questions: self.questions.clone(), logs: self.logs.clone() })
    }
}

/// Where the questions and logs of a request in progress go.
#[derive(Clone)]
struct Route {
    questions: Option<CallQuestions>,
    logs: Option<mpsc::UnboundedSender<ServerNotification>>,
}

/// Which revision a client speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum EraChoice {
    /// 2026-07-28 if the server speaks it (`server/discover`), else a 2025-11-25 session.
    #[default]
    Auto,
    /// Only a 2025-11-25 session (`initialize`).
    Handshake,
    /// Only 2026-07-28.
    Stateless,
}

/// Builds a [`Client`]: who it is, what it can answer, and how long it waits.
#[must_use]
pub struct ClientBuilder {
    info: Implementation,
    era: EraChoice,
    timeout: Duration,
    sampling: Option<QuestionHandler>,
    elicitation: Option<QuestionHandler>,
    roots: Option<Arc<Mutex<Vec<Root>>>>,
    tasks: bool,
    max_message_bytes: usize,
    /// HTTP: what authorizes the requests, and headers every request carries.
    auth: Option<Arc<dyn Authenticator>>,
    headers: Vec<(String, String)>,
    /// Declares every question capability: each request answers its own (a gateway's client).
    forwards: bool,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("era", &self.era)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            info: Implementation::new("mcp-tools-client", env!("CARGO_PKG_VERSION")),
            era: EraChoice::Auto,
            timeout: Duration::from_secs(300),
            sampling: None,
            elicitation: None,
            roots: None,
            tasks: false,
            max_message_bytes: 64 * 1024 * 1024,
            auth: None,
            headers: Vec::new(),
            forwards: false,
        }
    }
}

impl ClientBuilder {
    /// The client's name (`clientInfo.name`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.info.name = name.into();
        self
    }
    /// The client's version (`clientInfo.version`).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self
    }
    /// Which revision to speak (default: the server's newest).
    pub fn era(mut self, era: EraChoice) -> Self {
        self.era = era;
        self
    }
    /// How long a request waits for its answer (default 5 minutes).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
    /// The largest message taken from the server (default 64 MiB).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }
    /// Answers the server's sampling requests (declares the `sampling` capability).
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, ClientError>> + Send + 'static,
    {
        self.sampling = Some(Arc::new(move |params| Box::pin(handler(params))));
        self
    }
    /// Answers the server's elicitations (declares the `elicitation` capability). Fields the
    /// answer leaves out get the requested schema's defaults (SEP-1034).
    pub fn on_elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, ClientError>> + Send + 'static,
    {
        self.elicitation = Some(Arc::new(move |params| Box::pin(handler(params))));
        self
    }
    /// The client's roots (declares the `roots` capability; [`Client::set_roots`] changes them).
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.roots = Some(Arc::new(Mutex::new(roots)));
        self
    }
    /// Declares the tasks extension (2026-07-28): a task-capable call may become a task, which
    /// the client follows (`tasks/get`, answering its questions with `tasks/update`) until it
    /// ends; [`Client::call_tool`] still answers the final result.
    pub fn tasks(mut self, follow: bool) -> Self {
        self.tasks = follow;
        self
    }

    /// HTTP: authorizes every request with `authenticator` ([`BearerToken`], an OAuth flow…),
    /// which is asked again when the server refuses (401, or 403 asking for more scopes).
    pub fn auth(mut self, authenticator: impl Authenticator) -> Self {
        self.auth = Some(Arc::new(authenticator));
        self
    }
    /// [`auth`](Self::auth) with an authenticator shared with other clients.
    pub(crate) fn auth_shared(mut self, authenticator: Arc<dyn Authenticator>) -> Self {
        self.auth = Some(authenticator);
        self
    }
    /// HTTP: a header every request carries.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Declares sampling, elicitation and roots though the client has no handlers for them: the
    /// requests it makes answer their own questions ([`CallOptions::questions`]), and a question
    /// of no request is refused.
    pub(crate) fn forward_questions(mut self) -> Self {
        self.forwards = true;
        self
    }

    /// The capabilities this client declares.
    fn capabilities(&self) -> Value {
        let mut capabilities = Map::new();
        if self.forwards {
            capabilities.insert("sampling".into(), json!({}));
            capabilities.insert("elicitation".into(), json!({"form": {}}));
            capabilities.insert("roots".into(), json!({}));
        }
        if self.sampling.is_some() {
            capabilities.insert("sampling".into(), json!({}));
        }
        if self.elicitation.is_some() {
            capabilities.insert("elicitation".into(), json!({"form": {}}));
        }
        if self.roots.is_some() {
            capabilities.insert("roots".into(), json!({"listChanged": true}));
        }
        if self.tasks {
            capabilities.insert("extensions".into(), json!({"io.modelcontextprotocol/tasks": {}}));
        }
        Value::Object(capabilities)
    }

    /// Connects to the server `command` starts (its stdin and stdout; its stderr goes to this
    /// process's), with the command's environment as set. The server is stopped when the client
    /// closes or is dropped.
    pub async fn connect_stdio(self, command: tokio::process::Command) -> Result<Client, ClientError> {
        let incoming = IncomingTx::new();
        let pipe = Pipe::spawn(command, incoming.clone(), self.max_message_bytes)?;
        self.connect_wire(Arc::new(pipe), incoming).await
    }

    /// Connects to the Streamable HTTP endpoint at `url` (`http://127.0.0.1:8080/mcp`), with
    /// the builder's [`auth`](Self::auth) and [`header`](Self::header)s on every request. Closing
    /// the client ends its session (2025-11-25) and its open streams.
    pub async fn connect_http(mut self, url: impl AsRef<str>) -> Result<Client, ClientError> {
        let incoming = IncomingTx::new();
        let headers = std::mem::take(&mut self.headers);
        let wire = http::Http::new(
            url.as_ref(),
            headers,
            self.auth.take(),
            incoming.clone(),
            self.max_message_bytes,
        )?;
        self.connect_wire(Arc::new(wire), incoming).await
    }

    /// Connects over a line-delimited pipe: what `writer` gets, a server reads; what it writes,
    /// `reader` gives (a stdio server's streams, or an in-process server's:
    /// [`Server::connect`](crate::Server::connect)).
    pub async fn connect_pipe(
        self,
        reader: impl tokio::io::AsyncRead + Send + Unpin + 'static,
        writer: impl tokio::io::AsyncWrite + Send + Unpin + 'static,
    ) -> Result<Client, ClientError> {
        let incoming = IncomingTx::new();
        let pipe = Pipe::new(reader, writer, incoming.clone(), self.max_message_bytes);
        self.connect_wire(Arc::new(pipe), incoming).await
    }

    /// Connects the client to its wire: starts the router, then speaks the first revision the
    /// server does.
    pub(crate) async fn connect_wire(
        self,
        wire: SharedWire,
        incoming: IncomingTx,
    ) -> Result<Client, ClientError> {
        let capabilities = self.capabilities();
        let (notifications, _) = broadcast::channel(256);
        let mut envelope = Map::new();
        envelope.insert("io.modelcontextprotocol/clientCapabilities".into(), capabilities.clone());
        envelope.insert("io.modelcontextprotocol/clientInfo".into(), json!(self.info));
        let inner = Arc::new(Inner {
            wire,
            info: self.info,
            capabilities,
            envelope,
            envelopes: Mutex::new(Vec::new()),
            timeout: self.timeout,
            sampling: self.sampling,
            elicitation: self.elicitation,
            roots: self.roots,
            connected: OnceLock::new(),
            pending: Mutex::default(),
            progress: Mutex::new(HashMap::new()),
            notifications,
            next_id: AtomicI64::new(1),
            tool_headers: Mutex::new(HashMap::new()),
            routes: Mutex::default(),
            closed: CancellationToken::new(),
            sessions: tokio::sync::Mutex::new(0),
        });
        incoming.ready(router(Arc::downgrade(&inner)));
        let client = Client { inner };
        client.start(self.era).await?;
        Ok(client)
    }
}

/// What a request waiting for its answer gets: its result as JSON text, or why there is none.
type Answered = Result<Box<RawValue>, ClientError>;

/// A request as sent: its parameters borrowed, not copied into a message of their own.
#[derive(serde::Serialize)]
struct RequestMessage<'a> {
    jsonrpc: &'static str,
    id: i64,
    method: &'a str,
    params: Params<'a>,
}

/// A request's parameters as sent: as they are, or (2026-07-28) with the envelope written into
/// their `_meta` as it is serialized, ahead of the request's own `_meta` entries (which win a
/// key both have), so that the envelope is neither copied nor merged into them.
#[derive(Clone, Copy)]
struct Params<'a> {
    fields: &'a Value,
    envelope: Option<&'a Envelope>,
}

impl<'a> Params<'a> {
    fn plain(fields: &'a Value) -> Self {
        Params { fields, envelope: None }
    }
}

impl serde::Serialize for Params<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Some(envelope) = self.envelope else { return self.fields.serialize(s) };
        let empty = Map::new();
        let fields = self.fields.as_object().unwrap_or(&empty);
        let own = match fields.get("_meta") {
            Some(Value::Object(own)) => own,
            _ => &empty,
        };
        let mut map = s.serialize_map(None)?;
        for (key, value) in fields.iter().filter(|(key, _)| *key != "_meta") {
            map.serialize_entry(key, value)?;
        }
        map.serialize_entry("_meta", &EnvelopedMeta { envelope, own })?;
        map.end()
    }
}

/// `_meta` of a 2026-07-28 request: the envelope's entries, then the request's own.
struct EnvelopedMeta<'a> {
    envelope: &'a Envelope,
    own: &'a Map<String, Value>,
}

impl serde::Serialize for EnvelopedMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for (key, value) in self.envelope.entries.iter().filter(|(key, _)| !self.own.contains_key(key)) {
            map.serialize_entry(key, value)?;
        }
        for (key, value) in self.own {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// The envelope of 2026-07-28 requests made with given options, its entries serialized once
/// ([`Client::envelope_for`]).
struct Envelope {
    /// What it was made for: the revision, the declared question capabilities
    /// (`CallOptions::answers`: `sampling`, `elicitation`, `roots`) and tasks.
    version: String,
    answers: Option<[Option<Value>; 3]>,
    tasks: Option<bool>,
    entries: Vec<(String, Box<RawValue>)>,
}

/// The question capabilities a request's envelope declares in place of the client's.
const QUESTIONS: [&str; 3] = ["sampling", "elicitation", "roots"];

/// How many envelopes a client keeps made (one per set of options its requests use; a gateway
/// uses one per kind of caller).
const ENVELOPES_KEPT: usize = 8;

/// What the client learnt connecting.
#[derive(Clone, Debug)]
struct Connected {
    era: Era,
    protocol_version: String,
    server_info: Implementation,
    capabilities: Value,
    instructions: Option<String>,
}

struct Inner {
    wire: SharedWire,
    info: Implementation,
    capabilities: Value,
    /// The 2026-07-28 envelope but its revision: made once, cloned into each request.
    envelope: Map<String, Value>,
    /// The envelopes requests were last sent with, serialized (newest last).
    envelopes: Mutex<Vec<Arc<Envelope>>>,
    timeout: Duration,
    sampling: Option<QuestionHandler>,
    elicitation: Option<QuestionHandler>,
    roots: Option<Arc<Mutex<Vec<Root>>>>,
    connected: OnceLock<Connected>,
    /// The requests waiting for their answers, by id: a result as its JSON text.
    pending: Mutex<ById<oneshot::Sender<Answered>>>,
    /// Where the progress of a call goes, by its token.
    progress: Mutex<HashMap<String, mpsc::UnboundedSender<Progress>>>,
    notifications: broadcast::Sender<ServerNotification>,
    next_id: AtomicI64,
    /// The arguments each tool mirrors in headers (2026-07-28 HTTP: `x-mcp-header`), from its
    /// listed input schema.
    tool_headers: Mutex<HashMap<String, Mirrored>>,
    /// The requests in progress whose questions and logs have their own handlers, by id.
    routes: Mutex<ById<Route>>,
    /// Cancelled when the connection ends.
    closed: CancellationToken,
    /// 2025-11-25 over HTTP: how many times a session the server ended was replaced; held
    /// while one is.
    sessions: tokio::sync::Mutex<u64>,
}

/// The arguments a tool mirrors in headers: each one's path in the arguments, and its header.
type Mirrored = Vec<(Vec<String>, String)>;

/// A progress notification of a call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How far along.
    pub progress: f64,
    /// Out of how much, if known.
    pub total: Option<f64>,
    /// What is happening, if said.
    pub message: Option<String>,
}

/// A connection to an MCP server. Cheap to clone; the connection closes when the last clone is
/// dropped (or with [`close`](Self::close)).
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("server", &self.inner.connected.get().map(|c| &c.server_info)).finish()
    }
}

/// How many rounds of questions a request may take before the client gives up.
const MAX_ROUNDS: usize = 16;

impl Client {
    /// A builder of clients.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    fn connected(&self) -> &Connected {
        self.inner.connected.get().expect("a client is connected once built")
    }

    /// The revision spoken with this server.
    pub fn era(&self) -> Era {
        self.connected().era
    }

    /// The protocol version spoken (`2026-07-28`, or the session's).
    pub fn protocol_version(&self) -> &str {
        &self.connected().protocol_version
    }

    /// The server's name and version.
    pub fn server_info(&self) -> &Implementation {
        &self.connected().server_info
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> &Value {
        &self.connected().capabilities
    }

    /// The server's instructions, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.connected().instructions.as_deref()
    }

    /// The server's notifications (list changes, logs, resource updates) from now on. In
    /// 2026-07-28 they come on a listen stream: see [`listen`](Self::listen).
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.inner.notifications.subscribe()
    }

    /// Speaks the first revision the server does.
    async fn start(&self, choice: EraChoice) -> Result<(), ClientError> {
        if choice != EraChoice::Handshake {
            match self.discover().await {
                Ok(connected) => {
                    self.inner.wire.set_protocol_version(&connected.protocol_version);
                    let _ = self.inner.connected.set(connected);
                    return Ok(());
                }
                Err(e) if choice == EraChoice::Stateless => return Err(e),
                Err(e) => tracing::debug!(error = %e, "server/discover failed: a 2025-11-25 session instead"),
            }
        }
        self.initialize().await
    }

    /// `server/discover` (2026-07-28). Refused as an unsupported revision (-32022) by a server
    /// that names this one among those it supports (SEP-2575: the client retries with a
    /// supported one), it is asked once more.
    async fn discover(&self) -> Result<Connected, ClientError> {
        let params = json!({"_meta": self.envelope(LATEST_PROTOCOL_VERSION)});
        let discover = || self.plain_request("server/discover", &params);
        let result = match discover().await {
            Err(ClientError::Rpc { code, data: Some(data), .. })
                if code == i64::from(crate::protocol::stateless::UNSUPPORTED_PROTOCOL_VERSION)
                    && data["supported"]
                        .as_array()
                        .is_some_and(|s| s.iter().any(|v| v == LATEST_PROTOCOL_VERSION)) =>
            {
                discover().await?
            }
            other => other?,
        };
        let versions = result["supportedVersions"].as_array().cloned().unwrap_or_default();
        if !versions.iter().any(|v| v == LATEST_PROTOCOL_VERSION) {
            return Err(ClientError::Protocol(format!(
                "the server speaks {versions:?}, not {LATEST_PROTOCOL_VERSION}"
            )));
        }
        let server_info =
            serde_json::from_value(result["_meta"]["io.modelcontextprotocol/serverInfo"].clone())
                .unwrap_or_else(|_| Implementation::new("unknown", "unknown"));
        Ok(Connected {
            era: Era::Stateless,
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            server_info,
            capabilities: result["capabilities"].clone(),
            instructions: result["instructions"].as_str().map(str::to_owned),
        })
    }

    /// The `initialize` handshake (2025-11-25), then `notifications/initialized`.
    async fn initialize(&self) -> Result<(), ClientError> {
        let params = json!({
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": self.inner.capabilities,
            "clientInfo": self.inner.info,
        });
        let result = self.plain_request("initialize", &params).await?;
        let version = result["protocolVersion"].as_str().unwrap_or(LATEST_HANDSHAKE_VERSION).to_owned();
        self.inner.wire.set_protocol_version(&version);
        let connected = Connected {
            era: Era::Handshake,
            protocol_version: version,
            server_info: serde_json::from_value(result["serverInfo"].clone())
                .unwrap_or_else(|_| Implementation::new("unknown", "unknown")),
            capabilities: result["capabilities"].clone(),
            instructions: result["instructions"].as_str().map(str::to_owned),
        };
        let _ = self.inner.connected.set(connected);
        self.notify("notifications/initialized", json!({})).await
    }

    /// 2025-11-25: a new session in place of one the server ended (HTTP 404; the client then
    /// MUST initialize again), unless another request already made one since `seen`. Whether
    /// there is a new session to send the request in.
    async fn reopen(&self, seen: u64) -> Result<bool, ClientError> {
        let mut sessions = self.inner.sessions.lock().await;
        if *sessions != seen {
            return Ok(true);
        }
        if !self.inner.wire.forget_ended_session() {
            return Ok(false);
        }
        tracing::debug!("the server ended the session: initializing a new one");
        self.initialize().await?;
        *sessions += 1;
        Ok(true)
    }

    /// The envelope of a 2026-07-28 request (`params._meta`).
    fn envelope(&self, version: &str) -> Value {
        let mut envelope = self.inner.envelope.clone();
        envelope.insert("io.modelcontextprotocol/protocolVersion".into(), json!(version));
        Value::Object(envelope)
    }

    /// The envelope of a 2026-07-28 request with `options` (its question capabilities and
    /// tasks declared as they say), made once for each set of options and kept.
    fn envelope_for(&self, version: &str, options: &CallOptions) -> Arc<Envelope> {
        let answers = options.answers.as_ref().map(|a| QUESTIONS.map(|q| a.get(q).cloned()));
        let mut kept = self.inner.envelopes.lock().expect("envelopes lock");
        let found = kept
            .iter()
            .rposition(|e| e.version == version && e.tasks == options.tasks && e.answers == answers);
        if let Some(at) = found {
            return kept[at].clone();
        }
        let mut envelope = self.envelope(version);
        if let Some(answers) = &answers {
            let declared = &mut envelope["io.modelcontextprotocol/clientCapabilities"];
            for (question, capability) in QUESTIONS.iter().zip(answers) {
                match capability {
                    Some(capability) => declared[*question] = capability.clone(),
                    None => {
                        declared.as_object_mut().map(|c| c.remove(*question));
                    }
                }
            }
        }
        if options.tasks == Some(false)
            && let Some(extensions) =
                envelope["io.modelcontextprotocol/clientCapabilities"]["extensions"].as_object_mut()
        {
            extensions.remove("io.modelcontextprotocol/tasks");
        } else if options.tasks == Some(true) {
            let declared = &mut envelope["io.modelcontextprotocol/clientCapabilities"];
            if !declared["extensions"].is_object() {
                declared["extensions"] = json!({});
            }
            declared["extensions"]["io.modelcontextprotocol/tasks"] = json!({});
        }
        let Value::Object(envelope) = envelope else { unreachable!("the envelope is an object") };
        let entries = envelope
            .into_iter()
            .map(|(key, value)| (key, serde_json::value::to_raw_value(&value).expect("JSON serializes")))
            .collect();
        let made = Arc::new(Envelope { version: version.to_owned(), answers, tasks: options.tasks, entries });
        if kept.len() == ENVELOPES_KEPT {
            kept.remove(0);
        }
        kept.push(made.clone());
        made
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), ClientError> {
        let bytes = serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .expect("JSON serializes");
        self.inner.wire.send(Outgoing::plain(bytes, Kind::Notification)).await
    }

    /// Sends a request and waits for its answer (its result, or the server's error), in the
    /// connection's era: a 2026-07-28 request gets the envelope, and an `input_required` result
    /// is answered with the client's handlers and retried; a task is followed to its end.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.request_with(method, params, CallOptions::default()).await
    }

    /// [`request`](Self::request) with its own `_meta`, progress and handlers.
    pub async fn request_with(
        &self,
        method: &str,
        params: Value,
        options: CallOptions,
    ) -> Result<Value, ClientError> {
        read(&self.request_with_raw(method, params, options).await?)
    }

    /// [`request_with`](Self::request_with), its result as the JSON text the server sent (a
    /// gateway passes a tool's result on without reading it into values).
    pub(crate) async fn request_with_raw(
        &self,
        method: &str,
        mut params: Value,
        mut options: CallOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        if !params.is_object() {
            params = json!({});
        }
        if let Some(meta) = options.meta.take() {
            let fields = params.as_object_mut().expect("params are an object");
            let target = fields.entry("_meta").or_insert_with(|| json!({}));
            if let Some(target) = target.as_object_mut() {
                target.extend(meta);
            }
        }
        let token = options.progress.clone().map(|sender| {
            let token = format!("p{}", self.inner.next_id.fetch_add(1, Ordering::Relaxed));
            self.inner.progress.lock().expect("progress lock").insert(token.clone(), sender);
            params["_meta"]["progressToken"] = json!(token);
            token
        });
        let result = self.exchange_raw(method, params, &options).await;
        if let Some(token) = token {
            self.inner.progress.lock().expect("progress lock").remove(&token);
        }
        result
    }

    /// One request in the connection's era, with its rounds of questions.
    async fn exchange(
        &self,
        method: &str,
        params: Value,
        options: &CallOptions,
    ) -> Result<Value, ClientError> {
        read(&self.exchange_raw(method, params, options).await?)
    }

    /// [`exchange`](Self::exchange), its result as the JSON text the server sent.
    async fn exchange_raw(
        &self,
        method: &str,
        mut params: Value,
        options: &CallOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let connected = self.connected();
        let route = options.route();
        if connected.era == Era::Handshake {
            let name = name_of(method, &params);
            let sessions = *self.inner.sessions.lock().await;
            let auth = options.authorization.clone();
            let sent = self
                .send_request(method, Params::plain(&params), name.clone(), Vec::new(), route.clone(), auth)
                .await;
            return match sent {
                // The server ended the session, and did not run the request: once more in a new one.
                Err(ClientError::Transport(_)) if self.reopen(sessions).await? => {
                    let auth = options.authorization.clone();
                    self.send_request(method, Params::plain(&params), name, Vec::new(), route, auth).await
                }
                other => other,
            };
        }
        let envelope = self.envelope_for(&connected.protocol_version, options);
        if !params.is_object() {
            params = json!({});
        }
        let headers = self.param_headers(method, &params);
        for _ in 0..MAX_ROUNDS {
            let name = name_of(method, &params);
            let result = self
                .send_request(
                    method,
                    Params { fields: &params, envelope: Some(&envelope) },
                    name,
                    headers.clone(),
                    route.clone(),
                    options.authorization.clone(),
                )
                .await?;
            match result_type(&result) {
                ResultType::InputRequired => {
                    let result = read(&result)?;
                    let answers = self.answer_all(&result["inputRequests"], options).await;
                    let fields = params.as_object_mut().expect("params are an object");
                    fields.insert("inputResponses".into(), answers);
                    match result.get("requestState") {
                        Some(state) => fields.insert("requestState".into(), state.clone()),
                        None => fields.remove("requestState"),
                    };
                }
                ResultType::Task => {
                    let result = read(&result)?;
                    if let Some(started) = &options.on_task {
                        started();
                    }
                    let ended = Box::pin(self.follow_task(result, options)).await?;
                    return Ok(serde_json::value::to_raw_value(&ended).expect("JSON serializes"));
                }
                ResultType::Other => return Ok(result),
            }
        }
        Err(ClientError::Protocol(format!("`{method}` still asked for input after {MAX_ROUNDS} rounds")))
    }

    /// The answers to `requests` (`inputRequests`: by key, each a `{method, params}`), from the
    /// request's own handler if it has one, else the client's. The questions are asked together,
    /// as the server asked them (a gateway forwarding them asks its own client all at once).
    async fn answer_all(&self, requests: &Value, options: &CallOptions) -> Value {
        let asked = requests.as_object().into_iter().flatten().map(|(key, request)| async move {
            let question = Question {
                method: request["method"].as_str().unwrap_or_default().to_owned(),
                params: request["params"].clone(),
                key: Some(key.clone()),
            };
            let method = question.method.clone();
            let answer = match self.answer_question(question, options.questions.as_ref()).await {
                Ok(answer) => answer,
                // A question the client cannot answer: declined, as a user would.
                Err(e) => {
                    tracing::debug!(method, error = %e, "a question of the server was not answered");
                    json!({"action": "decline"})
                }
            };
            (key.clone(), answer)
        });
        Value::Object(futures_util::future::join_all(asked).await.into_iter().collect::<Map<_, _>>())
    }

    /// Follows a task (2026-07-28) until it ends: its result, or its error. Dropped before, the
    /// task is cancelled (`tasks/cancel`), as a request is.
    async fn follow_task(&self, handle: Value, options: &CallOptions) -> Result<Value, ClientError> {
        let Some(task_id) = handle["taskId"].as_str().map(str::to_owned) else {
            return Err(ClientError::Protocol("a task handle without a `taskId`".into()));
        };
        let interval =
            Duration::from_millis(handle["pollIntervalMs"].as_u64().unwrap_or(500).clamp(10, 60_000));
        let plain = CallOptions { authorization: options.authorization.clone(), ..CallOptions::default() };
        let mut following = Following { client: self, task_id: &task_id, options: &plain, ended: false };
        let outcome = following.follow(interval, options).await;
        following.ended = true;
        outcome
    }
}

/// A task being followed: cancelled upstream if the follower stops before it ended.
struct Following<'a> {
    client: &'a Client,
    task_id: &'a str,
    options: &'a CallOptions,
    ended: bool,
}

impl Drop for Following<'_> {
    fn drop(&mut self) {
        if self.ended || self.client.inner.closed.is_cancelled() {
            return;
        }
        let (client, options) = (self.client.clone(), self.options.clone());
        let cancel = json!({"taskId": self.task_id});
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = client.exchange("tasks/cancel", cancel, &options).await {
                    tracing::debug!(error = %e, "cancelling a task no longer followed failed");
                }
            });
        }
    }
}

impl Following<'_> {
    async fn follow(&self, interval: Duration, options: &CallOptions) -> Result<Value, ClientError> {
        let (task_id, plain) = (self.task_id, self.options);
        let this = self.client;
        loop {
            let task = Box::pin(this.exchange("tasks/get", json!({"taskId": task_id}), plain)).await?;
            match task["status"].as_str() {
                Some("completed") => return Ok(task["result"].clone()),
                Some("failed") => {
                    let error = &task["error"];
                    return Err(ClientError::Rpc {
                        code: error["code"].as_i64().unwrap_or(-32603),
                        message: error["message"].as_str().unwrap_or("the task failed").to_owned(),
                        data: error.get("data").cloned(),
                    });
                }
                Some("cancelled") => {
                    return Err(ClientError::Protocol(format!("task {task_id} was cancelled")));
                }
                Some("input_required") => {
                    let answers = this.answer_all(&task["inputRequests"], options).await;
                    let update = json!({"taskId": task_id, "inputResponses": answers});
                    Box::pin(this.exchange("tasks/update", update, plain)).await?;
                }
                _ => tokio::time::sleep(interval).await,
            }
        }
    }
}

impl Client {
    /// A request of the connection itself (`initialize`, `server/discover`): no tool name,
    /// headers, route or authorization of its own; its result as JSON.
    async fn plain_request(&self, method: &str, params: &Value) -> Result<Value, ClientError> {
        read(&self.send_request(method, Params::plain(params), None, Vec::new(), None, None).await?)
    }

    /// Sends one request and waits for its answer (no era logic), its result as the JSON text
    /// the server sent; `route` takes the questions and logs the server sends meanwhile. Dropped
    /// before the answer, the request is cancelled.
    async fn send_request(
        &self,
        method: &str,
        params: Params<'_>,
        name: Option<String>,
        param_headers: Vec<(String, String)>,
        route: Option<Route>,
        authorization: Option<String>,
    ) -> Result<Box<RawValue>, ClientError> {
        if self.inner.closed.is_cancelled() {
            return Err(ClientError::Closed);
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.inner.pending.lock().expect("pending lock").insert(id, tx);
        if let Some(route) = route {
            self.inner.routes.lock().expect("routes lock").insert(id, route);
        }
        let mut waiting = Waiting { inner: &self.inner, id, answered: false };
        let bytes = serde_json::to_vec(&RequestMessage { jsonrpc: "2.0", id, method, params })
            .expect("JSON serializes");
        let kind = Kind::Request { method: method.to_owned(), name };
        self.inner.wire.send(Outgoing { bytes, kind, param_headers, authorization }).await?;
        let answer = tokio::time::timeout(self.inner.timeout, rx).await;
        waiting.answered = true;
        match answer {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(ClientError::Closed),
            Err(_) => {
                waiting.answered = false;
                Err(ClientError::Timeout(self.inner.timeout))
            }
        }
    }

    /// The `Mcp-Param-*` headers of a 2026-07-28 `tools/call` (the arguments its tool's schema
    /// marks with `x-mcp-header`; the tool's schema is known once listed).
    fn param_headers(&self, method: &str, params: &Value) -> Vec<(String, String)> {
        if method != "tools/call" {
            return Vec::new();
        }
        let Some(tool) = params["name"].as_str() else { return Vec::new() };
        let headers = self.inner.tool_headers.lock().expect("tool headers lock");
        let Some(mirrored) = headers.get(tool) else { return Vec::new() };
        mirrored
            .iter()
            .filter_map(|(path, header)| {
                let value = path.iter().try_fold(&params["arguments"], |v, key| v.get(key))?;
                let text = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => return None,
                };
                Some((format!("Mcp-Param-{header}"), header_text(&text)))
            })
            .collect()
    }

    /// Answers one question of the server (a 2025-11-25 request, a 2026-07-28 input request):
    /// with the request's own handler, if it has one, else the client's.
    async fn answer_question(
        &self,
        question: Question,
        own: Option<&CallQuestions>,
    ) -> Result<Value, ClientError> {
        let unsupported = |what: &str| ClientError::Rpc {
            code: -32601,
            message: format!("this client does not {what}"),
            data: None,
        };
        let schema =
            (question.method == "elicitation/create").then(|| question.params["requestedSchema"].clone());
        let mut answer = match (own, question.method.as_str()) {
            (_, "ping") => return Ok(json!({})),
            (Some(own), _) => own(question).await?,
            (None, "sampling/createMessage") => match &self.inner.sampling {
                Some(handler) => handler(question.params).await?,
                None => return Err(unsupported("sample")),
            },
            (None, "elicitation/create") => match &self.inner.elicitation {
                Some(handler) => handler(question.params).await?,
                None => return Err(unsupported("answer elicitations")),
            },
            (None, "roots/list") => match &self.inner.roots {
                Some(roots) => json!({"roots": *roots.lock().expect("roots lock")}),
                None => return Err(unsupported("have roots")),
            },
            (None, other) => {
                return Err(ClientError::Rpc {
                    code: -32601,
                    message: format!("method not found: {other}"),
                    data: None,
                });
            }
        };
        if let Some(schema) = schema {
            elicitation_defaults(&schema, &mut answer);
        }
        Ok(answer)
    }

    /// Whether the client itself answers `method` (it has the handler).
    fn has_handler(&self, method: &str) -> bool {
        match method {
            "sampling/createMessage" => self.inner.sampling.is_some(),
            "elicitation/create" => self.inner.elicitation.is_some(),
            "roots/list" => self.inner.roots.is_some(),
            _ => true,
        }
    }

    /// Every tool (every page of `tools/list`), as the server defines them; in 2026-07-28,
    /// without the tools whose `x-mcp-header` declarations are invalid (SEP-2243: a client
    /// excludes them, as it could not send their calls' headers faithfully).
    pub async fn list_tools(&self) -> Result<Vec<Value>, ClientError> {
        let mut tools = self.list_all("tools/list", "tools").await?;
        let stateless = self.era() == Era::Stateless;
        let mut headers = self.inner.tool_headers.lock().expect("tool headers lock");
        tools.retain(|tool| {
            let Some(name) = tool["name"].as_str() else { return true };
            match mirrored_arguments(&tool["inputSchema"]) {
                Ok(mirrored) if mirrored.is_empty() => {
                    headers.remove(name);
                }
                Ok(mirrored) => {
                    headers.insert(name.to_owned(), mirrored);
                }
                Err(why) => {
                    headers.remove(name);
                    if stateless {
                        tracing::warn!(tool = name, "the tool is left out: {why}");
                        return false;
                    }
                }
            }
            true
        });
        Ok(tools)
    }

    /// Calls a tool. A tool error is a result (`is_error()`); a protocol error (an unknown tool)
    /// is an `Err`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallResult, ClientError> {
        let result = self.request("tools/call", json!({"name": name, "arguments": arguments})).await?;
        Ok(CallResult::new(result))
    }

    /// [`call_tool`](Self::call_tool) with its own `_meta`, progress and handlers.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallResult, ClientError> {
        let params = json!({"name": name, "arguments": arguments});
        let result = self.request_with("tools/call", params, options).await?;
        Ok(CallResult::new(result))
    }

    /// [`call_tool_with`](Self::call_tool_with), the result as the JSON text the server sent.
    pub(crate) async fn call_tool_raw(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        self.request_with_raw("tools/call", json!({"name": name, "arguments": arguments}), options).await
    }

    /// Every resource (`resources/list`, every page).
    pub async fn list_resources(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/list", "resources").await
    }

    /// Every resource template (`resources/templates/list`, every page).
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates").await
    }

    /// Reads a resource: its `contents`.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, ClientError> {
        self.request("resources/read", json!({"uri": uri})).await
    }

    /// Every prompt (`prompts/list`, every page).
    pub async fn list_prompts(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// Gets a prompt with its arguments.
    pub async fn get_prompt(&self, name: &str, arguments: Map<String, Value>) -> Result<Value, ClientError> {
        self.request("prompts/get", json!({"name": name, "arguments": arguments})).await
    }

    /// Completion of an argument (`completion/complete`): `reference` is a `ref/prompt` or
    /// `ref/resource` object.
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<Value, ClientError> {
        self.request(
            "completion/complete",
            json!({"ref": reference, "argument": {"name": argument, "value": value}}),
        )
        .await
    }

    /// Checks the server answers: `ping` (2025-11-25), or `server/discover` (2026-07-28, which
    /// has no `ping`).
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = if self.era() == Era::Stateless { "server/discover" } else { "ping" };
        self.request(method, json!({})).await.map(drop)
    }

    /// Changes the roots, and tells the server (`notifications/roots/list_changed`).
    pub async fn set_roots(&self, roots: Vec<Root>) -> Result<(), ClientError> {
        let Some(current) = &self.inner.roots else {
            return Err(ClientError::Protocol("this client declared no roots (ClientBuilder::roots)".into()));
        };
        *current.lock().expect("roots lock") = roots;
        if self.era() == Era::Handshake {
            self.notify("notifications/roots/list_changed", json!({})).await?;
        }
        Ok(())
    }

    /// Subscribes to a resource's updates (2025-11-25 `resources/subscribe`; in 2026-07-28 a
    /// [`listen`](Self::listen) stream naming it).
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.request("resources/subscribe", json!({"uri": uri})).await.map(drop)
    }

    /// Opens a `subscriptions/listen` stream (2026-07-28) for `notifications` (the filter:
    /// `toolsListChanged`, `resourceSubscriptions`, …); what it carries reaches
    /// [`notifications`](Self::notifications) until the returned stream is dropped or the
    /// connection ends. Resolves once the server acknowledged it.
    pub async fn listen(&self, notifications: Value) -> Result<Listening, ClientError> {
        let mut acknowledged = self.notifications();
        let client = self.clone();
        let mut stream = tokio::spawn(async move {
            client.request("subscriptions/listen", json!({"notifications": notifications})).await.map(drop)
        });
        let deadline = tokio::time::sleep(self.inner.timeout);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                note = acknowledged.recv() => match note {
                    Ok(ServerNotification::Other { method, .. })
                        if method == "notifications/subscriptions/acknowledged" =>
                    {
                        return Ok(Listening { stream });
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return Err(ClientError::Closed),
                },
                // Refused, or ended before it was acknowledged (the connection lost, say).
                ended = &mut stream => {
                    return Err(match ended {
                        Ok(Err(error)) => error,
                        Ok(Ok(())) => ClientError::Protocol(
                            "the server ended the listen stream without acknowledging it".into(),
                        ),
                        Err(_) => ClientError::Closed,
                    });
                }
                () = self.closed() => {
                    stream.abort();
                    return Err(ClientError::Closed);
                }
                () = &mut deadline => {
                    stream.abort();
                    return Err(ClientError::Timeout(self.inner.timeout));
                }
            }
        }
    }

    /// Every item of a paged list.
    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..10_000 {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = self.request(method, params).await?;
            items.extend(page[key].as_array().cloned().unwrap_or_default());
            match page["nextCursor"].as_str() {
                Some(next) if !next.is_empty() && Some(next) != cursor.as_deref() => {
                    cursor = Some(next.to_owned())
                }
                _ => return Ok(items),
            }
        }
        Err(ClientError::Protocol(format!("`{method}` did not end after 10,000 pages")))
    }

    /// Ends the connection (a stdio server is stopped).
    pub async fn close(&self) {
        self.inner.wire.close().await;
        self.inner.closed.cancel();
    }

    /// Resolves when the connection has ended (closed by either side, or lost).
    pub async fn closed(&self) {
        self.inner.closed.cancelled().await;
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.is_cancelled()
    }
}

/// An open `subscriptions/listen` stream; dropping it ends the stream.
#[derive(Debug)]
pub struct Listening {
    stream: tokio::task::JoinHandle<Result<(), ClientError>>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.stream.abort();
    }
}

/// The tool, prompt or resource a request names (the 2026-07-28 `Mcp-Name` header).
fn name_of(method: &str, params: &Value) -> Option<String> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    params[key].as_str().map(str::to_owned)
}

/// The arguments an input schema marks with `x-mcp-header`: their paths and header names;
/// an invalid declaration (SEP-2243: a header name that is not a non-empty HTTP token, a
/// property that is not a string, number, integer or boolean, or a name used twice regardless
/// of case) is an error, which says why.
fn mirrored_arguments(schema: &Value) -> Result<Mirrored, String> {
    fn walk(schema: &Value, path: &mut Vec<String>, out: &mut Mirrored) -> Result<(), String> {
        for (key, property) in schema["properties"].as_object().into_iter().flatten() {
            path.push(key.clone());
            if let Some(header) = property.get("x-mcp-header") {
                let at = path.join(".");
                let Some(header) = header.as_str().filter(|h| is_token(h)) else {
                    return Err(format!("`{at}` has an invalid `x-mcp-header` {header}"));
                };
                if !matches!(property["type"].as_str(), Some("string" | "number" | "integer" | "boolean")) {
                    return Err(format!("`{at}` has an `x-mcp-header` but is not of a primitive type"));
                }
                if out.iter().any(|(_, other)| other.eq_ignore_ascii_case(header)) {
                    return Err(format!("two arguments are mirrored in `Mcp-Param-{header}`"));
                }
                out.push((path.clone(), header.to_owned()));
            }
            if property["type"] == "object" {
                walk(property, path, out)?;
            }
            path.pop();
        }
        Ok(())
    }
    /// RFC 9110 `token`: one or more of ``!#$%&'*+-.^_`|~``, digits and letters.
    fn is_token(text: &str) -> bool {
        !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// What is kept per request id: the ids are this client's own (a counter), so a fast hash that
/// resists no chosen keys will do; every request inserts and removes one.
type ById<T> = HashMap<i64, T, foldhash::fast::RandomState>;

/// A request waiting for its answer: dropped unanswered (its caller gave up), it is forgotten
/// and the server is told (`notifications/cancelled`).
struct Waiting<'a> {
    inner: &'a Arc<Inner>,
    id: i64,
    answered: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.inner.routes.lock().expect("routes lock").remove(&self.id);
        let known = self.inner.pending.lock().expect("pending lock").remove(&self.id).is_some();
        if self.answered || !known {
            return;
        }
        let wire = self.inner.wire.clone();
        let bytes = serde_json::to_vec(&json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": self.id, "reason": "the client stopped waiting"},
        }))
        .expect("JSON serializes");
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = wire.send(Outgoing::plain(bytes, Kind::Notification)).await;
            });
        }
    }
}

/// Takes what the wire receives (on the wire's task): answers go to their requests, the
/// server's requests to the handlers (answered on the wire), notifications to their listeners.
/// Once the connection has ended (or the client is gone), it takes nothing more.
fn router(inner: std::sync::Weak<Inner>) -> IncomingHandler {
    Arc::new(move |received| {
        let Some(inner) = inner.upgrade() else { return false };
        if inner.closed.is_cancelled() && !matches!(received, Incoming::Closed(_)) {
            return false;
        }
        match received {
            Incoming::Message(bytes) => deliver(&inner, &bytes, None),
            Incoming::Related(bytes, request) => deliver(&inner, &bytes, Some(request)),
            Incoming::Failed(id, error) => {
                if let Some(id) = id.as_i64()
                    && let Some(waiter) = inner.pending.lock().expect("pending lock").remove(&id)
                {
                    let _ = waiter.send(Err(error));
                }
            }
            Incoming::Closed(why) => {
                if let Some(why) = why {
                    tracing::debug!(%why, "the connection to the server ended");
                }
                end(&inner);
                return false;
            }
        }
        true
    })
}

/// The connection ended: every request waiting fails.
fn end(inner: &Inner) {
    inner.closed.cancel();
    for (_, waiter) in inner.pending.lock().expect("pending lock").drain() {
        let _ = waiter.send(Err(ClientError::Closed));
    }
}

/// One message from the wire; `related` is the request it came in answer to, when the wire
/// knows (HTTP: that request's response stream).
fn deliver(inner: &Arc<Inner>, bytes: &[u8], related: Option<i64>) {
    // Most messages are answers to ours: a result is kept as the text it came as, read into
    // values only by whoever wants it read. Anything else is read whole.
    if let Ok(answer) = serde_json::from_slice::<Answer<'_>>(bytes)
        && answer.method.is_none()
        && !answer.error.0
        && let Some(id) = answer.id
    {
        if let Some(waiter) = inner.pending.lock().expect("pending lock").remove(&id) {
            let result = answer.result.map_or_else(
                || serde_json::value::to_raw_value(&Value::Null).expect("JSON serializes"),
                ToOwned::to_owned,
            );
            let _ = waiter.send(Ok(result));
        }
        return;
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(message) => handle(inner, message, related),
        Err(_) => tracing::warn!("the server sent something that is not JSON; ignored"),
    }
}

/// An answer of the server's, its result as text (a message with a `method`, or an `error`
/// even `null`, is read whole; as is one that does not read as this, e.g. with a key twice).
#[derive(serde::Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    id: Option<i64>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Present,
}

/// Whether a key is there, whatever its value (`null` too).
#[derive(Default)]
struct Present(bool);

impl<'de> serde::Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(Present(true))
    }
}

/// A result read into a value.
fn read(result: &RawValue) -> Result<Value, ClientError> {
    serde_json::from_str(result.get())
        .map_err(|e| ClientError::Protocol(format!("the server's result could not be read: {e}")))
}

/// What a 2026-07-28 result is, by its `resultType`.
enum ResultType {
    InputRequired,
    Task,
    Other,
}

/// A result's `resultType`, read without reading the rest of it into values.
fn result_type(result: &RawValue) -> ResultType {
    #[derive(serde::Deserialize)]
    struct Typed<'a> {
        #[serde(rename = "resultType", borrow)]
        result_type: Option<&'a str>,
    }
    let of = |name: Option<&str>| match name {
        Some("input_required") => ResultType::InputRequired,
        Some("task") => ResultType::Task,
        _ => ResultType::Other,
    };
    match serde_json::from_str::<Typed<'_>>(result.get()) {
        Ok(typed) => of(typed.result_type),
        // Not an object, a `resultType` with escapes or not a string, a key twice: as a value.
        Err(_) => of(serde_json::from_str::<Value>(result.get())
            .ok()
            .as_ref()
            .and_then(|v| v["resultType"].as_str())),
    }
}

/// The route of the request a message of the server's belongs to: the one it names, else the
/// only request in progress with a route that `wanted` (has a handler for it); `Err` when
/// several do (it cannot be told which).
fn route_of(
    inner: &Inner,
    related: Option<i64>,
    wanted: impl Fn(&Route) -> bool,
) -> Result<Option<Route>, usize> {
    let routes = inner.routes.lock().expect("routes lock");
    if let Some(route) = related.and_then(|id| routes.get(&id)) {
        return Ok(Some(route.clone()).filter(|r| wanted(r)));
    }
    let mut candidates = routes.values().filter(|r| wanted(r));
    match (candidates.next(), candidates.next()) {
        (None, _) => Ok(None),
        (Some(only), None) => Ok(Some(only.clone())),
        (Some(_), Some(_)) => Err(2 + candidates.count()),
    }
}

/// One message from the server.
fn handle(inner: &Arc<Inner>, mut message: Value, related: Option<i64>) {
    let method = message["method"].as_str().map(str::to_owned);
    match (method, message.get("id")) {
        // An answer to one of ours.
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let Some(waiter) = inner.pending.lock().expect("pending lock").remove(&id) else { return };
            let answer = match message.get("error") {
                Some(error) => Err(ClientError::Rpc {
                    code: error["code"].as_i64().unwrap_or(-32603),
                    message: error["message"].as_str().unwrap_or_default().to_owned(),
                    data: error.get("data").cloned(),
                }),
                None => {
                    let result =
                        message.as_object_mut().and_then(|m| m.remove("result")).unwrap_or(Value::Null);
                    Ok(serde_json::value::to_raw_value(&result).expect("JSON serializes"))
                }
            };
            let _ = waiter.send(answer);
        }
        // A request of the server's (2025-11-25): answered by the handler of the request it
        // belongs to, else by the client's.
        (Some(method), Some(id)) => {
            let client = Client { inner: inner.clone() };
            let id = id.clone();
            let own = route_of(inner, related, |r| r.questions.is_some());
            tokio::spawn(async move {
                let question = Question { method, params: message["params"].clone(), key: None };
                let answer = match own {
                    Ok(route) => {
                        client.answer_question(question, route.and_then(|r| r.questions).as_ref()).await
                    }
                    // Several requests could be asking: only the client's own handlers may answer.
                    Err(several) if client.has_handler(&question.method) => {
                        tracing::debug!(
                            several,
                            "a question of the server names no request; the client's handler answers"
                        );
                        client.answer_question(question, None).await
                    }
                    Err(several) => Err(ClientError::Rpc {
                        code: -32603,
                        message: format!(
                            "`{}` names no request and {several} requests are in progress: the client cannot tell which to ask",
                            question.method
                        ),
                        data: None,
                    }),
                };
                let response = match answer {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err(ClientError::Rpc { code, message, data }) => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}})
                    }
                    Err(other) => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": other.to_string()}})
                    }
                };
                let bytes = serde_json::to_vec(&response).expect("JSON serializes");
                let _ = client.inner.wire.send(Outgoing::plain(bytes, Kind::Response)).await;
            });
        }
        (Some(method), None) => notification(inner, &method, &message["params"], related),
        (None, None) => {
            tracing::debug!("ignoring a message that is neither a request, an answer nor a notification")
        }
    }
}

/// A notification of the server's: progress to its request's listener, a log message to the
/// request it belongs to (when known), everything else to the client's listeners.
fn notification(inner: &Arc<Inner>, method: &str, params: &Value, related: Option<i64>) {
    if method == "notifications/progress" {
        let token = match &params["progressToken"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if let Some(sender) = inner.progress.lock().expect("progress lock").get(&token) {
            let _ = sender.send(Progress {
                progress: params["progress"].as_f64().unwrap_or_default(),
                total: params["total"].as_f64(),
                message: params["message"].as_str().map(str::to_owned),
            });
        }
        return;
    }
    let notification = ServerNotification::of(method, params);
    if matches!(notification, ServerNotification::Log { .. })
        && let Ok(Some(route)) = route_of(inner, related, |r| r.logs.is_some())
        && let Some(logs) = route.logs
        && logs.send(notification.clone()).is_ok()
    {
        return;
    }
    let _ = inner.notifications.send(notification);
}
