//! Server-sent events: encoding, the stream of one POSTed call, and the resumable streams of a
//! session ([`Hub`]: numbered events kept for replay).

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;
use futures_util::{Stream, StreamExt as _};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::wire::is_answer_to;
use crate::context::peer::Queue;
use crate::dispatch::session_store::{Runner, SessionStore, StoredEvents};
use crate::protocol::RequestId;

/// Events kept per stream for replay.
const EVENTS_PER_STREAM: usize = 1024;
/// Finished streams kept for replay per session.
const FINISHED_STREAMS: usize = 64;
/// Events a connection may fall behind before it is closed (the client resumes from the
/// replay buffer with `Last-Event-ID`).
const LISTENER_BACKLOG: usize = 256;

/// A numbered event of a stream.
pub(super) type Event = (u64, Arc<str>);
type Listener = mpsc::Sender<Event>;
pub(super) type Live = mpsc::Receiver<Event>;

/// The resumable SSE streams of one session: each request's events, numbered and kept for
/// replay (bounded in events per stream, finished streams and bytes per session, oldest
/// forgotten first), delivered to whichever connection currently listens.
pub(super) struct Hub {
    streams: Mutex<Streams>,
    next: AtomicU64,
    max_bytes: usize,
    /// Streams are numbered at random rather than 1, 2, 3…: the session is shared, and its
    /// streams on other instances must not share their numbers.
    random_ids: bool,
}

#[derive(Default)]
struct Streams {
    by_id: HashMap<u64, HubStream>,
    /// Bytes of the events kept, all streams together.
    bytes: usize,
}

#[derive(Default)]
struct HubStream {
    next_seq: u64,
    events: VecDeque<(u64, Arc<str>)>,
    listener: Option<Listener>,
    finished: Option<Instant>,
}

impl Streams {
    fn remove(&mut self, id: u64) {
        if let Some(stream) = self.by_id.remove(&id) {
            self.bytes -= stream.events.iter().map(|(_, e)| e.len()).sum::<usize>();
        }
    }

    fn oldest_finished(&self) -> Option<u64> {
        self.by_id.iter().filter_map(|(id, s)| s.finished.map(|at| (at, *id))).min().map(|(_, id)| id)
    }
}

impl Hub {
    /// How many bytes of events it keeps for replay at most.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// A hub keeping at most `max_bytes` of events for replay.
    pub fn new(max_bytes: usize) -> Self {
        Hub { streams: Mutex::default(), next: AtomicU64::new(0), max_bytes, random_ids: false }
    }

    /// A hub of a session shared by several instances: its streams are numbered at random
    /// (53 bits), so that no two instances number two streams of the session alike.
    pub fn shared(max_bytes: usize) -> Self {
        Hub { random_ids: true, ..Hub::new(max_bytes) }
    }

    /// A new stream, with its first listener.
    pub fn open(&self) -> (u64, Live) {
        let id = if self.random_ids {
            let (random, _) = uuid::Uuid::new_v4().as_u64_pair();
            (random >> 11).max(1)
        } else {
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        };
        let (tx, rx) = mpsc::channel(LISTENER_BACKLOG);
        let mut streams = self.streams.lock().expect("hub lock");
        // Forget the oldest finished streams beyond the bound.
        while streams.by_id.values().filter(|s| s.finished.is_some()).count() > FINISHED_STREAMS {
            let Some(old) = streams.oldest_finished() else { break };
            streams.remove(old);
        }
        streams.by_id.insert(id, HubStream { next_seq: 1, listener: Some(tx), ..HubStream::default() });
        (id, rx)
    }

    /// Records an event of stream `id` and hands it to its listener: its number (`None` when
    /// the stream is not kept).
    pub fn push(&self, id: u64, data: Arc<str>) -> Option<u64> {
        let mut guard = self.streams.lock().expect("hub lock");
        let streams = &mut *guard;
        let stream = streams.by_id.get_mut(&id)?;
        let seq = stream.next_seq;
        stream.next_seq += 1;
        if stream.events.len() == EVENTS_PER_STREAM
            && let Some((_, old)) = stream.events.pop_front()
        {
            streams.bytes -= old.len();
        }
        streams.bytes += data.len();
        stream.events.push_back((seq, data.clone()));
        if let Some(listener) = &stream.listener {
            match listener.try_send((seq, data)) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::debug!(
                        stream = id,
                        "a resumable stream's client fell behind: closing its connection"
                    );
                    stream.listener = None;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => stream.listener = None,
            }
        }
        // Over the byte budget: forget finished streams first, then this stream's oldest events.
        while streams.bytes > self.max_bytes {
            if let Some(old) = streams.oldest_finished() {
                streams.remove(old);
                continue;
            }
            let Some(stream) = streams.by_id.get_mut(&id) else { break };
            if stream.events.len() <= 1 {
                break;
            }
            if let Some((_, old)) = stream.events.pop_front() {
                streams.bytes -= old.len();
            }
        }
        Some(seq)
    }

    /// The stream's request is answered: its listener ends after the last event.
    pub fn finish(&self, id: u64) {
        if let Some(stream) = self.streams.lock().expect("hub lock").by_id.get_mut(&id) {
            stream.finished = Some(Instant::now());
            stream.listener = None;
        }
    }

    /// How many streams are kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.streams.lock().expect("hub lock").by_id.len()
    }

    /// Forgets a stream that never carried anything (its message turned out not to be a request).
    pub fn discard(&self, id: u64) {
        self.streams.lock().expect("hub lock").remove(id);
    }

    /// Ends the current connection of a stream; the events keep being recorded.
    pub fn disconnect(&self, id: u64) -> bool {
        self.streams.lock().expect("hub lock").by_id.get_mut(&id).is_some_and(|s| s.listener.take().is_some())
    }

    /// Events after `after`, and a listener for what follows if the stream is still running.
    pub fn resume(&self, id: u64, after: u64) -> Option<(Vec<Event>, Option<Live>)> {
        let mut streams = self.streams.lock().expect("hub lock");
        let stream = streams.by_id.get_mut(&id)?;
        let missed = stream.events.iter().filter(|(seq, _)| *seq > after).cloned().collect();
        let live = stream.finished.is_none().then(|| {
            let (tx, rx) = mpsc::channel(LISTENER_BACKLOG);
            stream.listener = Some(tx);
            rx
        });
        Some((missed, live))
    }
}

/// Events a resumable stream's copy in the shared store may fall behind before it is given up.
const MIRROR_BACKLOG: usize = EVENTS_PER_STREAM;

/// Reads of the shared store a resumed stream may fail in a row before it is closed.
const REMOTE_FAILURES: u32 = 10;

/// How long a resumed stream may hear nothing before the instance writing it is checked, and
/// how often it is checked then (a stopped instance's lease runs out within its length).
const RUNNER_CHECK: Duration = Duration::from_secs(1);

/// How often a stream resumed on an instance that does not run its request reads the store
/// for what follows: at first, and at most while nothing comes.
const REMOTE_POLL: (Duration, Duration) = (Duration::from_millis(25), Duration::from_millis(500));

/// A resumable stream's copy in the shared store: events appended in order by a task of their
/// own (batched, one round trip a batch), so that the stream's own connection never waits for
/// the store. Bounded: a copy a full backlog behind (in events, or in bytes: as many as the
/// hub keeps for replay), or whose store failed, is given up (a client
/// resuming on another instance then misses events; one resuming here does not).
pub(super) struct Mirror {
    events: Option<mpsc::Sender<(u64, Arc<str>)>>,
    /// The bytes of the events queued and not yet appended (shared with the appending task).
    queued: Arc<AtomicUsize>,
    /// At most this many bytes queued, or the copy is given up (the hub's own bound).
    max_bytes: usize,
    /// The number of the last event sent, for the end's mark.
    last: u64,
    ended: Option<tokio::sync::oneshot::Sender<u64>>,
}

impl Mirror {
    /// Starts copying stream `stream` of session `session` to `store`, each append renewing
    /// its time to live to `ttl`; at most [`MIRROR_BACKLOG`] events and `max_bytes` of them
    /// waiting to be appended.
    pub fn start(
        store: Arc<dyn SessionStore>,
        session: String,
        stream: u64,
        ttl: Duration,
        max_bytes: usize,
    ) -> Mirror {
        let (tx, mut rx) = mpsc::channel::<(u64, Arc<str>)>(MIRROR_BACKLOG);
        let (ended_tx, mut ended_rx) = tokio::sync::oneshot::channel::<u64>();
        let queued = Arc::new(AtomicUsize::new(0));
        let appending = queued.clone();
        tokio::spawn(async move {
            let mut batch = Vec::new();
            loop {
                batch.clear();
                let end = tokio::select! {
                    biased;
                    n = rx.recv_many(&mut batch, 64) => if n == 0 { ended_rx.try_recv().ok() } else { None },
                    end = &mut ended_rx => end.ok(),
                };
                // The end comes after every event sent: take those still queued first.
                if end.is_some() {
                    while let Ok(event) = rx.try_recv() {
                        batch.push(event);
                    }
                }
                if batch.is_empty() && end.is_none() {
                    return;
                }
                let result = store.append_events(&session, stream, &batch, end, ttl).await;
                appending.fetch_sub(batch.iter().map(|(_, data)| data.len()).sum(), Ordering::Relaxed);
                if let Err(e) = result {
                    tracing::error!(error = %e, "could not keep a resumable stream's events in the shared store: a client resuming it on another instance will miss them");
                    return;
                }
                if end.is_some() {
                    return;
                }
            }
        });
        Mirror { events: Some(tx), queued, max_bytes, last: 0, ended: Some(ended_tx) }
    }

    /// Copies event `seq`.
    pub fn send(&mut self, seq: u64, data: Arc<str>) {
        let Some(events) = &self.events else { return };
        self.last = seq;
        let size = data.len();
        let over = self.queued.fetch_add(size, Ordering::Relaxed) + size > self.max_bytes;
        if over || events.try_send((seq, data)).is_err() {
            tracing::warn!("a resumable stream's copy in the shared store fell behind: given up");
            self.events = None;
            self.ended = None;
        }
    }

    /// The stream ended: marks it so in the store, after its events.
    pub fn end(mut self) {
        if let (Some(ended), Some(_)) = (self.ended.take(), &self.events) {
            let _ = ended.send(self.last + 1);
        }
    }
}

/// A stream resumed on an instance that does not run its request: `first` (what the store kept
/// after the client's last event, `after`), then what is appended to the store until the stream ends
/// (read every 25 to 500 ms, as the events come), each with its id. Ends when the stream ended,
/// when the store no longer keeps it (expired), after [`REMOTE_FAILURES`] failed reads in a row
/// (the client resumes again), or on shutdown; reads stop when the client goes. When nothing
/// has come for [`RUNNER_CHECK`], whether the instance writing it is still alive is checked (its
/// lease, once each [`RUNNER_CHECK`]): once it is gone, and a last read finds nothing more, the
/// client is answered for it: the request's JSON-RPC error saying that the instance running it
/// stopped, so a client never waits for an answer that cannot come.
pub(super) fn stored_events(
    store: Arc<dyn SessionStore>,
    session: String,
    (stream_id, after): (u64, u64),
    first: StoredEvents,
    shutdown: CancellationToken,
) -> impl Stream<Item = Bytes> + Send + 'static {
    struct Remote {
        store: Arc<dyn SessionStore>,
        session: String,
        pending: VecDeque<(u64, Arc<str>)>,
        last: u64,
        ended: bool,
        pause: Duration,
        failures: u32,
        shutdown: CancellationToken,
        runner: Option<Runner>,
        /// When the last event came (or the stream was resumed), and when the runner was last
        /// checked.
        quiet_since: Instant,
        checked: Instant,
        /// The runner was found gone: one more read, then the error.
        runner_gone: bool,
    }
    let now = Instant::now();
    let remote = Remote {
        store,
        session,
        last: after,
        pending: first.events.into(),
        ended: first.ended,
        pause: REMOTE_POLL.0,
        failures: 0,
        shutdown,
        runner: first.runner,
        quiet_since: now,
        checked: now,
        runner_gone: false,
    };
    futures_util::stream::unfold(remote, move |mut remote| async move {
        loop {
            if let Some((seq, data)) = remote.pending.pop_front() {
                remote.last = seq;
                let event = sse_event(Some(&format!("{stream_id}-{seq}")), data.as_bytes());
                return Some((event, remote));
            }
            if remote.ended {
                return None;
            }
            if !remote.runner_gone {
                tokio::select! {
                    _ = remote.shutdown.cancelled() => return None,
                    _ = tokio::time::sleep(remote.pause) => {}
                }
            }
            match remote.store.read_events(&remote.session, stream_id, remote.last).await {
                Ok(Some(read)) => {
                    remote.failures = 0;
                    let fresh: Vec<_> =
                        read.events.into_iter().filter(|(seq, _)| *seq > remote.last).collect();
                    remote.pause =
                        if fresh.is_empty() { (remote.pause * 2).min(REMOTE_POLL.1) } else { REMOTE_POLL.0 };
                    if !fresh.is_empty() {
                        remote.quiet_since = Instant::now();
                    }
                    let nothing_new = fresh.is_empty() && !read.ended;
                    remote.pending.extend(fresh);
                    remote.ended = read.ended;
                    if remote.runner.is_none() {
                        remote.runner = read.runner;
                    }
                    if nothing_new && remote.runner_gone {
                        // Its instance stopped and wrote nothing more: answer for it.
                        let request = remote.runner.as_ref().and_then(|r| r.request.as_deref());
                        let id = request.and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok());
                        let message = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {
                            "code": crate::protocol::INTERNAL_ERROR,
                            "message": "the request was not answered: the server instance running it stopped",
                        }});
                        tracing::warn!(
                            "a resumed stream's instance stopped before answering: answered for it"
                        );
                        remote.ended = true;
                        let seq = remote.last + 1;
                        remote.last = seq;
                        let event =
                            sse_event(Some(&format!("{stream_id}-{seq}")), message.to_string().as_bytes());
                        return Some((event, remote));
                    }
                    remote.runner_gone = false;
                    if nothing_new
                        && remote.quiet_since.elapsed() >= RUNNER_CHECK
                        && remote.checked.elapsed() >= RUNNER_CHECK
                        && let Some(runner) = &remote.runner
                    {
                        remote.checked = Instant::now();
                        match remote.store.runner_alive(&runner.instance).await {
                            Ok(alive) => remote.runner_gone = !alive,
                            Err(e) => {
                                tracing::warn!(error = %e, "could not check a resumed stream's instance")
                            }
                        }
                    }
                }
                Ok(None) => return None,
                Err(e) => {
                    remote.failures += 1;
                    remote.runner_gone = false;
                    tracing::warn!(error = %e, "could not read a resumed stream's events from the shared store");
                    if remote.failures >= REMOTE_FAILURES {
                        return None;
                    }
                    remote.pause = REMOTE_POLL.1;
                }
            }
        }
    })
}

/// The SSE events of one POSTed request: `first`, then what follows, ending after its answer.
pub(super) fn call_stream(
    first: Vec<u8>,
    answers: Queue,
    request_id: Option<RequestId>,
    shutdown: CancellationToken,
) -> impl Stream<Item = Bytes> {
    let done = is_answer_to(&first, request_id.as_ref());
    futures_util::stream::unfold(
        (Some(first), answers, request_id, done, shutdown),
        |(pending, mut answers, id, done, shutdown)| async move {
            if let Some(message) = pending {
                return Some((sse_event(None, &message), (None, answers, id, done, shutdown)));
            }
            if done {
                return None;
            }
            let message = tokio::select! {
                m = answers.recv() => m?,
                _ = shutdown.cancelled() => return None,
            };
            let done = is_answer_to(&message, id.as_ref());
            Some((sse_event(None, &message), (None, answers, id, done, shutdown)))
        },
    )
}

/// A resumable stream's events: `missed` first, then what `live` delivers, each with its id.
pub(super) fn hub_events(
    stream_id: u64,
    missed: Vec<(u64, Arc<str>)>,
    live: Option<Live>,
    shutdown: CancellationToken,
) -> impl Stream<Item = Bytes> + Send + 'static {
    let event =
        move |(seq, data): (u64, Arc<str>)| sse_event(Some(&format!("{stream_id}-{seq}")), data.as_bytes());
    let live = futures_util::stream::unfold((live, shutdown), |(live, shutdown)| async move {
        let mut live = live?;
        let item = tokio::select! {
            item = live.recv() => item?,
            _ = shutdown.cancelled() => return None,
        };
        Some((item, (Some(live), shutdown)))
    });
    futures_util::stream::iter(missed).chain(live).map(event)
}

/// One SSE `message` event (a JSON-RPC message is one line, so one `data:` field).
pub(super) fn sse_event(id: Option<&str>, message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 48);
    if let Some(id) = id {
        event.extend_from_slice(b"id: ");
        event.extend_from_slice(id.as_bytes());
        event.push(b'\n');
    }
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// A `text/event-stream` response of these events, with a keep-alive comment whenever the
/// stream has been quiet for `keep_alive`.
pub(super) fn sse_response(
    events: impl Stream<Item = Bytes> + Send + 'static,
    keep_alive: Option<Duration>,
) -> Response {
    let events = events.boxed();
    let body = match keep_alive {
        None => Body::from_stream(events.map(Ok::<_, Infallible>)),
        Some(interval) => Body::from_stream(
            futures_util::stream::unfold(events, move |mut events| async move {
                let item = match tokio::time::timeout(interval, events.next()).await {
                    Ok(Some(event)) => event,
                    Ok(None) => return None,
                    Err(_) => Bytes::from_static(b": keep-alive\n\n"),
                };
                Some((item, events))
            })
            .map(Ok::<_, Infallible>),
        ),
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .expect("a valid response")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::session_store::{SessionRecord, SessionStoreError as StoreError};
    use futures_util::future::BoxFuture;

    /// A store whose appends never finish (Redis stalled): what a mirror holds meanwhile.
    struct Stalled;

    impl SessionStore for Stalled {
        fn save<'a>(
            &'a self,
            _: &'a str,
            _: &'a SessionRecord,
            _: Duration,
        ) -> BoxFuture<'a, Result<(), StoreError>> {
            unreachable!()
        }
        fn load<'a>(
            &'a self,
            _: &'a str,
            _: Duration,
        ) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>> {
            unreachable!()
        }
        fn touch<'a>(&'a self, _: &'a str, _: Duration) -> BoxFuture<'a, Result<bool, StoreError>> {
            unreachable!()
        }
        fn remove<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
            unreachable!()
        }
        fn append_events<'a>(
            &'a self,
            _: &'a str,
            _: u64,
            _: &'a [(u64, Arc<str>)],
            _: Option<u64>,
            _: Duration,
        ) -> BoxFuture<'a, Result<(), StoreError>> {
            Box::pin(futures_util::future::pending())
        }
        fn open_events<'a>(
            &'a self,
            _: &'a str,
            _: u64,
            _: Option<&'a str>,
            _: Duration,
        ) -> BoxFuture<'a, Result<(), StoreError>> {
            unreachable!()
        }
        fn runner_alive<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
            unreachable!()
        }
        fn read_events<'a>(
            &'a self,
            _: &'a str,
            _: u64,
            _: u64,
        ) -> BoxFuture<'a, Result<Option<StoredEvents>, StoreError>> {
            unreachable!()
        }
    }

    #[tokio::test]
    async fn a_mirror_whose_store_stalls_holds_at_most_its_bytes_then_gives_up() {
        let mut mirror = Mirror::start(Arc::new(Stalled), "s".into(), 1, Duration::from_secs(60), 10_000);
        // Under the bound: copied (queued while the store stalls).
        for seq in 1..=9 {
            mirror.send(seq, Arc::from("e".repeat(1_000)));
        }
        assert!(mirror.events.is_some(), "9,000 bytes queued is within 10,000");
        // The event that would hold more than the bound ends the copy: nothing more is held.
        mirror.send(10, Arc::from("e".repeat(2_000)));
        assert!(mirror.events.is_none(), "given up past 10,000 bytes");
        mirror.send(11, Arc::from("e".repeat(1_000_000)));
        assert!(mirror.events.is_none());
    }

    #[tokio::test]
    async fn replay_is_bounded_in_bytes_and_a_slow_listener_is_disconnected() {
        let hub = Hub::new(10_000);
        let (finished, _) = hub.open();
        hub.push(finished, Arc::from("f".repeat(3_000)));
        hub.finish(finished);
        let (id, mut live) = hub.open();
        for _ in 0..100 {
            hub.push(id, Arc::from("e".repeat(1_000)));
        }
        let kept = hub.streams.lock().unwrap().bytes;
        assert!(kept <= 10_000, "{kept} bytes kept");
        assert_eq!(hub.len(), 1, "the finished stream went first");
        let (missed, _) = hub.resume(id, 0).unwrap();
        assert_eq!(missed.len(), 10, "the newest events are kept");
        assert_eq!(missed.last().unwrap().0, 100);
        // The listener, never read, is dropped once it is a full backlog behind.
        for _ in 0..LISTENER_BACKLOG {
            hub.push(id, Arc::from("x"));
        }
        let mut received = 0;
        while live.recv().await.is_some() {
            received += 1;
        }
        assert!(received <= LISTENER_BACKLOG, "{received}");
    }
}
