//! The other end of a call: facts about the client ([`Peer`]), and the queue a call's answer and
//! related messages go to ([`Outbound`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::protocol::messages::LogLevel;
use crate::protocol::{Implementation, LATEST_PROTOCOL_VERSION};

/// Facts about the connected client and the session's settings, shared by all its calls.
pub(crate) struct Peer {
    pub client_info: Implementation,
    pub client_capabilities: Map<String, Value>,
    pub protocol_version: String,
    /// Minimum level of `notifications/message` the client wants (set by `logging/setLevel`).
    pub log_level: AtomicU8,
}

impl Peer {
    pub fn new() -> Self {
        Peer {
            client_info: Implementation::default(),
            client_capabilities: Map::new(),
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            log_level: AtomicU8::new(LogLevel::Info as u8),
        }
    }
    pub fn log_level(&self) -> LogLevel {
        LogLevel::from_u8(self.log_level.load(Ordering::Relaxed))
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
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

/// Ends the current connection of a resumable SSE stream; true if there was one.
pub(crate) type CloseStream = Arc<dyn Fn() -> bool + Send + Sync>;
