//! Watching requests: an [`Observer`] (the `otel` feature's telemetry) is told when each request
//! begins, and wraps the request's future (to run it in its trace: its handler's own spans are
//! the request's children); it is told how the request ended when its answer is sent, or that it
//! was cancelled when it never is.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use serde_json::value::RawValue;

use crate::context::HttpParts;
use crate::protocol::RequestId;

/// A request as it begins.
#[derive(Debug)]
// Read by the observers, which come with features (`otel`).
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
#[derive(Clone, Copy)]
pub(crate) struct Begun<'a> {
    pub method: &'a str,
    pub id: &'a RequestId,
    /// The tool (`tools/call`), prompt (`prompts/get`) or resource (`resources/read`,
    /// `resources/subscribe`) the request names.
    pub target: Option<&'a str>,
    /// The protocol revision, when known yet (see [`Observation::protocol_version`]).
    pub protocol_version: Option<&'a str>,
    /// The 2025-11-25 HTTP session, if any.
    pub session_id: Option<&'a str>,
    /// The request's `_meta` (where a client puts W3C trace context: `traceparent`).
    pub meta: Option<&'a RawValue>,
    /// The HTTP request, over Streamable HTTP (its `traceparent` header).
    pub http: Option<&'a HttpParts>,
}

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Answered with a result.
    Answered,
    /// A tool call answered with `isError: true`.
    ToolError,
    /// Answered with a JSON-RPC error of this code.
    Error(i32),
    /// Never answered: cancelled, or its client went away.
    Cancelled,
}

/// What watches requests (`Any`: the command line finds the server's telemetry through it).
pub(crate) trait Observer: std::any::Any + Send + Sync + 'static {
    /// `request` begins (it arrived at `began`): its observation, made by [`Observed::new`].
    fn begin(&self, request: &Begun<'_>, began: Instant) -> Arc<Observed>;
}

/// One request being watched.
pub(crate) trait Observation: Send + Sync {
    /// Polls the request's future in the request's trace (see [`Watched`]).
    fn poll_in(&self, request: Pin<&mut (dyn Future<Output = ()> + Send)>, cx: &mut Context<'_>) -> Poll<()>;
    /// The request's protocol revision, learnt after it began (from a 2026-07-28 envelope).
    fn protocol_version(&self, version: &str);
    /// The request ended so, `elapsed` after it began.
    fn end(&self, outcome: Outcome, elapsed: std::time::Duration);
}

/// A watched request, kept by its origin until it is answered: ended once, when its answer is
/// sent, or, if it never is, when the last of it is dropped (cancelled).
/// The observer's own part is in the same allocation.
pub(crate) struct Observed<O: ?Sized + Observation = dyn Observation> {
    began: Instant,
    ended: AtomicBool,
    observation: O,
}

impl<O: Observation + 'static> Observed<O> {
    /// An observer's observation of a request that arrived at `began`.
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub fn new(began: Instant, observation: O) -> Arc<Observed> {
        Arc::new(Observed { began, ended: AtomicBool::new(false), observation })
    }
}

impl Observed {
    pub fn begin(observer: &dyn Observer, request: &Begun<'_>) -> Arc<Observed> {
        // The clock is read first: a span that ends at its start plus the elapsed time then
        // ends no earlier than the request did.
        observer.begin(request, Instant::now())
    }
}

impl<O: ?Sized + Observation> Observed<O> {
    pub fn protocol_version(&self, version: &str) {
        self.observation.protocol_version(version);
    }

    /// The request ended so (only the first end counts).
    pub fn end(&self, outcome: Outcome) {
        if !self.ended.swap(true, Ordering::AcqRel) {
            self.observation.end(outcome, self.began.elapsed());
        }
    }

    /// The outcome of an answer about to be sent: a result (a tool error when it says
    /// `"isError":true`) or an error.
    pub fn end_with_result(&self, result: &RawValue) {
        static IS_ERROR: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"isError\":true"));
        let tool_error = IS_ERROR.find(result.get().as_bytes()).is_some();
        self.end(if tool_error { Outcome::ToolError } else { Outcome::Answered });
    }
}

impl<O: ?Sized + Observation> Drop for Observed<O> {
    fn drop(&mut self) {
        self.end(Outcome::Cancelled);
    }
}

impl<O: ?Sized + Observation> std::fmt::Debug for Observed<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observed").field("ended", &self.ended.load(Ordering::Relaxed)).finish_non_exhaustive()
    }
}

pin_project_lite::pin_project! {
    /// A watched request's future, polled in the request's trace (its handler's spans are the
    /// request's children): the observation is kept beside the future, with no allocation of
    /// its own.
    pub(crate) struct Watched<F> {
        observed: Arc<Observed>,
        #[pin]
        request: F,
    }
}

impl<F> Watched<F> {
    pub fn new(observed: Arc<Observed>, request: F) -> Watched<F> {
        Watched { observed, request }
    }
}

impl<F: Future<Output = ()> + Send> Future for Watched<F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        this.observed.observation.poll_in(this.request, cx)
    }
}
