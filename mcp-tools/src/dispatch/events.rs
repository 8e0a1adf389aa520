//! The changes every connected client may hear about, broadcast from the server to its sessions
//! and listen streams, and shared with the other instances of its service through the bus.
//!
//! # Events between instances
//!
//! A server given a bus shared with other instances ([`ServerBuilder::bus`], or
//! `ServerBuilder::redis`) publishes each change it makes itself, and tells its own listeners
//! what the others publish, exactly as if the change were its own:
//!
//! | here | on the bus | there |
//! |---|---|---|
//! | a tool added, removed, enabled or disabled at run time | [`BusMessage::ListChanged`] `tools` | `notifications/tools/list_changed` |
//! | a resource or template added or removed | `ListChanged` `resources` | `notifications/resources/list_changed` |
//! | a prompt added or removed | `ListChanged` `prompts` | `notifications/prompts/list_changed` |
//! | [`Server::notify_resource_updated`] | [`BusMessage::ResourceUpdated`] | `notifications/resources/updated` to its subscribers |
//! | a task's state saved (by the instance running it) | [`BusMessage::TaskChanged`] | `notifications/tasks` to the listen streams that named it |
//! | a shared 2025-11-25 session changed or ended (see `session_store.rs`) | [`BusMessage::SessionChanged`], [`BusMessage::SessionEnded`] | its copy read again, or ended |
//!
//! "Listeners" are the 2026-07-28 `subscriptions/listen` streams and the 2025-11-25 sessions
//! (their GET stream over HTTP, stdout over stdio), each by its own filter. What an instance
//! hears on the bus it tells its listeners only, never the bus again (no loops), and an instance
//! does not hear its own messages (its listeners are told once).
//!
//! **What a list change from another instance means.** The catalog is each instance's own: the
//! event carries no tool, only "re-list". Every instance runs the same code, so a tool an
//! application adds at run time is normally added on every instance by the application (each
//! reacting to the same configuration change, say); a client told by one of them re-lists on
//! whichever instance its next request reaches. An application that changes one instance only
//! gets clients that see the change or not depending on where their `tools/list` lands: make the
//! change everywhere. When it is made on every instance, each announces it, so a listener hears
//! one notification per instance: each means "re-list", and the last comes after the last change.
//!
//! Changes an instance learns from its own upstreams (the tools and resources of a mount) are
//! not published: every instance mounts the same upstream and hears it itself. Delivery is the
//! bus's: at most once, so an event published while an instance's subscription is down is lost
//! for that instance's listeners.
//!
//! [`ServerBuilder::bus`]: crate::server::ServerBuilder::bus
//! [`Server::notify_resource_updated`]: crate::server::Server::notify_resource_updated

use std::sync::{Arc, Mutex};

use futures_util::StreamExt as _;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::bus::{Bus, BusMessage, ListKind};

/// A change every connected client hears about.
#[derive(Clone, Debug)]
pub(crate) enum ServerEvent {
    ToolsChanged,
    ResourcesChanged,
    PromptsChanged,
    ResourceUpdated(String),
    /// A task's state changed: its id and what `tasks/get` now answers.
    TaskChanged(String, Arc<Map<String, Value>>),
    /// A shared 2025-11-25 session changed (read it again) or ended, by its id: heard by the
    /// HTTP endpoint, which holds the sessions; no client hears it.
    SessionChanged(String),
    SessionEnded(String),
    /// A shared 2025-11-25 session's client answered a request of another instance: the
    /// session's id and the response (`id`, `result` or `error`); heard by the HTTP endpoint.
    SessionAnswer(String, Arc<Value>),
}

/// How many events may wait to be published before new ones are dropped (the bus is down or
/// slow): each is a hint to re-read, so dropping beats holding memory without bound.
const OUTGOING: usize = 1024;

/// The change events of one server: told to its own sessions and listen streams, and, when it
/// shares a bus with other instances, published there and heard from there (see the module's
/// documentation).
pub(crate) struct Events {
    local: broadcast::Sender<ServerEvent>,
    relay: Mutex<Relay>,
}

/// The link between the server's events and the bus.
#[derive(Default)]
struct Relay {
    /// The bus shared with other instances (`None`: the server is alone, nothing is relayed).
    bus: Option<Arc<dyn Bus>>,
    /// The queue to the task publishing this server's events, once the relay runs.
    outgoing: Option<mpsc::Sender<BusMessage>>,
    /// Stops the relay's tasks when the server is gone or its bus replaced.
    _stop: Option<DropGuard>,
}

impl Events {
    /// The events of a server alone (`bus` `None`), or of one instance sharing `bus`.
    pub fn new(capacity: usize, bus: Option<Arc<dyn Bus>>) -> Events {
        let (local, _) = broadcast::channel(capacity);
        Events { local, relay: Mutex::new(Relay { bus, ..Relay::default() }) }
    }

    /// Shares events through `bus` from now on (the command line's `--redis`, before serving).
    #[cfg(feature = "redis")]
    pub fn set_bus(&self, bus: Arc<dyn Bus>) {
        *self.relay.lock().expect("relay lock") = Relay { bus: Some(bus), ..Relay::default() };
        self.join();
    }

    /// Hears every event from now on: this server's, and those the other instances publish.
    pub fn subscribe(&self) -> broadcast::Receiver<ServerEvent> {
        self.join();
        self.local.subscribe()
    }

    /// How many listeners there are (sessions forwarding events, listen streams).
    #[cfg(all(test, feature = "http"))]
    pub fn receiver_count(&self) -> usize {
        self.local.receiver_count()
    }

    /// A change made by this server: its listeners hear it, and so do the other instances'.
    pub fn announce(&self, event: ServerEvent) {
        let message = to_message(&event);
        let _ = self.local.send(event);
        if let Some(message) = message {
            self.publish(message);
        }
    }

    /// A change the other instances must hear, and this server need not (it made it itself).
    #[cfg(feature = "http")]
    pub fn tell_others(&self, event: &ServerEvent) {
        if let Some(message) = to_message(event) {
            self.publish(message);
        }
    }

    fn publish(&self, message: BusMessage) {
        let Some(outgoing) = self.join() else { return };
        if let Err(mpsc::error::TrySendError::Full(_)) = outgoing.try_send(message) {
            tracing::warn!("the bus is behind: a change was not told to the other instances");
        }
    }

    /// A change this server learnt on its own (from a mount's upstream, which every instance
    /// hears itself): its listeners hear it, the bus does not.
    pub fn tell_here(&self, event: ServerEvent) {
        let _ = self.local.send(event);
    }

    /// Starts the relay if the server shares a bus and it does not run yet (it needs a Tokio
    /// runtime: without one, nothing is relayed until a listener subscribes inside one); the
    /// queue to publish through, while it runs.
    fn join(&self) -> Option<mpsc::Sender<BusMessage>> {
        let mut relay = self.relay.lock().expect("relay lock");
        let bus = relay.bus.clone()?;
        if let Some(outgoing) = &relay.outgoing {
            return Some(outgoing.clone());
        }
        tokio::runtime::Handle::try_current().ok()?;
        let stop = CancellationToken::new();
        let (outgoing, queue) = mpsc::channel(OUTGOING);
        // Subscribed now, before any listener of this server is acknowledged.
        let heard = bus.subscribe();
        tokio::spawn(publish(bus, queue, stop.clone()));
        tokio::spawn(hear(heard, self.local.clone(), stop.clone()));
        relay.outgoing = Some(outgoing.clone());
        relay._stop = Some(stop.drop_guard());
        Some(outgoing)
    }
}

/// Publishes this server's events, in order, until `stop`.
async fn publish(bus: Arc<dyn Bus>, mut queue: mpsc::Receiver<BusMessage>, stop: CancellationToken) {
    let mut failing = false;
    loop {
        let message = tokio::select! {
            _ = stop.cancelled() => return,
            message = queue.recv() => match message {
                Some(message) => message,
                None => return,
            },
        };
        match bus.publish(message).await {
            Ok(()) => failing = false,
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "a change could not be told to the other instances");
            }
            Err(_) => {}
        }
    }
}

/// Tells this server's listeners what the other instances publish, until `stop`; never
/// publishes it again.
async fn hear(
    mut heard: futures_util::stream::BoxStream<'static, BusMessage>,
    local: broadcast::Sender<ServerEvent>,
    stop: CancellationToken,
) {
    loop {
        let message = tokio::select! {
            _ = stop.cancelled() => return,
            message = heard.next() => match message {
                Some(message) => message,
                None => return,
            },
        };
        if let Some(event) = from_message(message) {
            let _ = local.send(event);
        }
    }
}

/// What the bus carries of an event (`None`: nothing).
fn to_message(event: &ServerEvent) -> Option<BusMessage> {
    Some(match event {
        ServerEvent::ToolsChanged => BusMessage::ListChanged { list: ListKind::Tools },
        ServerEvent::ResourcesChanged => BusMessage::ListChanged { list: ListKind::Resources },
        ServerEvent::PromptsChanged => BusMessage::ListChanged { list: ListKind::Prompts },
        ServerEvent::ResourceUpdated(uri) => BusMessage::ResourceUpdated { uri: uri.clone() },
        ServerEvent::TaskChanged(task_id, state) => {
            BusMessage::TaskChanged { task_id: task_id.clone(), state: (**state).clone() }
        }
        ServerEvent::SessionChanged(id) => BusMessage::SessionChanged { session_id: id.clone() },
        ServerEvent::SessionEnded(id) => BusMessage::SessionEnded { session_id: id.clone() },
        ServerEvent::SessionAnswer(id, response) => {
            BusMessage::SessionAnswer { session_id: id.clone(), response: (**response).clone() }
        }
    })
}

/// The event a message of another instance is (`None`: it is no event, a task's message).
fn from_message(message: BusMessage) -> Option<ServerEvent> {
    Some(match message {
        BusMessage::ListChanged { list: ListKind::Tools } => ServerEvent::ToolsChanged,
        BusMessage::ListChanged { list: ListKind::Resources } => ServerEvent::ResourcesChanged,
        BusMessage::ListChanged { list: ListKind::Prompts } => ServerEvent::PromptsChanged,
        BusMessage::ResourceUpdated { uri } => ServerEvent::ResourceUpdated(uri),
        BusMessage::TaskChanged { task_id, state } => ServerEvent::TaskChanged(task_id, Arc::new(state)),
        BusMessage::SessionChanged { session_id } => ServerEvent::SessionChanged(session_id),
        BusMessage::SessionEnded { session_id } => ServerEvent::SessionEnded(session_id),
        BusMessage::SessionAnswer { session_id, response } => {
            ServerEvent::SessionAnswer(session_id, Arc::new(response))
        }
        BusMessage::CancelTask { .. } | BusMessage::AnswerTask { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::future::BoxFuture;
    use futures_util::stream::BoxStream;
    use std::time::Duration;

    /// Two instances' buses, joined in process: what one publishes, the other hears.
    struct Pair {
        sent: broadcast::Sender<BusMessage>,
        heard: broadcast::Sender<BusMessage>,
    }

    impl Bus for Pair {
        fn publish(&self, message: BusMessage) -> BoxFuture<'_, Result<(), super::super::bus::BusError>> {
            let _ = self.sent.send(message);
            Box::pin(async { Ok(()) })
        }
        fn subscribe(&self) -> BoxStream<'static, BusMessage> {
            let heard = self.heard.subscribe();
            Box::pin(futures_util::stream::unfold(heard, |mut heard| async move {
                heard.recv().await.ok().map(|m| (m, heard))
            }))
        }
    }

    fn pair() -> (Arc<dyn Bus>, Arc<dyn Bus>) {
        let (one, _) = broadcast::channel(16);
        let (two, _) = broadcast::channel(16);
        (Arc::new(Pair { sent: one.clone(), heard: two.clone() }), Arc::new(Pair { sent: two, heard: one }))
    }

    async fn next(events: &mut broadcast::Receiver<ServerEvent>) -> Option<ServerEvent> {
        tokio::time::timeout(Duration::from_millis(200), events.recv()).await.ok().and_then(Result::ok)
    }

    #[tokio::test]
    async fn an_announced_change_is_heard_here_once_and_there_once() {
        let (bus_a, bus_b) = pair();
        let (a, b) = (Events::new(16, Some(bus_a)), Events::new(16, Some(bus_b)));
        let (mut on_a, mut on_b) = (a.subscribe(), b.subscribe());
        a.announce(ServerEvent::ToolsChanged);
        assert!(matches!(next(&mut on_a).await, Some(ServerEvent::ToolsChanged)));
        assert!(matches!(next(&mut on_b).await, Some(ServerEvent::ToolsChanged)));
        // B does not publish what it heard: A hears nothing more.
        assert!(next(&mut on_a).await.is_none());
        b.announce(ServerEvent::ResourceUpdated("file:///x".into()));
        assert!(
            matches!(next(&mut on_a).await, Some(ServerEvent::ResourceUpdated(uri)) if uri == "file:///x")
        );
        // A mount's change stays here.
        a.tell_here(ServerEvent::PromptsChanged);
        assert!(matches!(next(&mut on_a).await, Some(ServerEvent::PromptsChanged)));
        assert!(matches!(next(&mut on_b).await, Some(ServerEvent::ResourceUpdated(_))), "its own, once");
        assert!(next(&mut on_b).await.is_none());
    }

    #[test]
    fn a_server_alone_needs_no_runtime_to_announce() {
        let alone = Events::new(4, None);
        let mut heard = alone.local.subscribe();
        alone.announce(ServerEvent::ToolsChanged);
        assert!(matches!(heard.try_recv(), Ok(ServerEvent::ToolsChanged)));
    }
}
