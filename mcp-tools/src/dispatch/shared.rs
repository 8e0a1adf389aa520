//! What every session of a server reads: the registry and catalog (swapped whole on change),
//! state, options, the tasks, the extensions offered, and the sender of the change events.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;
use serde_json::{Value, json};

use super::events::Events;
use super::extensions::Extensions;
use super::observe::Observer;
use super::pipeline::Pipeline;
use super::quota::{Held, Quota};
#[cfg(feature = "http")]
use super::session_store::SessionStore;
use super::stateless::KnownEnvelopes;
use super::tasks::Tasks;
use crate::context::StateMap;
use crate::context::peer::{Outbound, Queue};
use crate::model::limits::Limits;
use crate::protocol::stateless::CacheHint;
use crate::protocol::{Era, Implementation};
use crate::registry::catalog::Catalog;
use crate::registry::tools::Registry;

/// What every session of a server shares.
pub(crate) struct Shared {
    pub info: Implementation,
    pub instructions: Option<String>,
    /// The served tools: read without locks on every call, replaced whole on change.
    pub registry: ArcSwap<Registry>,
    /// Resources, prompts, completion: replaced whole on change, like the tools.
    pub catalog: ArcSwap<Catalog>,
    pub state: Arc<StateMap>,
    /// The change events: told to this server's listeners, and shared with the other instances
    /// of its service when it has a bus.
    pub events: Arc<Events>,
    pub limits: Limits,
    /// How many requests run on the whole server: at most `limits.max_in_flight`
    /// ([`take_place`](Self::take_place)).
    pub running: AtomicUsize,
    pub shutdown_timeout: Duration,
    pub client_request_timeout: Duration,
    /// Whether the command line serves on a current-thread runtime
    /// ([`ServerBuilder::current_thread`](crate::ServerBuilder::current_thread)).
    pub current_thread: bool,
    /// Signs the `requestState` of multi-round-trip requests (2026-07-28): [`state_key`]
    /// (replaced once by the command line's `--redis` with the instances' shared one, unless
    /// the key was given: `state_key_given`).
    ///
    /// [`state_key`]: Shared::state_key
    pub state_key: arc_swap::ArcSwap<[u8; 32]>,
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub state_key_given: bool,
    /// The cache hints of 2026-07-28 list results.
    pub list_cache: CacheHint,
    /// The one era served, when pinned (`None`: both, each client in its own).
    pub only_era: Option<Era>,
    /// Calls run as tasks (2026-07-28).
    pub tasks: Arc<Tasks>,
    /// The extensions this server offers: declared in its capabilities, their methods routed
    /// and a client's declaration checked through this table.
    pub extensions: Extensions,
    /// The peers of the envelopes last seen (2026-07-28).
    pub envelopes: KnownEnvelopes,
    /// The `subscriptions/listen` streams open, per caller and in all (2026-07-28).
    pub listens: Arc<Quota>,
    /// The layers every tool call goes through, and the list filters.
    pub pipeline: Arc<Pipeline>,
    /// What watches every request (telemetry), if anything does: set by the builder, or by the
    /// command line before it serves (`--otel`).
    pub observer: std::sync::OnceLock<Arc<dyn Observer>>,
    /// Where the 2025-11-25 sessions of the HTTP endpoint are shared with the other instances
    /// of this service (unset: each endpoint keeps its own, in memory): set by the builder, or by
    /// the command line before it serves (`--redis`).
    #[cfg(feature = "http")]
    pub sessions: std::sync::OnceLock<Arc<dyn SessionStore>>,
    /// Cancels its token when the server is gone (what runs beside it, such as the upstreams of
    /// its mounts, then stops).
    pub _gone: tokio_util::sync::DropGuard,
}

impl Shared {
    /// The key that signs `requestState`.
    pub fn state_key(&self) -> [u8; 32] {
        **self.state_key.load()
    }

    /// A queue to one client (a connection, an HTTP stream), bounded by the server's limits
    /// ([`Outbound::channel`]).
    pub fn outbound(&self) -> (Outbound, Queue) {
        Outbound::channel(self.limits.max_queued_bytes, self.limits.write_timeout)
    }

    /// The queue of one request's messages ([`Outbound::for_request`]), with this server's limits.
    #[cfg(feature = "http")]
    pub fn request_outbound(&self) -> (Outbound, Queue) {
        Outbound::for_request(self.limits.max_queued_bytes, self.limits.write_timeout)
    }

    /// Takes one of the server's places for running requests, if one is free; each taken place
    /// is given back with [`free_place`](Self::free_place). A counter, not a semaphore: nothing
    /// waits for a place, and a semaphore's release takes a lock.
    pub fn take_place(&self) -> bool {
        let limit = self.limits.max_in_flight;
        self.running
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < limit).then_some(n + 1))
            .is_ok()
    }

    /// Gives back a place taken with [`take_place`](Self::take_place).
    pub fn free_place(&self) {
        self.running.fetch_sub(1, Ordering::AcqRel);
    }

    /// One of the server's places for running requests, held by what runs outside a request (a
    /// task) and given back when the guard is dropped; `None` if none is free.
    pub fn hold_place(self: &Arc<Self>) -> Option<Held> {
        let shared = self.clone();
        self.take_place().then(|| Held::new(move || shared.free_place()))
    }

    /// The capabilities declared to clients of `era` (on `initialize`, or `server/discover`).
    pub fn capabilities(&self, era: Era) -> Value {
        let mut capabilities = json!({
            "tools": {"listChanged": true},
            "logging": {},
        });
        self.catalog.load().declare(&mut capabilities);
        self.extensions.declare(era, &mut capabilities);
        capabilities
    }
}
