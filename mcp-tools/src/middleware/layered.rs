//! The plumbing every built-in layer shares: a layer says what it does around one call
//! ([`Around`]); [`Layered`] is the tower service that does it.

use crate::dispatch::pipeline::{BoxError, ToolCall, ToolService};

/// What a built-in layer does around one call, given the service it wraps: its one method. The
/// tower plumbing ([`Layered`]) is the same for all of them.
#[doc(hidden)]
pub trait Around: Clone + Send + Sync + 'static {
    /// Runs `call` through `inner`, or answers it.
    fn around(&self, inner: ToolService, call: ToolCall) -> ToolFuture;
}

/// The future of a call through a layer.
pub type ToolFuture =
    futures_util::future::BoxFuture<'static, Result<crate::model::result::ToolResult, BoxError>>;

/// The service of a built-in layer `L` (`AccessLogService` is `Layered<AccessLog>`…): the
/// service it wraps, and the layer's state (shared by its clones).
#[derive(Clone)]
pub struct Layered<L> {
    inner: ToolService,
    layer: L,
}

impl<L> Layered<L> {
    pub(crate) fn new(inner: ToolService, layer: L) -> Layered<L> {
        Layered { inner, layer }
    }
}

impl<L: std::fmt::Debug> std::fmt::Debug for Layered<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layered").field("layer", &self.layer).finish_non_exhaustive()
    }
}

impl<L: Around> tower::Service<ToolCall> for Layered<L> {
    type Response = crate::model::result::ToolResult;
    type Error = BoxError;
    type Future = ToolFuture;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), BoxError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ToolCall) -> ToolFuture {
        self.layer.around(self.inner.clone(), call)
    }
}
