//! Tool definitions: [`Tool`] (built at run time from a JSON schema and a closure), the
//! [`Annotations`] hints, [`Icon`]s, and the [`Args`] wrapper for struct-typed arguments.

use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::Context;
use crate::model::apps::{AppView, merge_meta};
use crate::model::error::ToolError;
use crate::model::result::ToolResult;
use crate::model::task::TaskSupport;

/// The four MCP behaviour hints of a tool, plus a display title. Unset hints are not sent
/// (clients then assume the specification's defaults: not read-only, destructive, not
/// idempotent, open world).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates (meaningful when not read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl Annotations {
    /// No hints.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets `readOnlyHint`.
    pub fn read_only(mut self, value: bool) -> Self {
        self.read_only_hint = Some(value);
        self
    }
    /// Sets `destructiveHint`.
    pub fn destructive(mut self, value: bool) -> Self {
        self.destructive_hint = Some(value);
        self
    }
    /// Sets `idempotentHint`.
    pub fn idempotent(mut self, value: bool) -> Self {
        self.idempotent_hint = Some(value);
        self
    }
    /// Sets `openWorldHint`.
    pub fn open_world(mut self, value: bool) -> Self {
        self.open_world_hint = Some(value);
        self
    }
    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    pub(crate) fn is_empty(&self) -> bool {
        self == &Self::default()
    }
    /// Contradictions a client would misread, e.g. read-only and destructive at once.
    pub(crate) fn contradiction(&self) -> Option<&'static str> {
        (self.read_only_hint == Some(true) && self.destructive_hint == Some(true))
            .then_some("it is marked both read-only and destructive")
    }
}

/// An icon a client may show for a tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// URL (https: or data:) of the image.
    pub src: String,
    /// MIME type, e.g. `image/png`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `48x48` or `any`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
}

impl Icon {
    /// An icon at `src`; the MIME type is guessed from the extension (png, svg, jpg, webp, gif).
    pub fn new(src: impl Into<String>) -> Self {
        let src = src.into();
        let lower = src.to_ascii_lowercase();
        let mime = [
            (".png", "image/png"),
            (".svg", "image/svg+xml"),
            (".jpg", "image/jpeg"),
            (".jpeg", "image/jpeg"),
            (".webp", "image/webp"),
            (".gif", "image/gif"),
        ]
        .iter()
        .find(|(ext, _)| lower.ends_with(ext))
        .map(|(_, m)| (*m).to_owned());
        Icon { src, mime_type: mime, sizes: None }
    }
}

/// Wrapper for a `#[tool]` parameter whose struct supplies the whole argument object: its fields
/// are the tool's top-level properties.
///
/// ```
/// use mcp_tools::{tool, Args};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct SearchQuery {
///     /// Words to look for.
///     text: String,
///     /// At most this many hits.
///     #[serde(default = "ten")]
///     limit: u32,
/// }
/// fn ten() -> u32 { 10 }
///
/// /// Search the notes.
/// #[tool]
/// async fn search(Args(query): Args<SearchQuery>) -> String {
///     format!("{} (≤ {})", query.text, query.limit)
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Args<T>(pub T);

/// The handler of a runtime tool.
pub(crate) type DynHandler =
    Arc<dyn Fn(Value, Context) -> BoxFuture<'static, Result<ToolResult, ToolError>> + Send + Sync>;

/// A tool defined at run time: a name, a description, a hand-written JSON schema and an async
/// closure. Register it with [`ServerBuilder::tool`](crate::ServerBuilder::tool).
///
/// The input schema is advertised verbatim. With [`validate_arguments`](Tool::validate_arguments)
/// (on by default) every call's arguments are checked against it first and all problems are
/// reported to the model at once. With an [`output_schema`](Tool::output_schema), the handler's
/// `structuredContent` is checked against it: a mismatch becomes an `isError` result naming the
/// path, never a malformed answer.
///
/// ```
/// use mcp_tools::{Annotations, Tool, ToolResult};
/// use serde_json::json;
///
/// let echo = Tool::new(
///     "echo",
///     "Repeat the text back.",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
///     |args, _ctx| async move { Ok(ToolResult::new().text(args["text"].as_str().unwrap_or_default())) },
/// )
/// .annotations(Annotations::new().read_only(true));
/// assert_eq!(echo.name(), "echo");
/// ```
#[derive(Clone)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) summary: Option<String>,
    pub(crate) tags: Vec<String>,
    // Shared with the served entry (a large catalog's schemas are not copied).
    pub(crate) input_schema: Arc<Value>,
    pub(crate) output_schema: Option<Arc<Value>>,
    pub(crate) annotations: Annotations,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) defer: Option<bool>,
    pub(crate) task: TaskSupport,
    /// The call says itself when it becomes a task ([`Context::become_task`]), rather than at
    /// its first wait (a mounted tool: when its upstream's call does).
    pub(crate) becomes_task_itself: bool,
    pub(crate) timeout: Option<std::time::Duration>,
    pub(crate) scopes: Arc<[String]>,
    pub(crate) validate_arguments: bool,
    /// Callable but not listed, nor found by deferred search (a mounted upstream's tool while
    /// the upstream is down: a call is told so at once).
    pub(crate) hidden: bool,
    pub(crate) handler: DynHandler,
}

impl Tool {
    /// A tool with a name, a description, an input schema (a JSON object schema) and a handler.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Value, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
    {
        Tool {
            name: name.into(),
            title: None,
            description: description.into(),
            summary: None,
            tags: Vec::new(),
            input_schema: Arc::new(input_schema),
            output_schema: None,
            annotations: Annotations::default(),
            meta: None,
            icons: Vec::new(),
            defer: None,
            task: TaskSupport::Forbidden,
            becomes_task_itself: false,
            timeout: None,
            scopes: Arc::from([]),
            validate_arguments: true,
            hidden: false,
            handler: Arc::new(move |args, ctx| Box::pin(handler(args, ctx))),
        }
    }
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets the one-line summary shown by catalog search (default: the description's first line).
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }
    /// Sets the tags (groups for catalog search; not sent on `tools/list`).
    pub fn tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }
    /// Sets the output schema; structured results are checked against it. It is checked
    /// against the JSON Schema meta-schema when the server is built and compiled on the tool's
    /// first call (a schema that still cannot compile, e.g. a `pattern` that is no regular
    /// expression, makes the calls error results).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(Arc::new(schema));
        self
    }
    /// Sets the behaviour hints.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }
    /// Adds a `_meta` entry, sent verbatim on `tools/list`.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta.get_or_insert_with(Map::new).insert(key.into(), value.into());
        self
    }
    /// Links the tool to an app view: merges [`AppView::tool_meta`](crate::AppView::tool_meta)
    /// into its `_meta` (keys already set win; a `ui` object is merged key by key). Serve the view
    /// with [`ServerBuilder::app_view`](crate::ServerBuilder::app_view).
    pub fn view(mut self, view: &AppView) -> Self {
        self.meta = Some(merge_meta(self.meta.take(), view.tool_meta()));
        self
    }
    /// Whether the tool is hidden behind the search meta-tools when the server defers its
    /// catalog (default: true); `false` keeps it listed (see
    /// [`DeferredTools`](crate::deferred::DeferredTools)).
    pub fn defer(mut self, defer: bool) -> Self {
        self.defer = Some(defer);
        self
    }
    /// Whether the tool may (or must) run as a task for clients that support tasks (default:
    /// never); see [`TaskSupport`].
    pub fn task(mut self, support: TaskSupport) -> Self {
        self.task = support;
        self
    }
    /// How long a call may run: after that it is cancelled (the handler's future is dropped)
    /// and answered with an `isError` result saying so. Default: the server's
    /// [`Limits::request_timeout`](crate::Limits::request_timeout), if any.
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
    /// The OAuth scopes a caller needs (over HTTP with authorization): a caller without them
    /// does not see the tool, and calling it gets the 403 step-up answer naming them.
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }
    /// Whether arguments are checked against the input schema before the handler runs
    /// (default: true).
    pub fn validate_arguments(mut self, validate: bool) -> Self {
        self.validate_arguments = validate;
        self
    }
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("input_schema", &self.input_schema)
            .field("output_schema", &self.output_schema)
            .field("annotations", &self.annotations)
            .finish_non_exhaustive()
    }
}

/// Checks a tool name against the MCP rule: 1–128 characters of `[A-Za-z0-9_.-]`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 128 {
        return Err(format!("tool name {name:?} must be 1 to 128 characters long"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))) {
        return Err(format!("tool name {name:?} contains {c:?}; use only A-Z, a-z, 0-9, `_`, `.` and `-`"));
    }
    Ok(())
}
