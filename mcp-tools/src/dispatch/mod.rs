//! The dispatch path, transport-agnostic: a [`session`] decodes each message, serves it in its
//! era and routes by method ([`methods`]: one table, one `match`); [`call`] runs one
//! `tools/call`; [`stateless`] and [`tasks`] hold what only 2026-07-28 has; [`extensions`] is the
//! table of the extensions a server offers. [`shared::Shared`] is what every session of a server
//! reads; [`events`] what they hear; [`bus`] what the instances of one service tell each other;
//! [`session_store`] where they keep the 2025-11-25 sessions they share.

pub(crate) mod bus;
pub(crate) mod call;
pub(crate) mod events;
pub(crate) mod extensions;
pub(crate) mod methods;
pub(crate) mod observe;
pub(crate) mod pipeline;
pub(crate) mod quota;
pub(crate) mod session;
#[cfg(feature = "http")]
pub(crate) mod session_store;
pub(crate) mod shared;
pub(crate) mod stateless;
pub(crate) mod tasks;

use std::sync::Arc;

use crate::context::HttpParts;
use crate::context::peer::{CloseStream, Outbound};

/// Where a message came from: the queue its answers go to, HTTP request facts, how to close
/// its SSE stream (resumable HTTP streams only), and where to leave its request to run.
#[derive(Clone)]
pub(crate) struct Origin {
    pub reply: Outbound,
    pub http: Option<Arc<HttpParts>>,
    pub close: Option<CloseStream>,
    /// Set by a transport that runs the request itself (an HTTP POST carries one message and
    /// waits for its answer): the request is left here instead of being spawned.
    pub inline: Option<InlineSlot>,
    /// The request, when the server's observer watches it (telemetry): ended when answered.
    pub observed: Option<Arc<observe::Observed>>,
}

/// A request left to its transport to run ([`Origin::inline`]); it answers through the origin's
/// queue like a spawned one.
pub(crate) type InlineSlot = Arc<std::sync::Mutex<Option<InlineCall>>>;

/// See [`InlineSlot`].
pub(crate) type InlineCall = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

impl Origin {
    pub fn new(reply: Outbound) -> Self {
        Origin { reply, http: None, close: None, inline: None, observed: None }
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
