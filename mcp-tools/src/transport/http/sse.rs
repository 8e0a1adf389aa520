//! Server-sent events: encoding, the stream of one POSTed call, and the resumable streams of a
//! session ([`Hub`]: numbered events kept for replay).

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;
use futures_util::{Stream, StreamExt as _};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::wire::is_answer_to;
use crate::protocol::RequestId;

/// Events kept per stream for replay.
const EVENTS_PER_STREAM: usize = 1024;
/// Finished streams kept for replay per session.
const FINISHED_STREAMS: usize = 64;

/// The resumable SSE streams of one session: each request's events, numbered and kept for
/// replay, delivered to whichever connection currently listens.
#[derive(Default)]
pub(super) struct Hub {
    streams: Mutex<HashMap<u64, HubStream>>,
    next: AtomicU64,
}

#[derive(Default)]
struct HubStream {
    next_seq: u64,
    events: VecDeque<(u64, Arc<str>)>,
    listener: Option<mpsc::UnboundedSender<(u64, Arc<str>)>>,
    finished: Option<Instant>,
}

impl Hub {
    /// A new stream, with its first listener.
    pub fn open(&self) -> (u64, mpsc::UnboundedReceiver<(u64, Arc<str>)>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut streams = self.streams.lock().expect("hub lock");
        // Forget the oldest finished streams beyond the bound.
        let mut finished: Vec<(u64, Instant)> =
            streams.iter().filter_map(|(id, s)| s.finished.map(|at| (*id, at))).collect();
        if finished.len() > FINISHED_STREAMS {
            finished.sort_by_key(|(_, at)| *at);
            for (old, _) in &finished[..finished.len() - FINISHED_STREAMS] {
                streams.remove(old);
            }
        }
        streams.insert(id, HubStream { next_seq: 1, listener: Some(tx), ..HubStream::default() });
        (id, rx)
    }

    pub fn push(&self, id: u64, data: Arc<str>) {
        let mut streams = self.streams.lock().expect("hub lock");
        let Some(stream) = streams.get_mut(&id) else { return };
        let seq = stream.next_seq;
        stream.next_seq += 1;
        if stream.events.len() == EVENTS_PER_STREAM {
            stream.events.pop_front();
        }
        stream.events.push_back((seq, data.clone()));
        if let Some(listener) = &stream.listener
            && listener.send((seq, data)).is_err()
        {
            stream.listener = None;
        }
    }

    /// The stream's request is answered: its listener ends after the last event.
    pub fn finish(&self, id: u64) {
        if let Some(stream) = self.streams.lock().expect("hub lock").get_mut(&id) {
            stream.finished = Some(Instant::now());
            stream.listener = None;
        }
    }

    /// Ends the current connection of a stream; the events keep being recorded.
    pub fn disconnect(&self, id: u64) -> bool {
        self.streams.lock().expect("hub lock").get_mut(&id).is_some_and(|s| s.listener.take().is_some())
    }

    /// Events after `after`, and a listener for what follows if the stream is still running.
    #[allow(clippy::type_complexity)]
    pub fn resume(
        &self,
        id: u64,
        after: u64,
    ) -> Option<(Vec<(u64, Arc<str>)>, Option<mpsc::UnboundedReceiver<(u64, Arc<str>)>>)> {
        let mut streams = self.streams.lock().expect("hub lock");
        let stream = streams.get_mut(&id)?;
        let missed = stream.events.iter().filter(|(seq, _)| *seq > after).cloned().collect();
        let live = stream.finished.is_none().then(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            stream.listener = Some(tx);
            rx
        });
        Some((missed, live))
    }
}

/// The SSE events of one POSTed request: `first`, then what follows, ending after its answer.
pub(super) fn call_stream(
    first: Vec<u8>,
    answers: mpsc::UnboundedReceiver<Vec<u8>>,
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
    live: Option<mpsc::UnboundedReceiver<(u64, Arc<str>)>>,
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
