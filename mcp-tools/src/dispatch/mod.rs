//! The dispatch path, transport-agnostic: a [`session`] decodes each message, applies the
//! lifecycle and routes by method ([`methods`]: one table, one `match`); [`call`] runs one
//! `tools/call`. [`Shared`] is what every session of a server reads: the registry and catalog
//! (swapped whole on change), state, options, and the change events clients hear about.

pub(crate) mod call;
pub(crate) mod methods;
pub(crate) mod session;
pub(crate) mod stateless;

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::context::HttpParts;
use crate::context::StateMap;
use crate::context::peer::{CloseStream, Outbound};
use crate::protocol::stateless::CacheHint;
use crate::protocol::{Era, Implementation};
use crate::registry::catalog::Catalog;
use crate::registry::tools::Registry;

/// A change every connected client hears about.
#[derive(Clone, Debug)]
pub(crate) enum ServerEvent {
    ToolsChanged,
    ResourcesChanged,
    PromptsChanged,
    ResourceUpdated(String),
}

/// What every session of a server shares.
pub(crate) struct Shared {
    pub info: Implementation,
    pub instructions: Option<String>,
    /// The served tools: read without locks on every call, replaced whole on change.
    pub registry: ArcSwap<Registry>,
    /// Resources, prompts, completion: replaced whole on change, like the tools.
    pub catalog: ArcSwap<Catalog>,
    pub state: Arc<StateMap>,
    pub events: broadcast::Sender<ServerEvent>,
    pub max_message_bytes: usize,
    pub shutdown_timeout: Duration,
    pub client_request_timeout: Duration,
    /// Signs the `requestState` of multi-round-trip requests (2026-07-28).
    pub state_key: [u8; 32],
    /// The cache hints of 2026-07-28 list results.
    pub list_cache: CacheHint,
    /// The one era served, when pinned (`None`: both, each client in its own).
    pub only_era: Option<Era>,
}

impl Shared {
    /// The capabilities declared on `initialize`.
    pub fn capabilities(&self) -> Value {
        let mut capabilities = json!({
            "tools": {"listChanged": true},
            "logging": {},
        });
        self.catalog.load().declare(&mut capabilities);
        capabilities
    }
}

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
