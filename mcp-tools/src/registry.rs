//! The tool catalog: every `#[tool]` of the binary plus runtime [`Tool`]s, checked, sorted by
//! name and indexed once. `tools/list` pages are serialized here, once per catalog.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::__private::{StaticHandler, ToolRegistration};
use crate::context::StateMap;
use crate::deferred::DeferredTools;
use crate::deferred::meta::DeferredCatalog;
use crate::schema::{self, OutputPlan};
use crate::tool::{DynHandler, check_name};
use crate::{Annotations, Icon, Tool};

/// Where a tool was defined, for start-up errors.
#[derive(Clone, Debug)]
pub(crate) enum Origin {
    Attribute { file: &'static str, line: u32 },
    Runtime,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Attribute { file, line } => write!(f, "#[tool] at {file}:{line}"),
            Origin::Runtime => f.write_str("a runtime Tool"),
        }
    }
}

pub(crate) enum Handler {
    /// A meta-tool of deferred mode.
    Meta(crate::deferred::meta::MetaTool),
    Static {
        handler: StaticHandler,
        plan: OutputPlan,
        /// Compiled on first use: only needed to explain invalid arguments.
        validator: OnceLock<Option<jsonschema::Validator>>,
        /// The schema as derived (nullable options kept), for that validator.
        raw_input_schema: Value,
    },
    Dynamic {
        handler: DynHandler,
        input_validator: Option<jsonschema::Validator>,
        output_validator: Option<jsonschema::Validator>,
    },
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
    pub origin: Origin,
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
            meta: self.meta.as_ref().map(std::borrow::Cow::Borrowed),
        }
    }

    /// The validator used to explain invalid arguments of a derived tool.
    pub fn explaining_validator(&self) -> Option<&jsonschema::Validator> {
        match &self.handler {
            Handler::Static { validator, raw_input_schema, .. } => {
                validator.get_or_init(|| jsonschema::validator_for(raw_input_schema).ok()).as_ref()
            }
            Handler::Dynamic { input_validator, .. } => input_validator.as_ref(),
            Handler::Meta(_) => None,
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
    meta: Option<std::borrow::Cow<'a, Map<String, Value>>>,
}

/// The catalog. Immutable: a change builds a new one.
pub(crate) struct Registry {
    tools: Vec<Arc<ToolEntry>>,
    by_name: HashMap<Arc<str>, Arc<ToolEntry>>,
    /// `tools/list` results, one per page, serialized once.
    pages: Vec<Box<RawValue>>,
    /// The search catalog, when the server defers its tools.
    deferred: Option<DeferredCatalog>,
}

impl Registry {
    /// Builds every tool's entry. Every problem is collected; any problem fails the build.
    pub fn build_entries(
        statics: &[&'static ToolRegistration],
        runtime: &[Tool],
        state: &StateMap,
    ) -> Result<Vec<Arc<ToolEntry>>, Vec<String>> {
        let mut problems = Vec::new();
        let mut entries: Vec<ToolEntry> = Vec::with_capacity(statics.len() + runtime.len());

        for reg in statics {
            match static_entry(reg, state) {
                Ok(entry) => entries.push(entry),
                Err(mut p) => problems.append(&mut p),
            }
        }
        // Two #[tool]s with one name are a mistake; report both places.
        let mut seen: HashMap<&str, &Origin> = HashMap::new();
        for entry in &entries {
            if let Some(first) = seen.insert(&entry.name, &entry.origin) {
                problems.push(format!(
                    "two tools are named `{}`: {first} and {}; rename one with #[tool(name = \"...\")]",
                    entry.name, entry.origin
                ));
            }
        }
        // A runtime tool replaces any earlier tool of the same name (hot-reload semantics).
        for tool in runtime {
            match runtime_entry(tool) {
                Ok(entry) => {
                    entries.retain(|e| e.name != entry.name);
                    entries.push(entry);
                }
                Err(mut p) => problems.append(&mut p),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(entries.into_iter().map(Arc::new).collect())
    }

    /// The catalog of these entries: sorted by name, indexed, its pages serialized. Deferred,
    /// `tools/list` shows the meta-tools and the pinned tools, and every tool is searchable.
    pub fn from_entries(
        mut tools: Vec<Arc<ToolEntry>>,
        page_size: usize,
        deferral: Option<&Arc<DeferredTools>>,
    ) -> Registry {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let (listed, deferred) = match deferral {
            None => (tools.iter().map(|t| (t.clone(), false)).collect::<Vec<_>>(), None),
            Some(config) => {
                let plan = crate::deferred::meta::plan(&tools, config);
                let mut listed: Vec<(Arc<ToolEntry>, bool)> =
                    plan.meta_tools.iter().map(|t| (t.clone(), false)).collect();
                listed.extend(plan.listed);
                tools.extend(plan.meta_tools);
                (listed, Some(plan.catalog))
            }
        };
        let by_name = tools.iter().map(|t| (t.name.clone(), t.clone())).collect();
        let pages = paginate(&listed, page_size.max(1));
        Registry { tools, by_name, pages, deferred }
    }

    /// The search catalog, when the server defers its tools.
    pub fn deferred(&self) -> Option<&DeferredCatalog> {
        self.deferred.as_ref()
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

/// `tools/list` pages of these tools; `true` marks a tool `anthropic/alwaysLoad`.
fn paginate(tools: &[(Arc<ToolEntry>, bool)], page_size: usize) -> Vec<Box<RawValue>> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Page<'a> {
        tools: Vec<ToolDefinition<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        next_cursor: Option<String>,
    }
    let chunks: Vec<&[(Arc<ToolEntry>, bool)]> =
        if tools.is_empty() { vec![&[]] } else { tools.chunks(page_size).collect() };
    let count = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let page = Page {
                tools: chunk
                    .iter()
                    .map(|(t, always_load)| {
                        let mut definition = t.definition();
                        if *always_load {
                            let meta = crate::deferred::meta::always_load(t.meta.as_ref());
                            definition.meta = Some(std::borrow::Cow::Owned(meta));
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

fn static_entry(reg: &'static ToolRegistration, state: &StateMap) -> Result<ToolEntry, Vec<String>> {
    let origin = Origin::Attribute { file: reg.file, line: reg.line };
    let mut problems = Vec::new();
    if let Err(p) = check_name(reg.name) {
        problems.push(format!("{origin}: {p}"));
    }
    for requirement in reg.required_state {
        if let Some((id, type_name)) = requirement()
            && !state.contains(id)
        {
            problems.push(format!(
                "tool `{}` ({origin}) takes `State<{type_name}>`, but no such state was registered; \
                 add `.state(...)` with a `{type_name}` to the server builder",
                reg.name
            ));
        }
    }

    let mut generator = schema::input_generator();
    let mut raw_input = (reg.input_schema)(&mut generator).to_value();
    attach_definitions(&mut raw_input, &mut generator);
    let input_schema = match schema::advertised_input(raw_input.clone()) {
        Ok(s) => s,
        Err(p) => {
            problems.push(format!("tool `{}` ({origin}): {p}", reg.name));
            Value::Null
        }
    };
    let mut generator = schema::output_generator();
    let (plan, output_schema) = schema::plan_output((reg.output_schema)(&mut generator));
    if !problems.is_empty() {
        return Err(problems);
    }
    if let Some(obj) = raw_input.as_object_mut() {
        obj.remove("$schema");
    }

    let a = reg.annotations;
    let annotations = Annotations {
        title: a.title.map(str::to_owned),
        read_only_hint: a.read_only,
        destructive_hint: a.destructive,
        idempotent_hint: a.idempotent,
        open_world_hint: a.open_world,
    };
    let meta = reg.meta.map(|m| match m() {
        Value::Object(map) => map,
        other => Map::from_iter([("value".to_owned(), other)]),
    });
    let meta = match &reg.widget {
        Some(widget) => Some(crate::apps::merge_meta(meta, widget.view().tool_meta())),
        None => meta,
    };
    let view = crate::apps::linked_view(meta.as_ref());
    Ok(ToolEntry {
        name: reg.name.into(),
        title: reg.title.map(str::to_owned),
        description: reg.description.to_owned(),
        summary: reg.summary.map_or_else(|| first_line(reg.description), str::to_owned),
        tags: reg.tags.iter().map(|t| (*t).to_owned()).collect(),
        input_schema: Arc::new(input_schema),
        output_schema: output_schema.map(Arc::new),
        annotations,
        meta,
        icons: reg.icons.iter().map(|src| Icon::new(*src)).collect(),
        defer: reg.defer,
        view,
        handler: Handler::Static {
            handler: reg.handler,
            plan,
            validator: OnceLock::new(),
            raw_input_schema: raw_input,
        },
        origin,
    })
}

/// Recursive types leave definitions in the generator; keep them with the schema.
fn attach_definitions(schema: &mut Value, generator: &mut schemars::SchemaGenerator) {
    let defs = generator.take_definitions(true);
    if let (false, Some(obj)) = (defs.is_empty(), schema.as_object_mut()) {
        obj.entry("$defs").or_insert(Value::Object(defs));
    }
}

pub(crate) fn runtime_entry(tool: &Tool) -> Result<ToolEntry, Vec<String>> {
    let mut problems = Vec::new();
    let name = &tool.name;
    if let Err(p) = check_name(name) {
        problems.push(format!("runtime tool: {p}"));
    }
    if tool.description.trim().is_empty() {
        problems.push(format!("runtime tool `{name}` has no description; clients require one"));
    }
    if let Some(why) = tool.annotations.contradiction() {
        problems.push(format!("runtime tool `{name}`: {why}"));
    }
    let is_object = |s: &Value| s.get("type").and_then(Value::as_str) == Some("object");
    if !is_object(&tool.input_schema) {
        problems.push(format!(
            "runtime tool `{name}`: its input schema must have \"type\": \"object\" at the root"
        ));
    }
    let input_validator = if tool.validate_arguments {
        match jsonschema::validator_for(&tool.input_schema) {
            Ok(v) => Some(v),
            Err(e) => {
                problems.push(format!("runtime tool `{name}`: its input schema is invalid: {e}"));
                None
            }
        }
    } else {
        None
    };
    let output_validator = match &tool.output_schema {
        None => None,
        Some(schema) if !is_object(schema) => {
            problems.push(format!(
                "runtime tool `{name}`: its output schema must have \"type\": \"object\" at the root"
            ));
            None
        }
        Some(schema) => match jsonschema::validator_for(schema) {
            Ok(v) => Some(v),
            Err(e) => {
                problems.push(format!("runtime tool `{name}`: its output schema is invalid: {e}"));
                None
            }
        },
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(ToolEntry {
        name: name.as_str().into(),
        title: tool.title.clone(),
        description: tool.description.clone(),
        summary: tool.summary.clone().unwrap_or_else(|| first_line(&tool.description)),
        tags: tool.tags.clone(),
        input_schema: Arc::new(tool.input_schema.clone()),
        output_schema: tool.output_schema.clone().map(Arc::new),
        annotations: tool.annotations.clone(),
        meta: tool.meta.clone(),
        icons: tool.icons.clone(),
        defer: tool.defer,
        view: crate::apps::linked_view(tool.meta.as_ref()),
        handler: Handler::Dynamic { handler: tool.handler.clone(), input_validator, output_validator },
        origin: Origin::Runtime,
    })
}

/// The first line of a description, cut at 160 characters.
fn first_line(description: &str) -> String {
    let line = description.trim().lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}
