//! Deferred mode: the catalog behind meta-tools. `tools/list` shows `search_tools`,
//! `describe_tools`, `call_tool` and `call_read_only_tool` (plus pinned tools); the model
//! searches, reads the definitions of the few tools it picked, and calls one.
//!
//! Why two call tools: hosts approve tool calls by the called tool's annotations. A single
//! `call_tool` can run anything, so it must be announced as possibly destructive and every call
//! through it needs approval. `call_read_only_tool` only runs tools whose `readOnlyHint` is
//! true, and says so (`readOnlyHint: true`), so a host can approve it once and let the model
//! look things up freely; everything else goes through `call_tool`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::{Bm25fRanker, Ranker, SearchDoc, SearchIndex, SearchOptions};
use crate::registry::{Handler, Origin, ToolEntry};
use crate::{Annotations, Context, ToolResult};

/// Serves a catalog deferred: pass it to
/// [`ServerBuilder::defer_tools`](crate::ServerBuilder::defer_tools).
///
/// ```
/// use mcp_tools::deferred::DeferredTools;
/// let deferred = DeferredTools::new()
///     .pin(["get_status"])                 // always listed, with `anthropic/alwaysLoad`
///     .search_limit(8);
/// ```
#[derive(Clone)]
pub struct DeferredTools {
    pinned: Vec<String>,
    names: MetaNames,
    ranker: Arc<dyn Ranker>,
    options: SearchOptions,
    default_limit: usize,
}

#[derive(Clone)]
struct MetaNames {
    search: String,
    describe: String,
    call: String,
    call_read_only: String,
}

impl Default for DeferredTools {
    fn default() -> Self {
        Self::new()
    }
}

impl DeferredTools {
    /// Every tool deferred (except `#[tool(defer = false)]` ones and tools linked to an app
    /// view), the default meta-tool names and the lexical ranker.
    pub fn new() -> Self {
        DeferredTools {
            pinned: Vec::new(),
            names: MetaNames {
                search: "search_tools".into(),
                describe: "describe_tools".into(),
                call: "call_tool".into(),
                call_read_only: "call_read_only_tool".into(),
            },
            ranker: Arc::new(Bm25fRanker::default()),
            options: SearchOptions::default(),
            default_limit: 10,
        }
    }
    /// Keeps these tools listed next to the meta-tools (marked `_meta["anthropic/alwaysLoad"]`).
    pub fn pin<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.pinned.extend(names.into_iter().map(Into::into));
        self
    }
    /// Renames the meta-tools (defaults: `search_tools`, `describe_tools`, `call_tool`,
    /// `call_read_only_tool`).
    pub fn names(
        mut self,
        search: impl Into<String>,
        describe: impl Into<String>,
        call: impl Into<String>,
        call_read_only: impl Into<String>,
    ) -> Self {
        self.names = MetaNames {
            search: search.into(),
            describe: describe.into(),
            call: call.into(),
            call_read_only: call_read_only.into(),
        };
        self
    }
    /// Replaces the ranking; the default is [`Bm25fRanker`]. [`HybridRanker`](super::HybridRanker)
    /// adds sentence embeddings (better recall on requests worded unlike the tools, at a few
    /// milliseconds a query; such searches run on a blocking thread).
    pub fn ranker(mut self, ranker: impl Ranker + 'static) -> Self {
        self.ranker = Arc::new(ranker);
        self
    }
    /// Sets the query-term coverage threshold and other search options.
    pub fn search_options(mut self, options: SearchOptions) -> Self {
        self.options = options;
        self
    }
    /// How many results `search_tools` returns when the model gives no `limit` (default 10).
    pub fn search_limit(mut self, limit: usize) -> Self {
        self.default_limit = limit.clamp(1, MAX_LIMIT);
        self
    }
}

const MAX_LIMIT: usize = 50;
const MAX_DESCRIBE: usize = 20;

/// Which meta-tool a [`Handler::Meta`] entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MetaTool {
    Search,
    Describe,
    Call { read_only: bool },
}

/// The deferred part of a registry: the search index over the deferred tools.
pub(crate) struct DeferredCatalog {
    index: SearchIndex,
    /// The indexed tools, in index order.
    docs: Vec<Arc<ToolEntry>>,
    config: Arc<DeferredTools>,
}

/// A tool meant for an app view only (`_meta.ui.visibility == ["app"]`): never offered to the
/// model.
pub(crate) fn is_app_only(entry: &ToolEntry) -> bool {
    let visibility = entry.meta.as_ref().and_then(|m| m.get("ui")).and_then(|ui| ui.get("visibility"));
    visibility.and_then(Value::as_array).is_some_and(|v| !v.iter().any(|x| x == "model"))
}

/// A tool linked to an app view: hosts discover views through `tools/list`, so it stays listed.
fn has_view(entry: &ToolEntry) -> bool {
    entry.meta.as_ref().is_some_and(|m| {
        m.get("ui").and_then(|ui| ui.get("resourceUri")).is_some() || m.contains_key("ui/resourceUri")
    })
}

/// How a deferred catalog is served: what `tools/list` shows (each with whether to mark it
/// `alwaysLoad`), the meta-tools to add, and the search catalog.
pub(crate) struct Plan {
    pub listed: Vec<(Arc<ToolEntry>, bool)>,
    pub meta_tools: Vec<Arc<ToolEntry>>,
    pub catalog: DeferredCatalog,
}

pub(crate) fn plan(entries: &[Arc<ToolEntry>], config: &Arc<DeferredTools>) -> Plan {
    let mut listed = Vec::new();
    let mut docs = Vec::new();
    for entry in entries {
        let pinned = config.pinned.iter().any(|p| *p == *entry.name) || entry.defer == Some(false);
        if pinned || has_view(entry) {
            listed.push((entry.clone(), pinned));
        }
        if !is_app_only(entry) {
            docs.push(entry.clone());
        }
    }
    let search_docs = docs
        .iter()
        .map(|e| {
            SearchDoc::from_schema(
                e.name.to_string(),
                e.title.clone(),
                e.summary.clone(),
                e.description.clone(),
                e.tags.clone(),
                &e.input_schema,
            )
        })
        .collect();
    let index = SearchIndex::with_options(search_docs, &*config.ranker, config.options);
    let catalog = DeferredCatalog { index, docs, config: config.clone() };
    let meta_tools = meta_entries(&catalog);
    Plan { listed, meta_tools, catalog }
}

fn meta_entry(
    name: &str,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    annotations: Annotations,
    kind: MetaTool,
) -> Arc<ToolEntry> {
    Arc::new(ToolEntry {
        name: name.into(),
        title: None,
        summary: description.lines().next().unwrap_or_default().to_owned(),
        description,
        tags: Vec::new(),
        input_schema: Arc::new(input_schema),
        output_schema: output_schema.map(Arc::new),
        annotations,
        meta: None,
        icons: Vec::new(),
        defer: Some(false),
        view: None,
        handler: Handler::Meta(kind),
        origin: Origin::Runtime,
    })
}

fn meta_entries(catalog: &DeferredCatalog) -> Vec<Arc<ToolEntry>> {
    let names = &catalog.config.names;
    let tags: Vec<&str> = catalog.index.tags().iter().map(|(t, _)| t.as_str()).collect();
    let count = catalog.docs.len();
    let tag_text = if tags.is_empty() { String::new() } else { format!(" Tags: {}.", tags.join(", ")) };
    let mut tags_schema = json!({"type": "array", "items": {"type": "string"}, "description": "Only tools with one of these tags."});
    if !tags.is_empty() {
        tags_schema["items"]["enum"] = json!(tags);
    }
    let search = meta_entry(
        &names.search,
        format!(
            "Search this server's {count} tools by what they do; returns names and one-line summaries, best first.{tag_text}\n\n\
             Then read the chosen tools' full definitions with `{}` and run one with `{}` (or `{}` for read-only tools). \
             An empty query lists the tools (page with `cursor`).",
            names.describe, names.call, names.call_read_only
        ),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words describing the task, e.g. \"current weather for a city\". Empty lists every tool."},
                "tags": tags_schema,
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "At most this many results.", "default": catalog.config.default_limit},
                "cursor": {"type": "string", "description": "`nextCursor` of the previous page."}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
        Some(json!({
            "type": "object",
            "properties": {
                "tools": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "title": {"type": "string"},
                        "summary": {"type": "string"},
                        "tags": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["name", "summary", "tags"]
                }},
                "total": {"type": "integer", "description": "How many tools matched in all."},
                "nextCursor": {"type": "string"},
                "hint": {"type": "string"}
            },
            "required": ["tools", "total"]
        })),
        Annotations::new().read_only(true).idempotent(true).open_world(false).title("Search tools"),
        MetaTool::Search,
    );
    let describe = meta_entry(
        &names.describe,
        format!(
            "Full definitions (description, input schema, output schema, annotations) of tools found with `{}`, by name. \
             Read them before calling a tool with `{}` or `{}`.",
            names.search, names.call, names.call_read_only
        ),
        json!({
            "type": "object",
            "properties": {
                "names": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_DESCRIBE, "description": "Tool names."}
            },
            "required": ["names"],
            "additionalProperties": false
        }),
        None,
        Annotations::new().read_only(true).idempotent(true).open_world(false).title("Describe tools"),
        MetaTool::Describe,
    );
    let call_schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The tool's name."},
            "arguments": {"type": "object", "description": "The tool's arguments, as its input schema says."}
        },
        "required": ["name"],
        "additionalProperties": false
    });
    let call = meta_entry(
        &names.call,
        format!(
            "Run a tool of this server by name, with arguments matching its input schema (see `{}`); returns the tool's result.",
            names.describe
        ),
        call_schema.clone(),
        None,
        Annotations::new().title("Call a tool"),
        MetaTool::Call { read_only: false },
    );
    let call_read_only = meta_entry(
        &names.call_read_only,
        format!(
            "Run a read-only tool of this server (its `readOnlyHint` is true) by name; it changes nothing. Other tools go through `{}`.",
            names.call
        ),
        call_schema,
        None,
        Annotations::new().read_only(true).title("Call a read-only tool"),
        MetaTool::Call { read_only: true },
    );
    vec![search, describe, call, call_read_only]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    #[serde(default)]
    query: String,
    #[serde(default)]
    tags: Option<Vec<String>>,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DescribeArgs {
    names: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallArgs {
    name: String,
    #[serde(default)]
    arguments: Option<Box<RawValue>>,
}

#[derive(Serialize)]
struct Found<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    summary: &'a str,
    tags: &'a [String],
}

/// Runs a meta-tool.
pub(crate) async fn run(kind: MetaTool, entry: &ToolEntry, arguments: &RawValue, ctx: Context) -> ToolResult {
    let registry = ctx.parts().session.server.registry.load_full();
    let Some(catalog) = registry.deferred() else {
        return ToolResult::error("this server does not defer its tools");
    };
    // A ranker that runs a model takes milliseconds a query: off the async workers with it.
    let blocking = catalog.index.is_blocking();
    let decoded = match kind {
        MetaTool::Search => match serde_json::from_str::<SearchArgs>(arguments.get()) {
            Ok(a) if blocking => Ok(off_runtime(registry.clone(), move |c| search(c, a)).await),
            Ok(a) => Ok(search(catalog, a)),
            Err(e) => Err(e),
        },
        MetaTool::Describe => match serde_json::from_str::<DescribeArgs>(arguments.get()) {
            Ok(a) if blocking => Ok(off_runtime(registry.clone(), move |c| describe(c, a)).await),
            Ok(a) => Ok(describe(catalog, a)),
            Err(e) => Err(e),
        },
        MetaTool::Call { read_only } => match serde_json::from_str::<CallArgs>(arguments.get()) {
            Ok(a) => return call(catalog, read_only, a, ctx).await,
            Err(e) => Err(e),
        },
    };
    decoded.unwrap_or_else(|e| {
        ToolResult::error(format!(
            "Invalid arguments for `{}`: {e}. Its input schema: {}",
            entry.name, entry.input_schema
        ))
    })
}

/// Runs `f` over the registry's deferred catalog on a blocking thread.
async fn off_runtime(
    registry: Arc<crate::registry::Registry>,
    f: impl FnOnce(&DeferredCatalog) -> ToolResult + Send + 'static,
) -> ToolResult {
    let task = tokio::task::spawn_blocking(move || match registry.deferred() {
        Some(catalog) => f(catalog),
        None => ToolResult::error("this server does not defer its tools"),
    });
    task.await.unwrap_or_else(|e| ToolResult::error(format!("the search failed: {e}")))
}

fn structured(value: Value) -> ToolResult {
    ToolResult::structured(value).unwrap_or_else(|e| ToolResult::error(e.message().to_owned()))
}

fn search(catalog: &DeferredCatalog, args: SearchArgs) -> ToolResult {
    let limit = args.limit.unwrap_or(catalog.config.default_limit).clamp(1, MAX_LIMIT);
    let offset = match args.cursor.as_deref().map(str::parse::<usize>) {
        None => 0,
        Some(Ok(offset)) => offset,
        Some(Err(_)) => {
            return ToolResult::error("invalid `cursor`: pass the `nextCursor` of a previous page");
        }
    };
    let page = catalog.index.search(&args.query, args.tags.as_deref(), limit, offset);
    let tools: Vec<Found<'_>> = page
        .hits
        .iter()
        .map(|hit| {
            let entry = &catalog.docs[hit.doc];
            Found {
                name: &entry.name,
                title: entry.title.as_deref(),
                summary: &entry.summary,
                tags: &entry.tags,
            }
        })
        .collect();
    let hint = (page.total == 0).then(|| {
        let tags: Vec<&str> = catalog.index.tags().iter().map(|(t, _)| t.as_str()).collect();
        if args.query.trim().is_empty() {
            "No tool has these tags.".to_owned()
        } else if tags.is_empty() {
            format!("No tool matches \"{}\" well. Try other words for the task, or an empty query to list the tools.", args.query)
        } else {
            format!(
                "No tool matches \"{}\" well. Try other words for the task, or list the tools of a tag with an empty query and `tags` (tags: {}).",
                args.query,
                tags.join(", ")
            )
        }
    });
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Page<'a> {
        tools: Vec<Found<'a>>,
        total: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        next_cursor: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        hint: Option<String>,
    }
    let page = Page { tools, total: page.total, next_cursor: page.next_offset.map(|n| n.to_string()), hint };
    // Serialized once; the same text is the structured content and the text block.
    match serde_json::value::to_raw_value(&page) {
        Ok(raw) => ToolResult::from_raw_structured(raw),
        Err(e) => ToolResult::error(e.to_string()),
    }
}

fn definition(entry: &ToolEntry) -> Value {
    let mut def =
        json!({"name": &*entry.name, "description": entry.description, "inputSchema": &*entry.input_schema});
    if let Some(title) = &entry.title {
        def["title"] = json!(title);
    }
    if let Some(output) = &entry.output_schema {
        def["outputSchema"] = (**output).clone();
    }
    if !entry.annotations.is_empty() {
        def["annotations"] = json!(entry.annotations);
    }
    def
}

fn describe(catalog: &DeferredCatalog, args: DescribeArgs) -> ToolResult {
    if args.names.is_empty() || args.names.len() > MAX_DESCRIBE {
        return ToolResult::error(format!("`names` takes 1 to {MAX_DESCRIBE} tool names"));
    }
    let mut tools = Vec::new();
    let mut unknown = Vec::new();
    for name in &args.names {
        match catalog.index.position(name) {
            Some(doc) => tools.push(definition(&catalog.docs[doc])),
            None => unknown.push(json!({"name": name, "suggestions": catalog.index.suggest(name, 3)})),
        }
    }
    let none_found = tools.is_empty();
    let mut result = json!({"tools": tools});
    if !unknown.is_empty() {
        result["unknown"] = Value::Array(unknown);
    }
    structured(result).with_error(none_found)
}

async fn call(catalog: &DeferredCatalog, read_only: bool, args: CallArgs, ctx: Context) -> ToolResult {
    let names = &catalog.config.names;
    let Some(doc) = catalog.index.position(&args.name) else {
        let suggestions = catalog.index.suggest(&args.name, 3);
        let mut text = format!("Unknown tool `{}`.", args.name);
        if !suggestions.is_empty() {
            let list: Vec<&str> = suggestions.iter().map(|s| &**s).collect();
            text.push_str(&format!(" Did you mean: {}?", list.join(", ")));
        }
        text.push_str(&format!(" Find tools with `{}`.", names.search));
        return ToolResult::error(text);
    };
    let entry = catalog.docs[doc].clone();
    if read_only && entry.annotations.read_only_hint != Some(true) {
        return ToolResult::error(format!(
            "`{}` is not a read-only tool; run it with `{}`.",
            entry.name, names.call
        ));
    }
    let arguments = args.arguments.unwrap_or_else(|| RawValue::from_string("{}".into()).expect("valid JSON"));
    let result = crate::call::call_entry(&entry, &arguments, ctx).await;
    if result.is_error() {
        // Give the model what it needs to fix the call in one retry.
        return result.text(format!("The input schema of `{}` is: {}", entry.name, entry.input_schema));
    }
    result
}

/// `_meta` with `anthropic/alwaysLoad: true` added.
pub(crate) fn always_load(meta: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut meta = meta.cloned().unwrap_or_default();
    meta.insert("anthropic/alwaysLoad".into(), Value::Bool(true));
    meta
}
