//! The other end of a call: facts about the client ([`Peer`]), and the queue a call's answer and
//! related messages go to ([`Outbound`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::protocol::messages::LogLevel;
use crate::protocol::{Era, Implementation, LATEST_HANDSHAKE_VERSION};

/// Facts about the client: from `initialize`, shared by a session's calls (2025-11-25), or from
/// one request's envelope (2026-07-28).
pub(crate) struct Peer {
    pub client_info: Implementation,
    pub client_capabilities: Map<String, Value>,
    pub protocol_version: String,
    pub era: Era,
    /// Minimum level of `notifications/message` the client wants (`logging/setLevel`, or the
    /// request's `logLevel`); [`LOGS_OFF`] when it asked for none.
    log_level: AtomicU8,
}

/// No log message is sent (a stateless request that did not ask for any).
const LOGS_OFF: u8 = u8::MAX;

impl Peer {
    /// A session's client before `initialize` says more.
    pub fn new() -> Self {
        Peer {
            client_info: Implementation::default(),
            client_capabilities: Map::new(),
            protocol_version: LATEST_HANDSHAKE_VERSION.to_owned(),
            era: Era::Handshake,
            log_level: AtomicU8::new(LogLevel::Info as u8),
        }
    }
    /// The client of one stateless request; `log_level` is what it asked for (none: no logs).
    pub fn stateless(
        protocol_version: String,
        client_capabilities: Map<String, Value>,
        client_info: Option<Implementation>,
        log_level: Option<LogLevel>,
    ) -> Self {
        Peer {
            client_info: client_info.unwrap_or_default(),
            client_capabilities,
            protocol_version,
            era: Era::Stateless,
            log_level: AtomicU8::new(log_level.map_or(LOGS_OFF, |l| l as u8)),
        }
    }
    /// The lowest level sent, or `None` when no log message is.
    pub fn log_level(&self) -> Option<LogLevel> {
        match self.log_level.load(Ordering::Relaxed) {
            LOGS_OFF => None,
            n => Some(LogLevel::from_u8(n)),
        }
    }
    pub fn set_log_level(&self, level: LogLevel) {
        self.log_level.store(level as u8, Ordering::Relaxed);
    }
}

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
    /// Resolves when the other end stopped reading (the client went away).
    pub async fn closed(&self) {
        self.0.closed().await
    }
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

/// Ends the current connection of a resumable SSE stream; true if there was one.
pub(crate) type CloseStream = Arc<dyn Fn() -> bool + Send + Sync>;
