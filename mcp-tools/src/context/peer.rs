//! The other end of a call: facts about the client ([`Peer`]), and the queue a call's answer and
//! related messages go to ([`Outbound`]).

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::time::Duration;

#[cfg(feature = "http")]
use futures_util::StreamExt as _;
use serde_json::{Map, Value};
use tokio::sync::Notify;

use crate::protocol::messages::LogLevel;
use crate::protocol::{Era, Implementation, LATEST_HANDSHAKE_VERSION};

/// Facts about the client: from `initialize`, shared by a session's calls (2025-11-25), or from
/// one request's envelope (2026-07-28).
pub(crate) struct Peer {
    pub client_info: Implementation,
    pub client_capabilities: Map<String, Value>,
    /// The revision; one of the supported versions' names, which need no copy.
    pub protocol_version: Cow<'static, str>,
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
            protocol_version: Cow::Borrowed(LATEST_HANDSHAKE_VERSION),
            era: Era::Handshake,
            log_level: AtomicU8::new(LogLevel::Info as u8),
        }
    }
    /// The client of one stateless request; `log_level` is what it asked for (none: no logs).
    pub fn stateless(
        protocol_version: &'static str,
        client_capabilities: Map<String, Value>,
        client_info: Option<Implementation>,
        log_level: Option<LogLevel>,
    ) -> Self {
        Peer {
            client_info: client_info.unwrap_or_default(),
            client_capabilities,
            protocol_version: Cow::Borrowed(protocol_version),
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

/// A queue of encoded messages (one JSON text each, no newline) going to the client, bounded in
/// bytes: messages that must arrive (answers, requests to the client) wait for room
/// ([`ready`](Outbound::ready)) up to a write timeout, after which the client is deemed stalled
/// and disconnected; messages that may be lost (progress, logs, change notifications) are
/// dropped when there is no room ([`notify`](Outbound::notify)). Nothing grows without bound
/// for a client that stops reading.
#[derive(Clone)]
pub(crate) struct Outbound {
    tx: Sender,
    room: Arc<Room>,
}

/// The channel under a queue: Tokio's for a connection's queue, which lives long and carries
/// many messages (a slot in a block of 32 each, no allocation per message), `futures-channel`'s
/// for a request's, made and dropped with each HTTP request (two plain allocations to make,
/// where Tokio's allocates its state aligned to cache lines and a block of slots: some 800
/// instructions, 2% of such a request's, and more in cache misses).
#[derive(Clone)]
enum Sender {
    Connection(tokio::sync::mpsc::UnboundedSender<Vec<u8>>),
    #[cfg(feature = "http")]
    Request(futures_channel::mpsc::UnboundedSender<Vec<u8>>),
}

enum Receiver {
    Connection(tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>),
    #[cfg(feature = "http")]
    Request(futures_channel::mpsc::UnboundedReceiver<Vec<u8>>),
}

impl Sender {
    /// Queues `message`; false if the receiver is gone.
    fn send(&self, message: Vec<u8>) -> bool {
        match self {
            Sender::Connection(tx) => tx.send(message).is_ok(),
            #[cfg(feature = "http")]
            Sender::Request(tx) => tx.unbounded_send(message).is_ok(),
        }
    }
}

impl Receiver {
    async fn recv(&mut self) -> Option<Vec<u8>> {
        match self {
            Receiver::Connection(rx) => rx.recv().await,
            #[cfg(feature = "http")]
            Receiver::Request(rx) => rx.next().await,
        }
    }

    fn try_recv(&mut self) -> Option<Vec<u8>> {
        match self {
            Receiver::Connection(rx) => rx.try_recv().ok(),
            #[cfg(feature = "http")]
            Receiver::Request(rx) => rx.try_recv().ok(),
        }
    }
}

/// The byte budget shared by a queue's two ends, and whether the queue is closed.
struct Room {
    queued: AtomicUsize,
    limit: usize,
    wait: Duration,
    /// Signalled when the queue drops below its limit.
    freed: Notify,
    /// The client did not read within the write timeout: the queue is closed for good.
    is_stalled: AtomicBool,
    /// The reader (the [`Queue`]) is gone: the client went away.
    reader_gone: AtomicBool,
    /// Signalled when the queue stalls or its reader goes.
    closing: Notify,
}

impl Room {
    fn stall(&self) {
        self.is_stalled.store(true, Ordering::Release);
        self.closing.notify_waiters();
    }

    fn stalled(&self) -> bool {
        self.is_stalled.load(Ordering::Acquire)
    }

    /// Whether nobody will take messages any more: stalled, or the reader is gone.
    fn is_closed(&self) -> bool {
        self.stalled() || self.reader_gone.load(Ordering::Acquire)
    }

    /// Resolves once the queue is closed (see [`is_closed`](Self::is_closed)).
    async fn closed(&self) {
        loop {
            // Registered before looking at the flags, so a close in between is not missed.
            let closing = self.closing.notified();
            tokio::pin!(closing);
            closing.as_mut().enable();
            if self.is_closed() {
                return;
            }
            closing.await;
        }
    }

    fn release(&self, bytes: usize) {
        let before = self.queued.fetch_sub(bytes, Ordering::AcqRel);
        if before >= self.limit && before - bytes < self.limit {
            self.freed.notify_waiters();
        }
    }
}

/// The receiving end of an [`Outbound`]: the transport's writer.
pub(crate) struct Queue {
    rx: Receiver,
    room: Arc<Room>,
}

impl Outbound {
    /// A connection's queue, holding at most `limit` bytes not yet taken by the transport; an
    /// answer waits at most `wait` for room.
    pub fn channel(limit: usize, wait: Duration) -> (Outbound, Queue) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        Self::with(Sender::Connection(tx), Receiver::Connection(rx), limit, wait)
    }

    /// The same for one request's messages (an HTTP request's answer, and what the call sends
    /// before it): cheaper to make, dearer per message.
    #[cfg(feature = "http")]
    pub fn for_request(limit: usize, wait: Duration) -> (Outbound, Queue) {
        let (tx, rx) = futures_channel::mpsc::unbounded();
        Self::with(Sender::Request(tx), Receiver::Request(rx), limit, wait)
    }

    fn with(tx: Sender, rx: Receiver, limit: usize, wait: Duration) -> (Outbound, Queue) {
        let room = Arc::new(Room {
            queued: AtomicUsize::new(0),
            limit: limit.max(1),
            wait,
            freed: Notify::new(),
            is_stalled: AtomicBool::new(false),
            reader_gone: AtomicBool::new(false),
            closing: Notify::new(),
        });
        (Outbound { tx, room: room.clone() }, Queue { rx, room })
    }

    /// Queues a message that must arrive (an answer, a request to the client), room or not:
    /// async senders await [`ready`](Self::ready) first, so the queue exceeds its limit by at
    /// most the messages in flight. A closed or stalled queue drops it.
    pub fn send(&self, message: Vec<u8>) {
        if self.room.stalled() {
            return;
        }
        let bytes = message.len();
        self.room.queued.fetch_add(bytes, Ordering::AcqRel);
        if !self.tx.send(message) {
            self.room.release(bytes);
        }
    }

    /// Queues a message that may be lost (progress, a log entry, a change notification): it is
    /// dropped when the client has fallen behind by the queue's limit. True if it was queued.
    pub fn notify(&self, message: Vec<u8>) -> bool {
        if self.room.queued.load(Ordering::Acquire).saturating_add(message.len()) > self.room.limit {
            tracing::debug!(bytes = message.len(), "the client is not reading: a notification was dropped");
            return false;
        }
        self.send(message);
        true
    }

    /// Waits until the queue has room. A client that makes none within the write timeout is
    /// stalled: the queue closes (the transport disconnects it) and this returns false, as it
    /// does for a closed queue.
    ///
    /// Most calls find room at once and register nothing (the queue is the connection's,
    /// shared by its requests); only the wait of a full queue, rare, is boxed, so that the
    /// futures awaiting this stay small (a request's future is copied as it is spawned).
    pub async fn ready(&self) -> bool {
        match self.ready_now() {
            Some(ready) => ready,
            None => Box::pin(self.wait_for_room()).await,
        }
    }

    /// `Some` when [`ready`](Self::ready) need not wait: false for a closed or stalled queue,
    /// true when there is room.
    fn ready_now(&self) -> Option<bool> {
        if self.room.is_closed() {
            return Some(false);
        }
        (self.room.queued.load(Ordering::Acquire) < self.room.limit).then_some(true)
    }

    /// [`ready`](Self::ready)'s wait for room.
    async fn wait_for_room(&self) -> bool {
        let room = &self.room;
        let deadline = tokio::time::Instant::now() + room.wait;
        loop {
            if let Some(ready) = self.ready_now() {
                return ready;
            }
            // The wait is registered before looking again, so that room freed in between is
            // not missed.
            let freed = room.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if room.queued.load(Ordering::Acquire) < room.limit {
                return true;
            }
            tokio::select! {
                _ = &mut freed => {}
                _ = room.closed() => return false,
                _ = tokio::time::sleep_until(deadline) => {
                    tracing::warn!(
                        queued = room.queued.load(Ordering::Relaxed),
                        "the client has not read its messages for {:?}: disconnecting it",
                        room.wait
                    );
                    room.stall();
                    return false;
                }
            }
        }
    }

    /// Resolves when the other end stopped reading (the client went away, or stalled).
    pub async fn closed(&self) {
        self.room.closed().await;
    }

    /// Whether the other end stopped reading (what [`closed`](Self::closed) waits for).
    pub fn is_closed(&self) -> bool {
        self.room.is_closed()
    }
}

impl Queue {
    /// The next message; `None` once every sender is gone or the client stalled (then what is
    /// still queued is dropped with the connection).
    pub async fn recv(&mut self) -> Option<Vec<u8>> {
        if self.room.stalled() {
            return None;
        }
        // A queued message is taken without registering a wait for the stall. (While this
        // queue lives, its room closes only by stalling.)
        let message = tokio::select! {
            biased;
            message = self.rx.recv() => message?,
            _ = self.room.closed() => return None,
        };
        self.room.release(message.len());
        Some(message)
    }

    /// The next message if one is queued now.
    pub fn try_recv(&mut self) -> Option<Vec<u8>> {
        if self.room.stalled() {
            return None;
        }
        let message = self.rx.try_recv()?;
        self.room.release(message.len());
        Some(message)
    }
}

impl Drop for Queue {
    /// The client is gone: senders waiting for room, or for the client to go, stop waiting.
    fn drop(&mut self) {
        self.room.reader_gone.store(true, Ordering::Release);
        self.room.closing.notify_waiters();
    }
}

/// Ends the current connection of a resumable SSE stream; true if there was one.
pub(crate) type CloseStream = Arc<dyn Fn() -> bool + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;

    type Make = fn(usize, Duration) -> (Outbound, Queue);

    /// Each test runs on both kinds of queue: a connection's and a request's.
    fn kinds() -> Vec<(&'static str, Make)> {
        let connection: (&'static str, Make) = ("connection", Outbound::channel);
        #[cfg(feature = "http")]
        return vec![connection, ("request", Outbound::for_request)];
        #[cfg(not(feature = "http"))]
        vec![connection]
    }

    /// A task waiting for the client to go away.
    fn waiting_for_close(out: &Outbound) -> tokio::task::JoinHandle<()> {
        let out = out.clone();
        tokio::spawn(async move { out.closed().await })
    }

    /// A task waiting for room.
    fn waiting_for_room(out: &Outbound) -> tokio::task::JoinHandle<bool> {
        let out = out.clone();
        tokio::spawn(async move { out.ready().await })
    }

    #[tokio::test]
    async fn notifications_are_dropped_and_answers_wait_when_the_queue_is_full() {
        for (kind, make) in kinds() {
            let (out, mut queue) = make(100, Duration::from_secs(5));
            assert!(out.notify(vec![b'a'; 60]), "{kind}");
            assert!(!out.notify(vec![b'b'; 60]), "{kind}: no room: dropped");
            out.send(vec![b'c'; 60]);
            assert!(!out.is_closed(), "{kind}");
            // Over the limit: an answer waits until the reader makes room.
            let waiting = waiting_for_room(&out);
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(!waiting.is_finished(), "{kind}");
            assert_eq!(queue.recv().await.unwrap()[0], b'a', "{kind}");
            assert_eq!(queue.try_recv().unwrap()[0], b'c', "{kind}");
            assert!(queue.try_recv().is_none(), "{kind}: nothing more");
            assert!(waiting.await.unwrap(), "{kind}: room again");
            drop(out);
            assert!(queue.recv().await.is_none(), "{kind}: every sender gone");
        }
    }

    #[tokio::test]
    async fn a_reader_that_never_reads_is_stalled_after_the_write_timeout() {
        for (kind, make) in kinds() {
            let (out, mut queue) = make(10, Duration::from_millis(50));
            out.send(vec![0; 20]);
            assert!(!out.ready().await, "{kind}: no room within the timeout");
            assert!(out.is_closed(), "{kind}");
            out.send(vec![0; 20]);
            assert!(queue.recv().await.is_none(), "{kind}: a stalled queue delivers nothing more");
        }
    }

    #[tokio::test]
    async fn waiting_ends_when_the_queue_stalls() {
        for (kind, make) in kinds() {
            let (out, queue) = make(10, Duration::from_millis(50));
            // A message over the limit that nobody takes: the next answer's wait for room
            // stalls the queue. Meanwhile another sender waits for the client to go away.
            out.send(vec![0; 20]);
            let closed = waiting_for_close(&out);
            tokio::time::sleep(Duration::from_millis(10)).await;
            assert!(!closed.is_finished(), "{kind}: not stalled yet");
            assert!(!out.ready().await, "{kind}: no room within the timeout: stalled");
            tokio::time::timeout(Duration::from_secs(5), closed).await.expect("woken by the stall").unwrap();
            drop(queue);
        }
    }

    #[tokio::test]
    async fn a_reader_waiting_for_a_message_is_woken_by_a_stall() {
        for (kind, make) in kinds() {
            let (out, mut queue) = make(10, Duration::from_millis(50));
            // The reader waits with nothing queued (its sender still here) when the queue stalls.
            let reader = tokio::spawn(async move { queue.recv().await });
            tokio::time::sleep(Duration::from_millis(10)).await;
            assert!(!reader.is_finished(), "{kind}: nothing queued: the reader waits");
            out.room.stall();
            let got = tokio::time::timeout(Duration::from_secs(5), reader)
                .await
                .expect("woken by the stall")
                .unwrap();
            assert!(got.is_none(), "{kind}: a stalled queue delivers nothing");
        }
    }

    #[tokio::test]
    async fn senders_see_the_reader_go() {
        for (kind, make) in kinds() {
            // A write timeout that does not end the waits below first.
            let (out, queue) = make(10, Duration::from_secs(600));
            out.send(vec![0; 20]);
            // One waits for the client to go, one for room.
            let closed = waiting_for_close(&out);
            let ready = waiting_for_room(&out);
            tokio::time::sleep(Duration::from_millis(10)).await;
            assert!(!closed.is_finished() && !ready.is_finished(), "{kind}: the reader is still there");
            assert!(!out.is_closed(), "{kind}");
            drop(queue);
            let wait = Duration::from_secs(2);
            tokio::time::timeout(wait, closed).await.expect("woken by the reader's going").unwrap();
            let ready =
                tokio::time::timeout(wait, ready).await.expect("woken by the reader's going").unwrap();
            assert!(!ready, "{kind}: no room will come");
            assert!(out.is_closed(), "{kind}");
        }
    }
}
