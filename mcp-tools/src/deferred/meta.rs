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
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::corpus::SearchDoc;
use super::index::{SearchIndex, SearchOptions};
use super::rank::{Bm25fRanker, Meaning, Ranker};
use crate::context::Context;
use crate::context::auth::permits;
use crate::dispatch::call::call_entry;
use crate::dispatch::pipeline::{Listing, Pipeline, Viewer};
use crate::model::apps::{has_view, is_app_only};
use crate::model::result::ToolResult;
use crate::model::task::TaskSupport;
use crate::model::tool::Annotations;
use crate::protocol::Era;
use crate::registry::tools::{DefinedAt, Handler, Listed, NativeHandler, ToolEntry};

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
    max_query_bytes: usize,
    meaning_wait: Duration,
    /// The server's call pipeline and list filters (set when the server is built).
    pipeline: Arc<Pipeline>,
    /// The server's skills, which search finds too and `read_skill` reads (set when the server
    /// is built).
    skills: Option<SkillShelf>,
}

/// The skills deferred mode finds and reads: each one's name, `SKILL.md` URI and description,
/// and how to read a skill file's text for the model (or why it cannot be).
#[derive(Clone)]
pub(crate) struct SkillShelf {
    pub skills: Vec<(String, String, String)>,
    pub read: ReadSkill,
}

/// Reads a skill file's text for the model, by URI (or says why it cannot).
pub(crate) type ReadSkill = Arc<dyn Fn(&str) -> Result<String, String> + Send + Sync>;

#[derive(Clone, Debug)]
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
            max_query_bytes: 1024,
            meaning_wait: DEFAULT_MEANING_WAIT,
            pipeline: Arc::default(),
            skills: None,
        }
    }

    /// Serves the tools through `pipeline`: their calls through its layers, what callers are
    /// shown through its list filters.
    pub(crate) fn with_pipeline(mut self, pipeline: Arc<Pipeline>) -> Self {
        self.pipeline = pipeline;
        self
    }

    /// Lets search find these skills, and adds `read_skill` (with at least one skill).
    #[cfg_attr(not(feature = "skills"), allow(dead_code))]
    pub(crate) fn with_skills(mut self, shelf: SkillShelf) -> Self {
        self.skills = (!shelf.skills.is_empty()).then_some(shelf);
        self
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
    /// The longest `search_tools` query accepted, in bytes (default 1 KiB): a longer one gets an
    /// error result at once (searching is linear in the query, and real queries are short).
    pub fn max_query_bytes(mut self, bytes: usize) -> Self {
        self.max_query_bytes = bytes.max(16);
        self
    }
    /// How long a search waits, at most, for a ranker by meaning
    /// ([`HybridRanker`](super::HybridRanker)) still embedding the catalog after a first start
    /// (default 5 s; a restart with the vectors cached is ready at once). A search still
    /// unanswered by then ranks by words and says so: `rankedBy: "words"` and a hint to search
    /// again. `Duration::ZERO` never waits.
    pub fn meaning_wait(mut self, wait: Duration) -> Self {
        self.meaning_wait = wait;
        self
    }
    /// How many results `search_tools` returns when the model gives no `limit` (default 10).
    pub fn search_limit(mut self, limit: usize) -> Self {
        self.default_limit = limit.clamp(1, MAX_LIMIT);
        self
    }
}

impl std::fmt::Debug for DeferredTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredTools")
            .field("pinned", &self.pinned)
            .field("names", &self.names)
            .field("options", &self.options)
            .field("default_limit", &self.default_limit)
            .field("max_query_bytes", &self.max_query_bytes)
            .field("meaning_wait", &self.meaning_wait)
            .finish_non_exhaustive()
    }
}

const MAX_LIMIT: usize = 50;
/// [`DeferredTools::meaning_wait`]'s default: about what 500 tools take to embed by meaning.
const DEFAULT_MEANING_WAIT: Duration = Duration::from_secs(5);
const MAX_DESCRIBE: usize = 20;
/// The most skills a search returns.
const MAX_SKILLS: usize = 5;
/// The name of the meta-tool that reads skills.
const READ_SKILL: &str = "read_skill";

/// Which meta-tool an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MetaTool {
    Search,
    Describe,
    Call { read_only: bool },
    ReadSkill,
}

/// The search side of a deferred catalog: the index over the deferred tools, which the
/// meta-tools own.
struct DeferredCatalog {
    index: SearchIndex,
    /// The indexed tools, in index order.
    docs: Vec<Arc<ToolEntry>>,
    /// The hidden tools: neither searched nor described, but `call` runs them by name (a lost
    /// upstream's tools, which fail at once saying why).
    hidden: Vec<Arc<ToolEntry>>,
    config: Arc<DeferredTools>,
    /// Places for searches running a model on blocking threads: one per CPU, the others wait.
    blocking: Arc<tokio::sync::Semaphore>,
    /// The index over the server's skills (their names and descriptions), if it has some.
    skills: Option<SearchIndex>,
}

impl DeferredCatalog {
    /// Whether `ctx`'s caller is shown tool `doc`: it may call it (scopes), and the list
    /// filters keep it.
    fn visible(&self, doc: usize, ctx: &Context) -> bool {
        let pipeline = &self.config.pipeline;
        permits(ctx.auth(), &self.docs[doc].scopes)
            && (!pipeline.filters_lists() || self.shown(doc, ctx).is_some())
    }

    /// Tool `doc`'s definition as `ctx`'s caller is shown it (changed by the list filters), if
    /// it is shown.
    fn shown(&self, doc: usize, ctx: &Context) -> Option<Value> {
        let entry = &self.docs[doc];
        if !permits(ctx.auth(), &entry.scopes) {
            return None;
        }
        let mut definition = definition(entry, ctx.era());
        let pipeline = &self.config.pipeline;
        if let Value::Object(fields) = &mut definition
            && !pipeline.shows(Listing::Tool, &Viewer::of(ctx), fields)
        {
            return None;
        }
        Some(definition)
    }

    /// Whether some tools are shown to some callers only (scopes, list filters).
    fn restricted(&self, ctx: &Context) -> bool {
        self.config.pipeline.filters_lists()
            || (ctx.auth().is_some() && self.docs.iter().any(|d| !d.scopes.is_empty()))
    }

    /// The tags of the tools `shown` keeps (by index), in the index's order.
    fn tags_of(&self, shown: impl Fn(usize) -> bool) -> Vec<&str> {
        let tagged = |tag: &str| {
            self.docs.iter().enumerate().any(|(doc, entry)| shown(doc) && entry.tags.iter().any(|t| t == tag))
        };
        self.index.tags().iter().map(|(t, _)| t.as_str()).filter(|tag| tagged(tag)).collect()
    }
}

impl DeferredTools {
    /// How these tools (sorted by name) are served deferred: the four meta-tools to add, which
    /// own the search index over the tools, and what `tools/list` shows: the meta-tools, then the
    /// pinned tools (marked `anthropic/alwaysLoad`) and the tools linked to a view.
    pub(crate) fn plan(self: &Arc<Self>, entries: &[Arc<ToolEntry>]) -> (Vec<Arc<ToolEntry>>, Vec<Listed>) {
        let mut listed = Vec::new();
        let mut docs = Vec::new();
        let hidden = entries.iter().filter(|e| e.hidden).cloned().collect();
        for entry in entries.iter().filter(|e| !e.hidden) {
            let pinned = self.pinned.iter().any(|p| *p == *entry.name) || entry.defer == Some(false);
            if pinned {
                listed.push(Listed { entry: entry.clone(), extra_meta: Some(always_load()) });
            } else if has_view(entry.meta.as_ref()) {
                listed.push(Listed::plain(entry.clone()));
            }
            if !is_app_only(entry.meta.as_ref()) {
                docs.push(entry.clone());
            }
        }
        let search_docs = docs
            .iter()
            .map(|e| {
                SearchDoc::indexed(
                    e.name.to_string(),
                    e.title.clone(),
                    &e.annotations,
                    e.summary.clone(),
                    e.description.clone(),
                    e.tags.clone(),
                    &e.input_schema,
                )
            })
            .collect();
        let index = SearchIndex::with_options(search_docs, &*self.ranker, self.options);
        let skills = self.skills.as_ref().map(|shelf| {
            let docs =
                shelf.skills.iter().map(|(name, _, description)| SearchDoc::new(name, description)).collect();
            SearchIndex::with_options(docs, &*self.ranker, self.options)
        });
        let cpus = std::thread::available_parallelism().map_or(2, usize::from);
        let blocking = Arc::new(tokio::sync::Semaphore::new(cpus));
        let catalog =
            Arc::new(DeferredCatalog { index, docs, hidden, config: self.clone(), blocking, skills });
        let meta_tools = meta_entries(&catalog);
        let mut shown: Vec<Listed> = meta_tools.iter().cloned().map(Listed::plain).collect();
        shown.extend(listed);
        (meta_tools, shown)
    }
}

fn meta_entry(
    name: &str,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    annotations: Annotations,
    kind: MetaTool,
    catalog: &Arc<DeferredCatalog>,
) -> Arc<ToolEntry> {
    let catalog = catalog.clone();
    let tool: Arc<str> = name.into();
    let schema = Arc::new(input_schema);
    let (own_name, own_schema) = (tool.clone(), schema.clone());
    let handler: NativeHandler = Arc::new(move |arguments: &RawValue, ctx: Context| {
        let decoded = decode(kind, arguments);
        let (catalog, name, schema) = (catalog.clone(), own_name.clone(), own_schema.clone());
        Box::pin(async move {
            match decoded {
                Ok(args) => run(&catalog, args, ctx).await,
                Err(e) => ToolResult::error(format!(
                    "Invalid arguments for `{name}`: {e}. Its input schema: {schema}"
                )),
            }
        })
    });
    Arc::new(ToolEntry {
        name: tool,
        title: None,
        summary: description.lines().next().unwrap_or_default().to_owned(),
        description,
        tags: Vec::new(),
        input_schema: schema,
        output_schema: output_schema.map(Arc::new),
        bare_output_schema: None,
        annotations,
        meta: None,
        icons: Vec::new(),
        defer: Some(false),
        view: None,
        header_params: Vec::new(),
        task: TaskSupport::Forbidden,
        becomes_task_itself: false,
        // `call` runs the chosen tool with that tool's own timeout and scopes.
        timeout: None,
        scopes: Arc::from([]),
        // `call` runs a tool that may ask.
        reaches_client: true,
        // `call` runs a tool whose call goes through the layers itself.
        passes_through: matches!(kind, MetaTool::Call { .. }),
        hidden: false,
        handler: Handler::Native(handler),
        defined_at: DefinedAt::Runtime,
    })
}

fn meta_entries(catalog: &Arc<DeferredCatalog>) -> Vec<Arc<ToolEntry>> {
    let names = &catalog.config.names;
    // Every caller reads these definitions: they count and name only what every caller may
    // see (tools that need no scopes), so the tools some callers may not use stay unknown.
    let all_open = catalog.docs.iter().all(|doc| doc.scopes.is_empty());
    let tags = catalog.tags_of(|doc| catalog.docs[doc].scopes.is_empty());
    let count = if all_open { format!("{} ", catalog.docs.len()) } else { String::new() };
    let tag_text = if tags.is_empty() { String::new() } else { format!(" Tags: {}.", tags.join(", ")) };
    let mut tags_schema = json!({"type": "array", "items": {"type": "string"}, "description": "Only tools with one of these tags."});
    // With tools some callers may not see, their tags are valid filters too, but not named.
    if !tags.is_empty() && all_open {
        tags_schema["items"]["enum"] = json!(tags);
    }
    let skill_text = match &catalog.config.skills {
        Some(shelf) => format!(
            "\n\nIt also finds this server's {} skills (instructions for whole tasks, under `skills`): read one with `{READ_SKILL}` before doing its task.",
            shelf.skills.len()
        ),
        None => String::new(),
    };
    let search = meta_entry(
        &names.search,
        format!(
            "Search this server's {count}tools by what they do; returns names and one-line summaries, best first.{tag_text}\n\n\
             Then read the chosen tools' full definitions with `{}` and run one with `{}` (or `{}` for read-only tools). \
             An empty query lists the tools (page with `cursor`).{skill_text}",
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
                "searchedAs": {"type": "string", "description": "The query as searched, its misspelt words corrected."},
                "rankedBy": {"type": "string", "enum": ["words"], "description": "Present when this server ranks by meaning but could not for this search (still indexing, or its model failed): the tools were ranked by their words alone."},
                "hint": {"type": "string"},
                "skills": {"type": "array", "description": "Skills that match (first page only): read one by its `uri`.", "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "uri": {"type": "string"},
                        "description": {"type": "string"}
                    },
                    "required": ["name", "uri", "description"]
                }}
            },
            "required": ["tools", "total"]
        })),
        Annotations::new().read_only(true).idempotent(true).open_world(false).title("Search tools"),
        MetaTool::Search,
        catalog,
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
        catalog,
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
        catalog,
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
        catalog,
    );
    let mut meta_tools = vec![search, describe, call, call_read_only];
    if catalog.config.skills.is_some() {
        meta_tools.push(meta_entry(
            READ_SKILL,
            format!(
                "Read a skill of this server (found with `{}`) or one of its files, by URI (`skill://…`). \
                 Start with the skill's SKILL.md: its instructions, and the list of the skill's other files.",
                names.search
            ),
            json!({
                "type": "object",
                "properties": {
                    "uri": {"type": "string", "description": "The URI of a skill's SKILL.md, or of one of its files."}
                },
                "required": ["uri"],
                "additionalProperties": false
            }),
            None,
            Annotations::new().read_only(true).idempotent(true).open_world(false).title("Read a skill"),
            MetaTool::ReadSkill,
            catalog,
        ));
    }
    meta_tools
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
struct ReadSkillArgs {
    uri: String,
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

/// A meta-tool's decoded arguments.
enum MetaArgs {
    Search(SearchArgs),
    Describe(DescribeArgs),
    Call { read_only: bool, args: CallArgs },
    ReadSkill(ReadSkillArgs),
}

fn decode(kind: MetaTool, arguments: &RawValue) -> Result<MetaArgs, serde_json::Error> {
    Ok(match kind {
        MetaTool::Search => MetaArgs::Search(serde_json::from_str(arguments.get())?),
        MetaTool::Describe => MetaArgs::Describe(serde_json::from_str(arguments.get())?),
        MetaTool::Call { read_only } => {
            MetaArgs::Call { read_only, args: serde_json::from_str(arguments.get())? }
        }
        MetaTool::ReadSkill => MetaArgs::ReadSkill(serde_json::from_str(arguments.get())?),
    })
}

/// Runs a meta-tool.
async fn run(catalog: &Arc<DeferredCatalog>, args: MetaArgs, ctx: Context) -> ToolResult {
    // A ranker that runs a model takes milliseconds a query, and a search may wait for one
    // still embedding the catalog: off the async workers with it.
    let blocking = catalog.index.is_blocking() || catalog.index.meaning() == Meaning::Building;
    match args {
        MetaArgs::Search(a) if blocking => off_runtime(catalog.clone(), move |c| search(c, a, &ctx)).await,
        MetaArgs::Search(a) => search(catalog, a, &ctx),
        MetaArgs::Describe(a) if blocking => {
            off_runtime(catalog.clone(), move |c| describe(c, a, &ctx)).await
        }
        MetaArgs::Describe(a) => describe(catalog, a, &ctx),
        MetaArgs::Call { read_only, args } => call(catalog, read_only, args, ctx).await,
        MetaArgs::ReadSkill(args) => read_skill(catalog, &args.uri),
    }
}

/// Runs `f` over the catalog on a blocking thread, at most one per CPU at a time (a call
/// cancelled meanwhile lets its running search finish, still holding its place).
async fn off_runtime(
    catalog: Arc<DeferredCatalog>,
    f: impl FnOnce(&DeferredCatalog) -> ToolResult + Send + 'static,
) -> ToolResult {
    let Ok(place) = catalog.blocking.clone().acquire_owned().await else {
        return ToolResult::error("the search is unavailable");
    };
    let task = tokio::task::spawn_blocking(move || {
        let _place = place;
        f(&catalog)
    });
    task.await.unwrap_or_else(|e| ToolResult::error(format!("the search failed: {e}")))
}

fn structured(value: Value) -> ToolResult {
    ToolResult::structured(value).unwrap_or_else(|e| ToolResult::error(e.message().to_owned()))
}

fn search(catalog: &DeferredCatalog, args: SearchArgs, ctx: &Context) -> ToolResult {
    let max = catalog.config.max_query_bytes;
    if args.query.len() > max {
        return ToolResult::error(format!(
            "the query is {} bytes long; this server searches queries of at most {max} bytes: say what the task is in a few words",
            args.query.len()
        ));
    }
    let limit = args.limit.unwrap_or(catalog.config.default_limit).clamp(1, MAX_LIMIT);
    let offset = match args.cursor.as_deref().map(str::parse::<usize>) {
        None => 0,
        Some(Ok(offset)) => offset,
        Some(Err(_)) => {
            return ToolResult::error("invalid `cursor`: pass the `nextCursor` of a previous page");
        }
    };
    // A caller sees (and counts) only the tools it may call and the list filters keep.
    let visible = |doc: usize| catalog.visible(doc, ctx);
    let visible: Option<&dyn Fn(usize) -> bool> = if catalog.restricted(ctx) { Some(&visible) } else { None };
    // A ranker by meaning still embedding the catalog (a first start): wait for it, a while.
    let query_given = !args.query.trim().is_empty();
    let meaning = match catalog.index.meaning() {
        Meaning::Building if query_given => catalog.index.wait_for_meaning(catalog.config.meaning_wait),
        meaning => meaning,
    };
    let by_words = query_given && matches!(meaning, Meaning::Building | Meaning::Failed);
    let page = catalog.index.search_visible(&args.query, args.tags.as_deref(), limit, offset, visible);
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
    let no_match = (page.total == 0).then(|| {
        // Only the tags of tools this caller may see.
        let tags = catalog.tags_of(|doc| visible.is_none_or(|v| v(doc)));
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
    let by_words_hint = by_words.then_some(match meaning {
        Meaning::Building => "The tools are still being indexed by meaning, so this search ranked them by their words alone: search again in a few seconds to rank by meaning.",
        _ => "Ranking by meaning is unavailable on this server (its log says why), so this search ranked the tools by their words alone.",
    });
    let hint = match (no_match, by_words_hint) {
        (Some(no_match), Some(words)) => Some(format!("{no_match} {words}")),
        (no_match, words) => no_match.or(words.map(str::to_owned)),
    };
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Page<'a> {
        tools: Vec<Found<'a>>,
        total: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        next_cursor: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        searched_as: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        ranked_by: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        hint: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        skills: Vec<FoundSkill<'a>>,
    }
    let page = Page {
        tools,
        total: page.total,
        next_cursor: page.next_offset.map(|n| n.to_string()),
        searched_as: page.searched,
        ranked_by: by_words.then_some("words"),
        hint,
        skills: if offset == 0 && args.tags.is_none() {
            found_skills(catalog, &args.query)
        } else {
            Vec::new()
        },
    };
    // Serialized once; the same text is the structured content and the text block.
    match serde_json::value::to_raw_value(&page) {
        Ok(raw) => ToolResult::from_raw_structured(raw),
        Err(e) => ToolResult::error(e.to_string()),
    }
}

#[derive(Serialize)]
struct FoundSkill<'a> {
    name: &'a str,
    uri: &'a str,
    description: &'a str,
}

/// The skills `query` finds (an empty query lists them), best first.
fn found_skills<'a>(catalog: &'a DeferredCatalog, query: &str) -> Vec<FoundSkill<'a>> {
    let (Some(index), Some(shelf)) = (&catalog.skills, &catalog.config.skills) else { return Vec::new() };
    let page = index.search(query, None, MAX_SKILLS, 0);
    page.hits
        .iter()
        .map(|hit| {
            let (name, uri, description) = &shelf.skills[hit.doc];
            FoundSkill { name, uri, description }
        })
        .collect()
}

/// `read_skill`: a skill file's text.
fn read_skill(catalog: &DeferredCatalog, uri: &str) -> ToolResult {
    let Some(shelf) = &catalog.config.skills else { return ToolResult::error("this server has no skills") };
    match (shelf.read)(uri) {
        Ok(text) => ToolResult::new().text(text),
        Err(why) => ToolResult::error(why),
    }
}

fn definition(entry: &ToolEntry, era: Era) -> Value {
    let mut def =
        json!({"name": &*entry.name, "description": entry.description, "inputSchema": &*entry.input_schema});
    if let Some(title) = &entry.title {
        def["title"] = json!(title);
    }
    if let Some(output) = entry.output_schema_in(era) {
        def["outputSchema"] = output.clone();
    }
    if !entry.annotations.is_empty() {
        def["annotations"] = json!(entry.annotations);
    }
    def
}

fn describe(catalog: &DeferredCatalog, args: DescribeArgs, ctx: &Context) -> ToolResult {
    if args.names.is_empty() || args.names.len() > MAX_DESCRIBE {
        return ToolResult::error(format!("`names` takes 1 to {MAX_DESCRIBE} tool names"));
    }
    let mut tools = Vec::new();
    let mut unknown = Vec::new();
    for name in &args.names {
        match catalog.index.position(name).and_then(|doc| catalog.shown(doc, ctx)) {
            Some(definition) => tools.push(definition),
            None => unknown.push(json!({"name": name, "suggestions": suggest(catalog, name, ctx)})),
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
    let entry = match catalog.index.position(&args.name) {
        Some(doc) => Some(catalog.docs[doc].clone()),
        None => catalog.hidden.iter().find(|e| *e.name == *args.name).cloned(),
    };
    let Some(entry) = entry else {
        let suggestions = suggest(catalog, &args.name, &ctx);
        let mut text = format!("Unknown tool `{}`.", args.name);
        if !suggestions.is_empty() {
            let list: Vec<&str> = suggestions.iter().map(|s| &**s).collect();
            text.push_str(&format!(" Did you mean: {}?", list.join(", ")));
        }
        text.push_str(&format!(" Find tools with `{}`.", names.search));
        return ToolResult::error(text);
    };
    // The step-up challenge, as for a direct call of the tool.
    if !permits(ctx.auth(), &entry.scopes) {
        return ToolResult::insufficient_scope(&entry.scopes);
    }
    if read_only && entry.annotations.read_only_hint != Some(true) {
        return ToolResult::error(format!(
            "`{}` is not a read-only tool; run it with `{}`.",
            entry.name, names.call
        ));
    }
    let arguments = args.arguments.unwrap_or_else(|| RawValue::from_string("{}".into()).expect("valid JSON"));
    // Through the server's layers, as a direct call of the tool would go.
    let (name, schema, hidden) = (entry.name.clone(), entry.input_schema.clone(), entry.hidden);
    let result = match catalog.config.pipeline.layered(&entry) {
        None => call_entry(&entry, &arguments, ctx).await,
        Some(pipeline) => pipeline.call(entry, arguments, ctx).await,
    };
    if result.is_error() && !hidden {
        // Give the model what it needs to fix the call in one retry.
        return result.text(format!("The input schema of `{name}` is: {schema}"));
    }
    result
}

/// Names like `name` the caller may see, for "did you mean" (none for a name longer than any
/// tool name can be).
fn suggest(catalog: &DeferredCatalog, name: &str, ctx: &Context) -> Vec<Arc<str>> {
    if name.len() > 128 {
        return Vec::new();
    }
    let visible = |n: &Arc<str>| catalog.index.position(n).is_some_and(|doc| catalog.visible(doc, ctx));
    catalog.index.suggest(name, 6).into_iter().filter(visible).take(3).collect()
}

/// The `_meta` entry of a pinned tool: `anthropic/alwaysLoad: true`.
fn always_load() -> Map<String, Value> {
    Map::from_iter([("anthropic/alwaysLoad".to_owned(), Value::Bool(true))])
}
