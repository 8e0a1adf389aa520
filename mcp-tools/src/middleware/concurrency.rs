//! [`ConcurrencyLimit`]: at most so many calls run at once; the others wait their turn.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Semaphore;
use tower::{Layer, ServiceExt as _};

use super::layered::{Around, Layered, ToolFuture};
use crate::dispatch::pipeline::{ToolCall, ToolService};
use crate::model::result::ToolResult;

/// At most `limit` calls run at once through this layer; the others wait, in order, for one to
/// finish (a waiting call can still be cancelled, or time out with the request's timeout).
/// Around one tool with [`ServerBuilder::tool_layer`](crate::ServerBuilder::tool_layer) (a
/// slow, memory-hungry tool), or around every call with
/// [`ServerBuilder::layer`](crate::ServerBuilder::layer) (the calls of all tools share it).
///
/// With [`max_waiting`](Self::max_waiting), a call that would wait behind that many others is
/// answered at once with a tool error saying the tool is busy.
#[derive(Clone, Debug)]
pub struct ConcurrencyLimit {
    places: Arc<Semaphore>,
    waiting: Arc<AtomicUsize>,
    limit: usize,
    max_waiting: Option<usize>,
}

impl ConcurrencyLimit {
    /// At most `limit` calls at once (at least 1).
    pub fn new(limit: usize) -> Self {
        let limit = limit.max(1);
        ConcurrencyLimit {
            places: Arc::new(Semaphore::new(limit)),
            waiting: Arc::default(),
            limit,
            max_waiting: None,
        }
    }

    /// Refuses a call when `calls` are already waiting (default: no bound but the server's
    /// own limits on requests).
    pub fn max_waiting(mut self, calls: usize) -> Self {
        self.max_waiting = Some(calls);
        self
    }
}

impl Layer<ToolService> for ConcurrencyLimit {
    type Service = ConcurrencyLimitService;

    fn layer(&self, inner: ToolService) -> ConcurrencyLimitService {
        Layered::new(inner, self.clone())
    }
}

/// The service of a [`ConcurrencyLimit`].
pub type ConcurrencyLimitService = Layered<ConcurrencyLimit>;

/// One call counted among the waiting ones until dropped (given its place, or cancelled).
struct Waits(Arc<AtomicUsize>);

impl Drop for Waits {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Around for ConcurrencyLimit {
    fn around(&self, inner: ToolService, call: ToolCall) -> ToolFuture {
        let limit = self.clone();
        Box::pin(async move {
            let place = match limit.places.clone().try_acquire_owned() {
                Ok(place) => place,
                Err(_) => {
                    let waiting = limit.waiting.fetch_add(1, Ordering::AcqRel);
                    let counted = Waits(limit.waiting.clone());
                    if limit.max_waiting.is_some_and(|max| waiting >= max) {
                        return Ok(ToolResult::error(format!(
                            "`{}` is busy: {} calls are running and {waiting} waiting, its limit; try again shortly",
                            call.name(),
                            limit.limit
                        )));
                    }
                    let place = limit.places.clone().acquire_owned().await.expect("never closed");
                    drop(counted);
                    place
                }
            };
            let result = inner.oneshot(call).await;
            drop(place);
            result
        })
    }
}
