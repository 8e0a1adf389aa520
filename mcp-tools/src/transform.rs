//! Tool transformation: a tool served under another name, title, description, tags or
//! annotations, with arguments renamed, described again, given defaults, or hidden behind a
//! fixed value. It works on any tool: a `#[tool]` function, a runtime [`Tool`](crate::Tool), an
//! OpenAPI operation's, or a mounted upstream's ([`ServerBuilder::transform`]).
//!
//! The transformed tool's input schema is the original's with those changes: still a valid JSON
//! Schema, checked when the server is built. Every call's arguments are validated against it,
//! then mapped back (renamed arguments under their old names, hidden ones given their values,
//! missing ones their new defaults) and the original tool runs with them, with its own checks.
//!
//! ```
//! use mcp_tools::transform::{ArgTransform, ToolTransform};
//! use mcp_tools::Annotations;
//!
//! // The upstream's `search_issues(repo, query, per_page)` for one repository only:
//! let issues = ToolTransform::new()
//!     .rename("find_bug")
//!     .description("Search the bugs of our project.")
//!     .argument("repo", ArgTransform::new().hide_with("acme/rocket"))
//!     .argument("query", ArgTransform::new().rename("text").description("Words the bug mentions"))
//!     .argument("per_page", ArgTransform::new().default(10))
//!     .tags(["bugs"])
//!     .annotations(Annotations::new().read_only(true));
//! ```
//!
//! [`ServerBuilder::transform`]: crate::ServerBuilder::transform

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::dispatch::call::call_entry;
use crate::model::result::ToolResult;
use crate::model::tool::{Annotations, check_name};
use crate::registry::build::{first_line, header_params};
use crate::registry::tools::{Handler, NativeHandler, ToolEntry};

/// How one tool is changed. Everything left unset stays as it was.
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct ToolTransform {
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    tags: Vec<String>,
    annotations: Option<Annotations>,
    meta: Vec<(String, Value)>,
    hidden: bool,
    arguments: BTreeMap<String, ArgTransform>,
}

impl ToolTransform {
    /// No change yet.
    pub fn new() -> Self {
        ToolTransform::default()
    }
    /// Serves the tool under `name` (a valid tool name; it must not clash with another).
    pub fn rename(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Replaces the description (and so the one-line summary search shows).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Adds tags (groups for deferred search).
    pub fn tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.tags.extend(tags.into_iter().map(Into::into));
        self
    }
    /// Replaces the behaviour hints.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
    /// Adds (or replaces) a `_meta` entry of the definition.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta.push((key.into(), value.into()));
        self
    }
    /// Leaves the tool out: not listed, not searched, not callable.
    pub fn hide(mut self) -> Self {
        self.hidden = true;
        self
    }
    /// Changes the argument the original tool calls `name`.
    pub fn argument(mut self, name: impl Into<String>, transform: ArgTransform) -> Self {
        self.arguments.insert(name.into(), transform);
        self
    }
}

/// How one argument is changed.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct ArgTransform {
    name: Option<String>,
    description: Option<String>,
    default: Option<Value>,
    hidden: Option<Option<Value>>,
}

impl ArgTransform {
    /// No change yet.
    pub fn new() -> Self {
        <ArgTransform as Default>::default()
    }
    /// The callers' name for it.
    pub fn rename(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Replaces its description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Its value when a call leaves it out (it becomes optional; the schema shows the default).
    pub fn default(mut self, value: impl Into<Value>) -> Self {
        self.default = Some(value.into());
        self
    }
    /// Removes it from the schema; every call gets `value` for it (whatever the caller sent).
    pub fn hide_with(mut self, value: impl Into<Value>) -> Self {
        self.hidden = Some(Some(value.into()));
        self
    }
    /// Removes it from the schema; calls leave it out (it must be optional).
    pub fn hide(mut self) -> Self {
        self.hidden = Some(None);
        self
    }
}

/// What a call's arguments become before the original tool gets them.
#[derive(Debug)]
struct Mapping {
    /// (the caller's name, the original's).
    renamed: Vec<(String, String)>,
    /// Hidden arguments with their fixed values (by the original's name).
    fixed: Vec<(String, Value)>,
    /// Hidden arguments without a value: removed if sent.
    dropped: Vec<String>,
    /// Defaults (by the caller's name).
    defaults: Vec<(String, Value)>,
}

impl Mapping {
    fn map(&self, arguments: &mut Map<String, Value>) {
        for (name, value) in &self.defaults {
            if !arguments.contains_key(name) {
                arguments.insert(name.clone(), value.clone());
            }
        }
        let moved: Vec<(String, Option<Value>)> =
            self.renamed.iter().map(|(new, old)| (old.clone(), arguments.remove(new))).collect();
        // Whatever a caller sent under a hidden argument's name is not the original's.
        for original in self.fixed.iter().map(|(name, _)| name).chain(&self.dropped) {
            arguments.remove(original);
        }
        for (old, value) in moved {
            arguments.remove(&old);
            if let Some(value) = value {
                arguments.insert(old, value);
            }
        }
        for (original, value) in &self.fixed {
            arguments.insert(original.clone(), value.clone());
        }
    }
}

/// The tool `entry` transformed by `transform`: `Ok(None)` when it is hidden, `Err` with every
/// problem when the transformation does not fit the tool.
pub(crate) fn apply(
    entry: Arc<ToolEntry>,
    transform: &ToolTransform,
) -> Result<Option<Arc<ToolEntry>>, Vec<String>> {
    if transform.hidden {
        return Ok(None);
    }
    let tool = entry.name.to_string();
    let mut problems = Vec::new();
    let name = transform.name.clone().unwrap_or_else(|| tool.clone());
    if let Err(p) = check_name(&name) {
        problems.push(format!("transform of `{tool}`: {p}"));
    }
    let (schema, mapping) = match transformed_schema(&entry.input_schema, &transform.arguments) {
        Ok(done) => done,
        Err(mut more) => {
            more.iter_mut().for_each(|p| *p = format!("transform of `{tool}`: {p}"));
            problems.extend(more);
            return Err(problems);
        }
    };
    let validator = match jsonschema::validator_for(&schema) {
        Ok(validator) => validator,
        Err(e) => {
            problems.push(format!("transform of `{tool}`: the new input schema is invalid: {e}"));
            return Err(problems);
        }
    };
    let header_params = header_params(&schema).unwrap_or_else(|p| {
        problems.push(format!("transform of `{tool}`: {p}"));
        Vec::new()
    });
    let annotations = transform.annotations.clone().unwrap_or_else(|| entry.annotations.clone());
    if let Some(why) = annotations.contradiction() {
        problems.push(format!("transform of `{tool}`: {why}"));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let schema = Arc::new(schema);
    let original = entry.clone();
    let (shown_name, shown_schema) = (name.clone(), schema.clone());
    let handler: NativeHandler = Arc::new(move |arguments, ctx| {
        let mapped =
            serde_json::from_str::<Value>(arguments.get()).map_err(|e| e.to_string()).and_then(|value| {
                let problems: Vec<String> =
                    validator.iter_errors(&value).map(|e| format!("{}: {e}", e.instance_path())).collect();
                if !problems.is_empty() {
                    return Err(problems.join("; "));
                }
                let Value::Object(mut fields) = value else {
                    return Err("the arguments must be a JSON object".into());
                };
                mapping.map(&mut fields);
                serde_json::value::to_raw_value(&Value::Object(fields)).map_err(|e| e.to_string())
            });
        let (original, name, schema) = (original.clone(), shown_name.clone(), shown_schema.clone());
        Box::pin(async move {
            match mapped {
                Ok(arguments) => call_entry(&original, &arguments, ctx).await,
                Err(why) => ToolResult::error(format!(
                    "Invalid arguments for tool `{name}`: {why}. Its input schema: {schema}"
                )),
            }
        })
    });
    let description = transform.description.clone().unwrap_or_else(|| entry.description.clone());
    let mut tags = entry.tags.clone();
    tags.extend(transform.tags.iter().filter(|t| !entry.tags.contains(t)).cloned());
    let mut meta = entry.meta.clone();
    for (key, value) in &transform.meta {
        meta.get_or_insert_with(Map::new).insert(key.clone(), value.clone());
    }
    Ok(Some(Arc::new(ToolEntry {
        name: name.as_str().into(),
        title: transform.title.clone().or_else(|| entry.title.clone()),
        summary: if transform.description.is_some() {
            first_line(&description)
        } else {
            entry.summary.clone()
        },
        description,
        tags,
        input_schema: schema,
        output_schema: entry.output_schema.clone(),
        bare_output_schema: entry.bare_output_schema.clone(),
        annotations,
        meta,
        icons: entry.icons.clone(),
        defer: entry.defer,
        view: entry.view.clone(),
        header_params,
        task: entry.task,
        becomes_task_itself: entry.becomes_task_itself,
        // The original's timeout applies when it runs.
        timeout: None,
        scopes: entry.scopes.clone(),
        reaches_client: entry.reaches_client,
        passes_through: false,
        hidden: entry.hidden,
        handler: Handler::Native(handler),
        defined_at: entry.defined_at.clone(),
    })))
}

/// The input schema with the arguments' changes, and how a call's arguments map back.
fn transformed_schema(
    schema: &Value,
    arguments: &BTreeMap<String, ArgTransform>,
) -> Result<(Value, Mapping), Vec<String>> {
    let mut schema = schema.clone();
    let mut problems = Vec::new();
    let mut mapping =
        Mapping { renamed: Vec::new(), fixed: Vec::new(), dropped: Vec::new(), defaults: Vec::new() };
    if arguments.is_empty() {
        return Ok((schema, mapping));
    }
    let mut properties = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let original_names: Vec<String> = properties.keys().cloned().collect();
    let mut shown_properties = Vec::new();
    for (name, change) in arguments {
        let Some(mut property) = properties.remove(name) else {
            let known = if original_names.is_empty() { "none".to_owned() } else { original_names.join(", ") };
            problems.push(format!("it has no argument `{name}` (its arguments: {known})"));
            continue;
        };
        let was_required = required.contains(name);
        required.retain(|r| r != name);
        match &change.hidden {
            Some(Some(value)) => {
                mapping.fixed.push((name.clone(), value.clone()));
                continue;
            }
            Some(None) if was_required => {
                problems.push(format!(
                    "argument `{name}` is required: hide it with a value (`ArgTransform::hide_with`)"
                ));
                continue;
            }
            Some(None) => {
                mapping.dropped.push(name.clone());
                continue;
            }
            None => {}
        }
        let shown = change.name.clone().unwrap_or_else(|| name.clone());
        if shown != *name {
            let moves_away =
                |other: &String| arguments.get(other).is_some_and(|t| t.hidden.is_some() || t.name.is_some());
            if original_names.contains(&shown) && !moves_away(&shown) {
                problems.push(format!(
                    "argument `{name}` cannot be renamed `{shown}`: the tool has an argument `{shown}`"
                ));
                continue;
            }
            mapping.renamed.push((shown.clone(), name.clone()));
        }
        if let (Some(description), Some(fields)) = (&change.description, property.as_object_mut()) {
            fields.insert("description".into(), json!(description));
        }
        match &change.default {
            Some(value) => {
                if let Some(fields) = property.as_object_mut() {
                    fields.insert("default".into(), value.clone());
                }
                mapping.defaults.push((shown.clone(), value.clone()));
            }
            None if was_required => required.push(shown.clone()),
            None => {}
        }
        shown_properties.push((shown, property));
    }
    // Inserted once every changed argument is out, so two may swap names.
    for (shown, property) in shown_properties {
        if properties.contains_key(&shown) {
            problems.push(format!("two arguments would be named `{shown}`"));
        } else {
            properties.insert(shown, property);
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    if let Some(fields) = schema.as_object_mut() {
        fields.insert("properties".into(), Value::Object(properties));
        if required.is_empty() {
            fields.remove("required");
        } else {
            fields.insert("required".into(), json!(required));
        }
    }
    Ok((schema, mapping))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "repo": {"type": "string"},
                "query": {"type": "string", "description": "what to find"},
                "per_page": {"type": "integer"},
                "verbose": {"type": "boolean"}
            },
            "required": ["repo", "query"]
        })
    }

    #[test]
    fn arguments_are_renamed_hidden_and_defaulted_in_the_schema_and_back() {
        let changes = BTreeMap::from([
            ("repo".to_owned(), ArgTransform::new().hide_with("acme/rocket")),
            ("query".to_owned(), ArgTransform::new().rename("text").description("words")),
            ("per_page".to_owned(), ArgTransform::new().default(10)),
            ("verbose".to_owned(), ArgTransform::new().hide()),
        ]);
        let (schema, mapping) = transformed_schema(&schema(), &changes).unwrap();
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "words"},
                    "per_page": {"type": "integer", "default": 10}
                },
                "required": ["text"]
            })
        );
        let mut arguments =
            json!({"text": "boom", "repo": "evil/other", "verbose": true}).as_object().cloned().unwrap();
        mapping.map(&mut arguments);
        assert_eq!(Value::Object(arguments), json!({"query": "boom", "repo": "acme/rocket", "per_page": 10}));
    }

    #[test]
    fn transformations_that_do_not_fit_are_explained() {
        let changes = BTreeMap::from([
            ("nope".to_owned(), ArgTransform::new().rename("x")),
            ("query".to_owned(), ArgTransform::new().hide()),
            ("per_page".to_owned(), ArgTransform::new().rename("verbose")),
        ]);
        let problems = transformed_schema(&schema(), &changes).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(
            problems[0].contains("no argument `nope` (its arguments: repo, query, per_page, verbose)"),
            "{problems:?}"
        );
        assert!(problems[1].contains("cannot be renamed `verbose`"), "{problems:?}");
        assert!(problems[2].contains("`query` is required: hide it with a value"), "{problems:?}");
    }

    #[test]
    fn two_arguments_may_swap_names() {
        let changes = BTreeMap::from([
            ("query".to_owned(), ArgTransform::new().rename("repo")),
            ("repo".to_owned(), ArgTransform::new().rename("query")),
        ]);
        let (schema, mapping) = transformed_schema(&schema(), &changes).unwrap();
        assert_eq!(schema["properties"]["repo"]["description"], "what to find");
        let mut arguments = json!({"repo": "q", "query": "r"}).as_object().cloned().unwrap();
        mapping.map(&mut arguments);
        assert_eq!(Value::Object(arguments), json!({"query": "q", "repo": "r"}));
    }
}
