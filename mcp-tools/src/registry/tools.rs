//! The served tools: every tool ready to call, found by name in O(1), and the `tools/list`
//! pages of the tools the caller chose to list, serialized once. Immutable: a change builds a new
//! [`Registry`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::__private::StaticHandler;
use crate::context::Context;
use crate::model::result::{OutputPlan, ToolResult};
use crate::model::tool::{Annotations, DynHandler, Icon};

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
        /// Compiled on first use: only needed to explain invalid arguments.
        validator: OnceLock<Option<jsonschema::Validator>>,
        /// The schema as derived (nullable options kept), for that validator.
        raw_input_schema: Value,
    },
    /// A runtime [`Tool`](crate::Tool): arguments checked against its JSON schema.
    Dynamic {
        handler: DynHandler,
        input_validator: Option<jsonschema::Validator>,
        output_validator: Option<jsonschema::Validator>,
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
    pub output_schema: Option<Arc<Value>>,
    pub annotations: Annotations,
    pub meta: Option<Map<String, Value>>,
    pub icons: Vec<Icon>,
    /// `Some(false)`: stays listed when the catalog is deferred.
    pub defer: Option<bool>,
    /// The app view the tool links to (`_meta.ui.resourceUri`), if any.
    pub view: Option<String>,
    pub handler: Handler,
    pub defined_at: DefinedAt,
}

impl ToolEntry {
    /// The tool as `tools/list` shows it.
    pub fn definition(&self) -> ToolDefinition<'_> {
        ToolDefinition {
            name: &self.name,
            title: self.title.as_deref(),
            description: &self.description,
            input_schema: &self.input_schema,
            output_schema: self.output_schema.as_deref(),
            annotations: (!self.annotations.is_empty()).then_some(&self.annotations),
            icons: (!self.icons.is_empty()).then_some(&self.icons),
            meta: self.meta.as_ref().map(Cow::Borrowed),
        }
    }

    /// The validator used to explain invalid arguments of a derived tool.
    pub fn explaining_validator(&self) -> Option<&jsonschema::Validator> {
        match &self.handler {
            Handler::Static { validator, raw_input_schema, .. } => {
                validator.get_or_init(|| jsonschema::validator_for(raw_input_schema).ok()).as_ref()
            }
            Handler::Dynamic { input_validator, .. } => input_validator.as_ref(),
            Handler::Native(_) => None,
        }
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

/// The served tools. Immutable: a change builds a new one.
pub(crate) struct Registry {
    tools: Vec<Arc<ToolEntry>>,
    by_name: HashMap<Arc<str>, Arc<ToolEntry>>,
    /// `tools/list` results, one per page, serialized once.
    pages: Vec<Box<RawValue>>,
}

impl Registry {
    /// The registry of `tools` (callable by name, sorted by name) whose `tools/list` shows
    /// `listed`, in that order, `page_size` a page.
    pub fn new(mut tools: Vec<Arc<ToolEntry>>, listed: &[Listed], page_size: usize) -> Registry {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name = tools.iter().map(|t| (t.name.clone(), t.clone())).collect();
        let pages = paginate(listed, page_size.max(1));
        Registry { tools, by_name, pages }
    }

    /// The registry of `tools` listing every one of them.
    pub fn listing_all(mut tools: Vec<Arc<ToolEntry>>, page_size: usize) -> Registry {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let listed: Vec<Listed> = tools.iter().cloned().map(Listed::plain).collect();
        Registry::new(tools, &listed, page_size)
    }

    pub fn get(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.by_name.get(name)
    }

    pub fn tools(&self) -> &[Arc<ToolEntry>] {
        &self.tools
    }

    /// The serialized `tools/list` result for a cursor, or `None` for a cursor we never issued.
    pub fn page(&self, cursor: Option<&str>) -> Option<&RawValue> {
        let index = match cursor {
            None => 0,
            Some(c) => c.parse::<usize>().ok().filter(|&i| i > 0 && i < self.pages.len())?,
        };
        self.pages.get(index).map(|b| &**b)
    }
}

/// `tools/list` pages of these tools.
fn paginate(tools: &[Listed], page_size: usize) -> Vec<Box<RawValue>> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Page<'a> {
        tools: Vec<ToolDefinition<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        next_cursor: Option<String>,
    }
    let chunks: Vec<&[Listed]> = if tools.is_empty() { vec![&[]] } else { tools.chunks(page_size).collect() };
    let count = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let page = Page {
                tools: chunk
                    .iter()
                    .map(|listed| {
                        let mut definition = listed.entry.definition();
                        if let Some(extra) = &listed.extra_meta {
                            let mut meta = listed.entry.meta.clone().unwrap_or_default();
                            meta.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                            definition.meta = Some(Cow::Owned(meta));
                        }
                        definition
                    })
                    .collect(),
                next_cursor: (i + 1 < count).then(|| (i + 1).to_string()),
            };
            serde_json::value::to_raw_value(&page).expect("a tool list serializes")
        })
        .collect()
}
