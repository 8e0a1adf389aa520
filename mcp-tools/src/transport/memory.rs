//! The in-memory transport: a client connected in-process. Messages go to a session as JSON text
//! and its answers come back on a queue, so they pass through the real protocol layer (decoding,
//! lifecycle, validation, concurrency) without bytes on a wire. The test client
//! ([`TestClient`](crate::testing::TestClient)) and the command line's `call` sit on it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::context::HttpParts;
use crate::context::auth::AuthInfo;
use crate::context::peer::Queue;
use crate::dispatch::Origin;
use crate::dispatch::session::Session;
use crate::protocol::stateless::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY};
use crate::protocol::{Era, LATEST_HANDSHAKE_VERSION, STATELESS_VERSIONS};
use crate::server::Server;

/// A JSON-RPC error answer.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The error code (e.g. -32602).
    pub code: i64,
    /// The error message.
    pub message: String,
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for RpcError {}

/// Answers the server's requests to the client (`sampling/createMessage`, `elicitation/create`,
/// `roots/list`, …): gets the method and params, returns the result or an error.
pub type Responder = dyn Fn(&str, &Value) -> Result<Value, RpcError> + Send + Sync;

struct Incoming {
    queue: Queue,
    answers: HashMap<i64, Value>,
    notifications: Vec<Value>,
}

/// One in-process connection.
pub(crate) struct Connection {
    session: Arc<Session>,
    origin: Origin,
    next_id: AtomicI64,
    incoming: Mutex<Incoming>,
    responder: Option<Arc<Responder>>,
    /// Stateless (2026-07-28): the capabilities every request's envelope declares.
    stateless: Option<Value>,
}

/// The most rounds a stateless request is retried with answers before giving up.
const MAX_ROUNDS: usize = 16;

impl Connection {
    /// A connection to `server`, not yet initialized; `responder` answers the server's requests
    /// (without one, they get "method not found").
    pub fn open(server: &Server, responder: Option<Arc<Responder>>) -> Connection {
        let (outbound, queue) = server.shared.outbound();
        let session = Session::new(server.shared.clone(), Some(outbound.clone()));
        session.forward_events();
        Connection {
            session,
            origin: Origin::new(outbound),
            next_id: AtomicI64::new(1),
            incoming: Mutex::new(Incoming { queue, answers: HashMap::new(), notifications: Vec::new() }),
            responder,
            stateless: None,
        }
    }

    /// A connection speaking the stateless revision (2026-07-28): no handshake; every request
    /// carries the envelope declaring `capabilities`, and `input_required` results are answered
    /// by the responder and retried.
    pub fn open_stateless(
        server: &Server,
        capabilities: Value,
        responder: Option<Arc<Responder>>,
    ) -> Connection {
        Connection { stateless: Some(capabilities), ..Connection::open(server, responder) }
    }

    /// Sends every request as coming from a caller with this verified identity (as the HTTP
    /// transport does once it verified a token): what it creates belongs to that identity.
    pub fn set_identity(&mut self, auth: AuthInfo) {
        let http = HttpParts {
            headers: Default::default(),
            peer_addr: None,
            session_id: None,
            auth: Some(Arc::new(auth)),
        };
        self.origin.http = Some(Arc::new(http));
    }

    /// The era this connection speaks.
    pub fn era(&self) -> Era {
        if self.stateless.is_some() { Era::Stateless } else { Era::Handshake }
    }

    /// The `initialize` handshake, declaring `capabilities`, then `notifications/initialized`.
    pub async fn initialize(&self, capabilities: Value) -> Result<Value, RpcError> {
        let result = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": LATEST_HANDSHAKE_VERSION,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "mcp-tools-test", "version": env!("CARGO_PKG_VERSION")},
                }),
            )
            .await?;
        self.notify("notifications/initialized", json!({}));
        Ok(result)
    }

    /// Sends a request and waits for its answer. Stateless, an `input_required` result is
    /// answered (with the responder) and the request retried until it completes.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.send_request(method, params.clone());
        let mut result = self.answer(id).await?;
        for _ in 0..MAX_ROUNDS {
            if self.stateless.is_none() || result["resultType"] != "input_required" {
                return Ok(result);
            }
            let mut retry = params.clone();
            let retry_params = retry.as_object_mut().expect("request params are an object");
            let mut answers = serde_json::Map::new();
            for (key, question) in result["inputRequests"].as_object().into_iter().flatten() {
                let method = question["method"].as_str().unwrap_or_default();
                let answer = match &self.responder {
                    Some(responder) => responder(method, &question["params"])?,
                    None => {
                        return Err(RpcError {
                            code: -32601,
                            message: format!("the test client does not answer {method}"),
                        });
                    }
                };
                answers.insert(key.clone(), answer);
            }
            retry_params.insert("inputResponses".into(), Value::Object(answers));
            if let Some(state) = result.get("requestState") {
                retry_params.insert("requestState".into(), state.clone());
            }
            let id = self.send_request(method, retry);
            result = self.answer(id).await?;
        }
        Err(RpcError {
            code: -32603,
            message: format!("`{method}` still needs input after {MAX_ROUNDS} rounds"),
        })
    }

    /// Sends a request without waiting; returns its id. Stateless, its params get the envelope
    /// (`_meta` members already there are kept).
    pub fn send_request(&self, method: &str, mut params: Value) -> i64 {
        if let Some(capabilities) = &self.stateless {
            if !params.is_object() {
                params = json!({});
            }
            let meta = params.as_object_mut().expect("an object").entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.entry(PROTOCOL_VERSION_KEY).or_insert_with(|| json!(STATELESS_VERSIONS[0]));
                meta.entry(CLIENT_CAPABILITIES_KEY).or_insert_with(|| capabilities.clone());
                meta.entry("io.modelcontextprotocol/clientInfo").or_insert_with(
                    || json!({"name": "mcp-tools-test", "version": env!("CARGO_PKG_VERSION")}),
                );
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        id
    }

    /// Waits for the answer to request `id`, collecting notifications that arrive meanwhile.
    pub async fn answer(&self, id: i64) -> Result<Value, RpcError> {
        // The server's own requests have ids too: an answer is a message without a method.
        let message = self.wait_for(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none()).await;
        into_result(message)
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
    }

    /// Sends one message as it is.
    pub fn send(&self, message: &str) {
        self.session.handle_message(message.as_bytes(), &self.origin);
    }

    /// The next message that comes back, whatever it is.
    pub async fn next_message(&self) -> Value {
        let mut incoming = self.incoming.lock().await;
        let bytes = incoming.queue.recv().await.expect("the session is open");
        serde_json::from_slice(&bytes).expect("the server sends JSON")
    }

    /// The notifications received so far (drained); the server's requests are answered.
    pub async fn take_notifications(&self) -> Vec<Value> {
        let mut incoming = self.incoming.lock().await;
        while let Some(bytes) = incoming.queue.try_recv() {
            let message: Value = serde_json::from_slice(&bytes).expect("the server sends JSON");
            if !self.answer_server_request(&message) {
                stash(&mut incoming, message);
            }
        }
        std::mem::take(&mut incoming.notifications)
    }

    /// Waits for the next notification named `method` (one already received counts).
    pub async fn notification(&self, method: &str) -> Value {
        {
            let mut incoming = self.incoming.lock().await;
            if let Some(i) = incoming.notifications.iter().position(|n| n["method"] == method) {
                return incoming.notifications.remove(i);
            }
        }
        self.wait_for(|m| m["method"] == method && m.get("id").is_none()).await
    }

    async fn wait_for(&self, wanted: impl Fn(&Value) -> bool) -> Value {
        let mut incoming = self.incoming.lock().await;
        if let Some(id) = incoming.answers.keys().copied().find(|id| wanted(&json!({"id": id}))) {
            return incoming.answers.remove(&id).expect("present");
        }
        loop {
            let bytes = incoming.queue.recv().await.expect("the session is open");
            let message: Value = serde_json::from_slice(&bytes).expect("the server sends JSON");
            if wanted(&message) {
                return message;
            }
            if !self.answer_server_request(&message) {
                stash(&mut incoming, message);
            }
        }
    }

    /// Answers a request from the server (with the responder, or "method not found").
    fn answer_server_request(&self, message: &Value) -> bool {
        let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str))
        else {
            return false;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let outcome = match &self.responder {
            Some(responder) => responder(method, &params),
            None => {
                Err(RpcError { code: -32601, message: format!("the test client does not answer {method}") })
            }
        };
        let answer = match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": e.code, "message": e.message}}),
        };
        self.send(&answer.to_string());
        true
    }
}

fn stash(incoming: &mut Incoming, message: Value) {
    match message.get("id").and_then(Value::as_i64) {
        Some(id) if message.get("method").is_none() => {
            incoming.answers.insert(id, message);
        }
        _ => incoming.notifications.push(message),
    }
}

fn into_result(message: Value) -> Result<Value, RpcError> {
    if let Some(error) = message.get("error") {
        return Err(RpcError {
            code: error["code"].as_i64().unwrap_or_default(),
            message: error["message"].as_str().unwrap_or_default().to_owned(),
        });
    }
    Ok(message.get("result").cloned().unwrap_or(Value::Null))
}

#[cfg(feature = "client")]
impl Server {
    /// A [`Client`](crate::client::Client) of this server in the same process: connected through
    /// the real stdio transport over an in-memory pipe (so every message goes through the
    /// protocol layer as from a spawned client), speaking the revision `builder` chooses.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_tools::client::Client;
    /// let server = mcp_tools::Server::builder().inventory(false).build().unwrap();
    /// let client = server.connect(Client::builder()).await.unwrap();
    /// assert!(client.list_tools().await.unwrap().is_empty());
    /// # }
    /// ```
    pub async fn connect(
        &self,
        builder: crate::client::ClientBuilder,
    ) -> Result<crate::client::Client, crate::client::ClientError> {
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (server_reader, server_writer) = tokio::io::split(server_side);
        let server = self.clone();
        tokio::spawn(async move {
            if let Err(e) = server.serve(server_reader, server_writer).await {
                tracing::debug!(error = %e, "an in-process client's connection ended");
            }
        });
        let (reader, writer) = tokio::io::split(client_side);
        builder.connect_pipe(reader, writer).await
    }
}

#[cfg(feature = "client")]
impl crate::compose::Upstream {
    /// An mcp-tools server in this process, reached through the real stdio transport over an
    /// in-memory pipe ([`Server::connect`]).
    pub fn server(server: Server) -> crate::compose::Upstream {
        let label = format!("{} (in process)", server.info().name);
        crate::compose::Upstream::custom(label, move |builder| {
            let server = server.clone();
            Box::pin(async move { server.connect(builder).await })
        })
    }
}
