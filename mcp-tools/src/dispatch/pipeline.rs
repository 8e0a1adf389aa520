//! The call pipeline: every tool call, whoever defined the tool (`#[tool]`, a runtime `Tool`, an
//! OpenAPI operation, a tool that deferred mode's `call_tool` runs), goes through one tower
//! [`Service`] made of the server's layers ([`ServerBuilder::layer`], outermost), the tool's own
//! ([`ServerBuilder::tool_layer`]), and the tool itself. And the list filters
//! ([`ServerBuilder::list_filter`]): what each caller is shown of the tools, resources and
//! prompts.
//!
//! With no layer, a call runs the tool directly: the pipeline costs nothing.
//!
//! [`ServerBuilder::layer`]: crate::ServerBuilder::layer
//! [`ServerBuilder::tool_layer`]: crate::ServerBuilder::tool_layer
//! [`ServerBuilder::list_filter`]: crate::ServerBuilder::list_filter

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt as _};

use super::call::{call_entry, panic_message};
use crate::context::auth::AuthInfo;
use crate::context::{Context, HttpParts};
use crate::model::result::ToolResult;
use crate::model::tool::Annotations;
use crate::protocol::{Era, Implementation};
use crate::registry::tools::ToolEntry;

/// The error a layer may fail a call with: anything that converts to it (tower's own layers'
/// errors, a `String`). A failed call is answered as a tool error (`isError: true`) naming the
/// failure. (A layer that wants to say more answers `Ok` with a [`ToolResult::error`] of its
/// own.)
pub type BoxError = tower::BoxError;

/// The service every tool call goes through, and that a layer wraps.
pub type ToolService = BoxCloneSyncService<ToolCall, ToolResult, BoxError>;

/// One tool call as the pipeline sees it: the tool, its arguments (raw JSON, as the client sent
/// them) and the call's [`Context`] (caller identity and scopes, era, request id, `_meta`,
/// progress, cancellation). A layer may answer it on its own, change its arguments, or look at
/// and change the result of the service it wraps.
pub struct ToolCall {
    entry: Arc<ToolEntry>,
    arguments: Box<RawValue>,
    context: Context,
}

impl ToolCall {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.entry.name
    }

    /// The tool's title, if it has one.
    pub fn title(&self) -> Option<&str> {
        self.entry.title.as_deref()
    }

    /// The tool's annotations (read-only, idempotent …).
    pub fn annotations(&self) -> &Annotations {
        &self.entry.annotations
    }

    /// The tool's tags.
    pub fn tags(&self) -> &[String] {
        &self.entry.tags
    }

    /// The scopes the tool needs (already checked: a caller without them never gets here).
    pub fn scopes(&self) -> &[String] {
        &self.entry.scopes
    }

    /// The arguments, as the client sent them (a JSON object, or what the client sent instead:
    /// the tool itself says what is wrong with them).
    pub fn arguments(&self) -> &RawValue {
        &self.arguments
    }

    /// The arguments, parsed (`Value::Null` if they are not JSON, which cannot happen for a
    /// call a client sent).
    pub fn arguments_json(&self) -> Value {
        serde_json::from_str(self.arguments.get()).unwrap_or(Value::Null)
    }

    /// Replaces the arguments the tool (and the layers inside this one) will see.
    pub fn set_arguments(&mut self, arguments: Value) {
        self.arguments = serde_json::value::to_raw_value(&arguments).expect("a JSON value serializes");
    }

    /// The call's context: who calls (`auth()`), in which era, with which request id and
    /// `_meta`; progress, logging and cancellation.
    pub fn context(&self) -> &Context {
        &self.context
    }
}

impl fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCall")
            .field("name", &self.entry.name)
            .field("request_id", self.context.request_id())
            .finish_non_exhaustive()
    }
}

/// A layer as the builder keeps it: turns the service it wraps into the wrapped one.
pub(crate) type Wrap = Arc<dyn Fn(ToolService) -> ToolService + Send + Sync>;

/// Keeps `layer` as a [`Wrap`]: its service's errors become [`BoxError`]s, and it is boxed.
pub(crate) fn wrap<L>(layer: L) -> Wrap
where
    L: Layer<ToolService> + Send + Sync + 'static,
    L::Service: Service<ToolCall, Response = ToolResult> + Clone + Send + Sync + 'static,
    <L::Service as Service<ToolCall>>::Error: Into<BoxError>,
    <L::Service as Service<ToolCall>>::Future: Send + 'static,
{
    Arc::new(move |inner| BoxCloneSyncService::new(layer.layer(inner).map_err(Into::into)))
}

/// Who is shown a list ([`ListFilter`]): the caller's identity, era, client and HTTP request.
#[derive(Clone, Copy)]
pub struct Viewer<'a> {
    auth: Option<&'a AuthInfo>,
    era: Era,
    client: &'a Implementation,
    http: Option<&'a HttpParts>,
}

impl<'a> Viewer<'a> {
    pub(crate) fn new(
        auth: Option<&'a AuthInfo>,
        era: Era,
        client: &'a Implementation,
        http: Option<&'a HttpParts>,
    ) -> Viewer<'a> {
        Viewer { auth, era, client, http }
    }

    /// The viewer of a running call (a deferred search).
    pub(crate) fn of(ctx: &'a Context) -> Viewer<'a> {
        Viewer { auth: ctx.auth(), era: ctx.era(), client: ctx.client_info(), http: ctx.http() }
    }

    /// The caller's verified identity (HTTP with authorization), if any.
    pub fn auth(&self) -> Option<&'a AuthInfo> {
        self.auth
    }

    /// The era of the request.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The client's `clientInfo`.
    pub fn client_info(&self) -> &'a Implementation {
        self.client
    }

    /// The HTTP request, over Streamable HTTP.
    pub fn http(&self) -> Option<&'a HttpParts> {
        self.http
    }
}

impl fmt::Debug for Viewer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Viewer")
            .field("principal", &self.auth.and_then(AuthInfo::principal))
            .field("era", &self.era)
            .field("client", &self.client.name)
            .finish_non_exhaustive()
    }
}

/// What a caller is shown: each item of `tools/list` (and deferred mode's search and describe),
/// `resources/list`, `resources/templates/list` and `prompts/list`, as its wire definition,
/// which the filter may change (a title, a description, `_meta`…) or hide (`false`). Set with
/// [`ServerBuilder::list_filter`](crate::ServerBuilder::list_filter); every method keeps the
/// item as it is by default.
///
/// Hiding is not refusing: a hidden tool can still be called by a client that knows its name.
/// Refuse such calls in a layer, or use scopes (`#[tool(scopes = [...])]`), which both hide and
/// refuse.
///
/// ```
/// use mcp_tools::middleware::{ListFilter, Viewer};
/// use serde_json::{Map, Value};
///
/// /// Tools tagged `admin` in their name are shown to administrators only.
/// struct AdminsOnly;
///
/// impl ListFilter for AdminsOnly {
///     fn tool(&self, viewer: &Viewer<'_>, tool: &mut Map<String, Value>) -> bool {
///         let admin = viewer.auth().is_some_and(|caller| caller.has_scope("admin"));
///         admin || !tool["name"].as_str().unwrap_or_default().starts_with("admin_")
///     }
/// }
/// ```
pub trait ListFilter: Send + Sync + 'static {
    /// Whether `viewer` is shown this tool (its `tools/list` definition, changed in place).
    fn tool(&self, viewer: &Viewer<'_>, tool: &mut Map<String, Value>) -> bool {
        let _ = (viewer, tool);
        true
    }

    /// Whether `viewer` is shown this resource (its `resources/list` entry).
    fn resource(&self, viewer: &Viewer<'_>, resource: &mut Map<String, Value>) -> bool {
        let _ = (viewer, resource);
        true
    }

    /// Whether `viewer` is shown this resource template (its `resources/templates/list` entry).
    fn resource_template(&self, viewer: &Viewer<'_>, template: &mut Map<String, Value>) -> bool {
        let _ = (viewer, template);
        true
    }

    /// Whether `viewer` is shown this prompt (its `prompts/list` entry).
    fn prompt(&self, viewer: &Viewer<'_>, prompt: &mut Map<String, Value>) -> bool {
        let _ = (viewer, prompt);
        true
    }
}

/// Which list an item belongs to, for [`Pipeline::shows`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listing {
    Tool,
    Resource,
    ResourceTemplate,
    Prompt,
}

/// The server's pipeline: the service every tool call goes through, and the list filters.
#[derive(Default)]
pub(crate) struct Pipeline {
    /// `None` with no layer at all: calls run their tool directly.
    service: Option<ToolService>,
    filters: Vec<Arc<dyn ListFilter>>,
}

impl fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pipeline")
            .field("layered", &self.service.is_some())
            .field("list_filters", &self.filters.len())
            .finish()
    }
}

impl Pipeline {
    /// The pipeline of `layers` (around every call, the last added outermost), `tool_layers`
    /// (around one tool's calls, inside those) and `filters` (applied in order).
    pub fn new(
        layers: &[Wrap],
        tool_layers: &[(Arc<str>, Wrap)],
        filters: Vec<Arc<dyn ListFilter>>,
    ) -> Pipeline {
        if layers.is_empty() && tool_layers.is_empty() {
            return Pipeline { service: None, filters };
        }
        let mut per_tool: foldhash::HashMap<Arc<str>, ToolService> = Default::default();
        for (name, wrap) in tool_layers {
            let inner = per_tool.remove(name).unwrap_or_else(|| BoxCloneSyncService::new(Run));
            per_tool.insert(name.clone(), wrap(inner));
        }
        let route = BoxCloneSyncService::new(Route { per_tool: Arc::new(per_tool) });
        let service = layers.iter().fold(route, |inner, wrap| wrap(inner));
        Pipeline { service: Some(service), filters }
    }

    /// This pipeline, if a call of `entry` goes through layers (`None`: it runs the tool
    /// directly; so does a tool whose call is another's, deferred mode's `call_tool`, whose
    /// inner call goes through them).
    pub fn layered(self: &Arc<Self>, entry: &ToolEntry) -> Option<Arc<Pipeline>> {
        (self.service.is_some() && !entry.passes_through).then(|| self.clone())
    }

    /// Whether any list filter is set.
    pub fn filters_lists(&self) -> bool {
        !self.filters.is_empty()
    }

    /// Runs a call of `entry` through the layers. A layer that fails, or panics, is answered as
    /// a tool error, like a handler that does.
    pub async fn call(&self, entry: Arc<ToolEntry>, arguments: Box<RawValue>, ctx: Context) -> ToolResult {
        let Some(service) = &self.service else { return call_entry(&entry, &arguments, ctx).await };
        let name = entry.name.clone();
        let call = ToolCall { entry, arguments, context: ctx };
        let service = service.clone();
        let future = match std::panic::catch_unwind(AssertUnwindSafe(|| service.oneshot(call))) {
            Ok(future) => future,
            Err(panic) => return layer_panicked(&name, &*panic),
        };
        match AssertUnwindSafe(future).catch_unwind().await {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => layer_failed(&name, error),
            Err(panic) => layer_panicked(&name, &*panic),
        }
    }

    /// Whether `viewer` is shown `item` of `listing` (changed in place by the filters).
    pub fn shows(&self, listing: Listing, viewer: &Viewer<'_>, item: &mut Map<String, Value>) -> bool {
        self.filters.iter().all(|filter| match listing {
            Listing::Tool => filter.tool(viewer, item),
            Listing::Resource => filter.resource(viewer, item),
            Listing::ResourceTemplate => filter.resource_template(viewer, item),
            Listing::Prompt => filter.prompt(viewer, item),
        })
    }
}

/// The answer to a call a layer failed: a tool error naming the failure.
fn layer_failed(tool: &str, error: BoxError) -> ToolResult {
    tracing::debug!(tool, %error, "a layer failed a call");
    ToolResult::error(format!("`{tool}` was not run: {error}"))
}

fn layer_panicked(tool: &str, panic: &(dyn std::any::Any + Send)) -> ToolResult {
    tracing::error!(tool, panic = %panic_message(panic), "a layer panicked");
    ToolResult::from_panic(format!(
        "the tool `{tool}` failed: a layer around it panicked (details are in the server's log)"
    ))
}

/// The innermost service: runs the tool.
#[derive(Clone, Copy)]
struct Run;

impl Service<ToolCall> for Run {
    type Response = ToolResult;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ToolResult, BoxError>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ToolCall) -> Self::Future {
        Box::pin(async move { Ok(call_entry(&call.entry, &call.arguments, call.context).await) })
    }
}

/// What the server's layers wrap: the tool's own layers around it, or the tool itself.
#[derive(Clone)]
struct Route {
    per_tool: Arc<foldhash::HashMap<Arc<str>, ToolService>>,
}

impl Service<ToolCall> for Route {
    type Response = ToolResult;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ToolResult, BoxError>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ToolCall) -> Self::Future {
        match self.per_tool.get(&call.entry.name) {
            // Its readiness is awaited inside (a tool's concurrency limit waits for a place).
            Some(service) => service.clone().oneshot(call).boxed(),
            None => Run.call(call),
        }
    }
}
