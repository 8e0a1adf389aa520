//! The served tools: every tool ready to call, found by name in O(1), and the `tools/list`
//! pages of the tools the caller chose to list, serialized once. Immutable: a change builds a new
//! [`Registry`].

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::__private::StaticHandler;
use crate::context::Context;
use crate::context::auth::{AuthInfo, permits};
use crate::model::result::{OutputPlan, ToolResult};
use crate::model::task::TaskSupport;
use crate::model::tool::{Annotations, DynHandler, Icon};
use crate::protocol::Era;
use crate::protocol::stateless::CacheHint;
use crate::registry::explain::Checks;

/// Where a tool was defined, for start-up errors.
#[derive(Clone, Debug)]
pub(crate) enum DefinedAt {
    Attribute { file: &'static str, line: u32 },
    Runtime,
}

impl std::fmt::Display for DefinedAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DefinedAt::Attribute { file, line } => write!(f, "#[tool] at {file}:{line}"),
            DefinedAt::Runtime => f.write_str("a runtime Tool"),
        }
    }
}

/// A handler that takes the raw arguments (a JSON object) and does everything itself.
pub(crate) type NativeHandler =
    Arc<dyn Fn(&RawValue, Context) -> BoxFuture<'static, ToolResult> + Send + Sync>;

/// How a tool runs.
pub(crate) enum Handler {
    /// A `#[tool]` function: arguments decoded by generated code.
    Static {
        handler: StaticHandler,
        plan: OutputPlan,
        /// The advertised input schema's: compiled on first use when only needed to explain
        /// invalid arguments; at start-up when `checks.constrained`.
        validator: OnceLock<Option<jsonschema::Validator>>,
        /// What every call's arguments are checked for beyond decoding them.
        checks: Checks,
    },
    /// A runtime [`Tool`](crate::Tool): arguments checked against its JSON schema.
    Dynamic {
        handler: DynHandler,
        input_validator: Option<jsonschema::Validator>,
        /// Compiled on the first call (a large catalog's output schemas, e.g. an OpenAPI
        /// document's, cost much memory compiled); checked against the meta-schema at start-up.
        output_validator: OnceLock<Result<jsonschema::Validator, String>>,
    },
    /// A tool made by the crate itself (e.g. deferred mode's meta-tools).
    Native(NativeHandler),
}

/// One tool, ready to call.
pub(crate) struct ToolEntry {
    pub name: Arc<str>,
    pub title: Option<String>,
    pub description: String,
    pub summary: String,
    pub tags: Vec<String>,
    pub input_schema: Arc<Value>,
    /// The output schema 2025-11-25 clients see: an object schema.
    pub output_schema: Option<Arc<Value>>,
    /// The output schema 2026-07-28 clients see, when the output is not an object: 2025-11-25
    /// clients then get it wrapped as `{"result": …}`.
    pub bare_output_schema: Option<Arc<Value>>,
    pub annotations: Annotations,
    pub meta: Option<Map<String, Value>>,
    pub icons: Vec<Icon>,
    /// `Some(false)`: stays listed when the catalog is deferred.
    pub defer: Option<bool>,
    /// The app view the tool links to (`_meta.ui.resourceUri`), if any.
    pub view: Option<String>,
    /// The arguments a 2026-07-28 HTTP client mirrors in `Mcp-Param-*` headers (`x-mcp-header`).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub header_params: Vec<HeaderParam>,
    /// Whether the tool may (must) run as a task.
    pub task: TaskSupport,
    /// The call says itself when it becomes a task (`Context::become_task`), rather than at its
    /// first wait.
    pub becomes_task_itself: bool,
    /// How long a call may run before it is cancelled (else the server's request timeout).
    pub timeout: Option<std::time::Duration>,
    /// The OAuth scopes a caller needs (enforced where requests carry a verified identity).
    pub scopes: Arc<[String]>,
    /// Whether the handler can reach the client (ask it for input): `false` for a `#[tool]`
    /// without a `Context` parameter, whose 2026-07-28 calls then skip what a question needs.
    pub reaches_client: bool,
    /// Whether a call of this tool is the call of another (deferred mode's `call_tool`): the
    /// layers see that one instead.
    pub passes_through: bool,
    /// Callable, but neither listed nor searched ([`Tool`](crate::Tool)'s `hidden`).
    pub hidden: bool,
    pub handler: Handler,
    pub defined_at: DefinedAt,
}

impl ToolEntry {
    /// Whether the output is wrapped as `{"result": …}` for 2025-11-25 clients.
    pub fn wraps_output(&self) -> bool {
        self.bare_output_schema.is_some()
    }

    /// The output schema clients of `era` see.
    pub fn output_schema_in(&self, era: Era) -> Option<&Value> {
        match era {
            Era::Stateless => self.bare_output_schema.as_deref().or(self.output_schema.as_deref()),
            Era::Handshake => self.output_schema.as_deref(),
        }
    }

    /// The tool as `tools/list` shows it to clients of `era`.
    pub fn definition(&self, era: Era) -> ToolDefinition<'_> {
        ToolDefinition {
            name: &self.name,
            title: self.title.as_deref(),
            description: &self.description,
            input_schema: &self.input_schema,
            output_schema: self.output_schema_in(era),
            annotations: (!self.annotations.is_empty()).then_some(&self.annotations),
            icons: (!self.icons.is_empty()).then_some(&self.icons),
            meta: self.meta.as_ref().map(Cow::Borrowed),
        }
    }

    /// The validator of the input schema: a derived tool's arguments are explained with it (and
    /// checked, when constrained), a runtime tool's checked.
    pub fn explaining_validator(&self) -> Option<&jsonschema::Validator> {
        match &self.handler {
            // The schema as advertised: what a client is shown is what is accepted (an optional
            // field's `null` included).
            Handler::Static { validator, .. } => {
                validator.get_or_init(|| jsonschema::validator_for(&self.input_schema).ok()).as_ref()
            }
            Handler::Dynamic { input_validator, .. } => input_validator.as_ref(),
            Handler::Native(_) => None,
        }
    }
}

/// An argument mirrored in a header: its path in the arguments, and the header's name after
/// `Mcp-Param-`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeaderParam {
    pub path: Vec<String>,
    pub header: String,
}

impl HeaderParam {
    /// The argument's value in `arguments`, if it was sent.
    #[cfg(feature = "http")]
    pub fn find<'a>(&self, arguments: &'a Map<String, Value>) -> Option<&'a Value> {
        let (first, rest) = self.path.split_first()?;
        rest.iter().try_fold(arguments.get(first)?, |value, key| value.get(key))
    }
}

/// A tool's wire form.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolDefinition<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<&'a Annotations>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icons: Option<&'a Vec<Icon>>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Cow<'a, Map<String, Value>>>,
}

/// A tool `tools/list` shows, with `_meta` entries added to its own (`None`: as it is).
#[derive(Clone)]
pub(crate) struct Listed {
    pub entry: Arc<ToolEntry>,
    pub extra_meta: Option<Map<String, Value>>,
}

impl Listed {
    /// The tool as it is.
    pub fn plain(entry: Arc<ToolEntry>) -> Listed {
        Listed { entry, extra_meta: None }
    }
}

/// How `tools/list` is paged, and the cache hints of its 2026-07-28 pages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Paging {
    pub page_size: usize,
    pub cache: CacheHint,
}

/// The served tools. Immutable: a change builds a new one.
pub(crate) struct Registry {
    tools: Vec<Arc<ToolEntry>>,
    by_name: foldhash::HashMap<Arc<str>, Arc<ToolEntry>>,
    /// `tools/list` results, one per page, serialized once for each era.
    handshake_pages: Vec<Box<RawValue>>,
    stateless_pages: Vec<Box<RawValue>>,
    /// What those pages show: a caller that may not see all of it (scopes, list filters) gets
    /// pages made for it.
    listed: Vec<Listed>,
    paging: Paging,
    /// Whether some listed tool needs scopes.
    scoped: bool,
}

impl Registry {
    /// The registry of `tools` (callable by name, sorted by name) whose `tools/list` shows
    /// `listed`, in that order.
    pub fn new(mut tools: Vec<Arc<ToolEntry>>, listed: &[Listed], mut paging: Paging) -> Registry {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name = tools.iter().map(|t| (t.name.clone(), t.clone())).collect();
        let scoped = listed.iter().any(|l| !l.entry.scopes.is_empty());
        if scoped {
            // The list varies with the caller's authorization: no shared cache may keep it.
            paging.cache.public = false;
        }
        Registry {
            tools,
            by_name,
            handshake_pages: paginate(listed, paging, Era::Handshake),
            stateless_pages: paginate(listed, paging, Era::Stateless),
            listed: listed.to_vec(),
            paging,
            scoped,
        }
    }

    /// The registry of `tools` listing every one of them.
    pub fn listing_all(mut tools: Vec<Arc<ToolEntry>>, paging: Paging) -> Registry {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let listed: Vec<Listed> = tools.iter().filter(|t| !t.hidden).cloned().map(Listed::plain).collect();
        Registry::new(tools, &listed, paging)
    }

    pub fn get(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.by_name.get(name)
    }

    pub fn tools(&self) -> &[Arc<ToolEntry>] {
        &self.tools
    }

    /// The serialized `tools/list` result of `era` for a cursor (2026-07-28 pages are complete
    /// results, cache hints included), or `None` for a cursor we never issued.
    /// A caller whose token lacks some listed tool's scopes gets pages of the others.
    pub fn page(
        &self,
        cursor: Option<&str>,
        era: Era,
        caller: Option<&AuthInfo>,
    ) -> Option<Cow<'_, RawValue>> {
        if self.scoped && caller.is_some() && !self.listed.iter().all(|l| permits(caller, &l.entry.scopes)) {
            let visible: Vec<Listed> =
                self.listed.iter().filter(|l| permits(caller, &l.entry.scopes)).cloned().collect();
            let mut pages = paginate(&visible, self.paging, era);
            let index = page_index(cursor, pages.len())?;
            return Some(Cow::Owned(pages.swap_remove(index)));
        }
        let pages = match era {
            Era::Handshake => &self.handshake_pages,
            Era::Stateless => &self.stateless_pages,
        };
        let index = page_index(cursor, pages.len())?;
        pages.get(index).map(|b| Cow::Borrowed(&**b))
    }
}

impl Registry {
    /// The `tools/list` result of `era` for a cursor, made for a caller: the tools it may see
    /// (scopes), as `keep` shows them (changed in place, or left out), paged.
    pub fn page_shown(
        &self,
        cursor: Option<&str>,
        era: Era,
        caller: Option<&AuthInfo>,
        keep: impl Fn(&mut Map<String, Value>) -> bool,
    ) -> Option<Box<RawValue>> {
        let shown: Vec<Value> = self
            .listed
            .iter()
            .filter(|l| permits(caller, &l.entry.scopes))
            .filter_map(|l| {
                let mut definition = match serde_json::to_value(l.definition(era)) {
                    Ok(Value::Object(fields)) => fields,
                    _ => return None,
                };
                keep(&mut definition).then_some(Value::Object(definition))
            })
            .collect();
        // Made for one caller: no shared cache may keep it.
        let paging = Paging { cache: CacheHint { public: false, ..self.paging.cache }, ..self.paging };
        let mut pages = pages_of(&shown, paging, era);
        let index = page_index(cursor, pages.len())?;
        Some(pages.swap_remove(index))
    }
}

/// The page a cursor names (we issue page numbers), if it is one of `count`.
fn page_index(cursor: Option<&str>, count: usize) -> Option<usize> {
    match cursor {
        None => Some(0),
        Some(c) => c.parse::<usize>().ok().filter(|&i| i > 0 && i < count),
    }
}

/// `tools/list` pages of these tools, as clients of `era` see them.
fn paginate(tools: &[Listed], paging: Paging, era: Era) -> Vec<Box<RawValue>> {
    let definitions: Vec<ToolDefinition<'_>> = tools.iter().map(|listed| listed.definition(era)).collect();
    pages_of(&definitions, paging, era)
}

impl Listed {
    /// The tool's definition for `era`, its added `_meta` entries included.
    fn definition(&self, era: Era) -> ToolDefinition<'_> {
        let mut definition = self.entry.definition(era);
        if let Some(extra) = &self.extra_meta {
            let mut meta = self.entry.meta.clone().unwrap_or_default();
            meta.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            definition.meta = Some(Cow::Owned(meta));
        }
        definition
    }
}

/// `tools/list` pages of these definitions, as clients of `era` see them.
fn pages_of<T: Serialize>(tools: &[T], paging: Paging, era: Era) -> Vec<Box<RawValue>> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Page<'a, T> {
        #[serde(skip_serializing_if = "Option::is_none")]
        result_type: Option<&'static str>,
        tools: &'a [T],
        #[serde(skip_serializing_if = "Option::is_none")]
        next_cursor: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        ttl_ms: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_scope: Option<&'static str>,
    }
    let stateless = era == Era::Stateless;
    let chunks: Vec<&[T]> =
        if tools.is_empty() { vec![&[]] } else { tools.chunks(paging.page_size.max(1)).collect() };
    let count = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let page = Page {
                result_type: stateless.then_some("complete"),
                ttl_ms: stateless.then_some(paging.cache.ttl_ms),
                cache_scope: stateless.then_some(if paging.cache.public { "public" } else { "private" }),
                tools: chunk,
                next_cursor: (i + 1 < count).then(|| (i + 1).to_string()),
            };
            serde_json::value::to_raw_value(&page).expect("a tool list serializes")
        })
        .collect()
}
