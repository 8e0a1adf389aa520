//! Tool entries from their two sources, `#[tool]` registrations and runtime [`Tool`]s: names
//! checked, schemas shaped by the schema policy once, validators compiled, state checked.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use super::tools::{DefinedAt, Handler, HeaderParam, ToolEntry};
use crate::__private::ToolRegistration;
use crate::context::StateMap;
use crate::model::apps::{linked_view, merge_meta};
use crate::model::schema;
use crate::model::tool::{Annotations, Icon, Tool, check_name};
use crate::registry::explain::Checks;

/// Builds every tool's entry. Every problem is collected; any problem fails the build.
pub(crate) fn build_entries(
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
    let mut seen: HashMap<&str, &DefinedAt> = HashMap::new();
    for entry in &entries {
        if let Some(first) = seen.insert(&entry.name, &entry.defined_at) {
            problems.push(format!(
                "two tools are named `{}`: {first} and {}; rename one with #[tool(name = \"...\")]",
                entry.name, entry.defined_at
            ));
        }
    }
    // A runtime tool replaces any earlier tool of the same name (hot-reload semantics): the
    // last runtime tool of each name stays, after the `#[tool]`s it does not replace.
    let last: HashMap<&str, usize> = runtime.iter().enumerate().map(|(i, t)| (t.name(), i)).collect();
    entries.retain(|e| !last.contains_key(&*e.name));
    for (i, tool) in runtime.iter().enumerate() {
        if last[tool.name()] != i {
            continue;
        }
        match runtime_entry(tool) {
            Ok(entry) => entries.push(entry),
            Err(mut p) => problems.append(&mut p),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(entries.into_iter().map(Arc::new).collect())
}

fn static_entry(reg: &'static ToolRegistration, state: &StateMap) -> Result<ToolEntry, Vec<String>> {
    let origin = DefinedAt::Attribute { file: reg.file, line: reg.line };
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
                 add `.state(...)` with a `{type_name}` to the server builder (with `mcp_tools::main!()`, \
                 write `fn main() -> ExitCode {{ Server::builder().state(...).run() }}` instead)",
                reg.name
            ));
        }
    }

    let mut generator = schema::input_generator();
    let mut raw_input = (reg.input_schema)(&mut generator).to_value();
    attach_definitions(&mut raw_input, &mut generator);
    // Whether a bound is a constraint or an integer type's own range, the derived schema's
    // `format` says (the advertised one drops it).
    let constrained = schema::has_constraints(&raw_input);
    let input_schema = match schema::advertised_input(raw_input) {
        Ok(s) => s,
        Err(p) => {
            problems.push(format!("tool `{}` ({origin}): {p}", reg.name));
            Value::Null
        }
    };
    let mut generator = schema::output_generator();
    let output = schema::plan_output_by_era((reg.output_schema)(&mut generator));
    if !problems.is_empty() {
        return Err(problems);
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
        Some(widget) => Some(merge_meta(meta, widget.view().tool_meta())),
        None => meta,
    };
    let view = linked_view(meta.as_ref());
    let header_params =
        header_params(&input_schema).map_err(|p| vec![format!("tool `{}` ({origin}): {p}", reg.name)])?;
    // Constraints decoding does not check are validated on every call: the validator is needed
    // now, and a schema it cannot compile is a start-up error.
    let checks = Checks::of(&input_schema, constrained);
    let validator = OnceLock::new();
    if checks.constrained {
        let compiled = jsonschema::validator_for(&input_schema).map_err(|e| {
            vec![format!("tool `{}` ({origin}): its input schema does not compile: {e}", reg.name)]
        })?;
        let _ = validator.set(Some(compiled));
    }
    Ok(ToolEntry {
        name: reg.name.into(),
        title: reg.title.map(str::to_owned),
        description: reg.description.to_owned(),
        summary: reg.summary.map_or_else(|| first_line(reg.description), str::to_owned),
        tags: reg.tags.iter().map(|t| (*t).to_owned()).collect(),
        input_schema: Arc::new(input_schema),
        output_schema: output.schema.map(Arc::new),
        bare_output_schema: output.bare.map(Arc::new),
        annotations,
        meta,
        icons: reg.icons.iter().map(|src| Icon::new(*src)).collect(),
        defer: reg.defer,
        view,
        header_params,
        task: reg.task,
        becomes_task_itself: false,
        timeout: reg.timeout,
        scopes: reg.scopes.iter().map(|s| (*s).to_owned()).collect(),
        reaches_client: (reg.reaches_client)(),
        passes_through: false,
        hidden: false,
        handler: Handler::Static { handler: reg.handler, plan: output.plan, validator, checks },
        defined_at: origin,
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
    // Any schema is an output schema in 2026-07-28; 2025-11-25 clients get a non-object one
    // wrapped as `{"result": …}`, and the value with it.
    // Compiled on the first call; the meta-schema catches malformed schemas now.
    if let Some(schema) = &tool.output_schema
        && let Err(e) = jsonschema::meta::validate(schema)
    {
        problems.push(format!("runtime tool `{name}`: its output schema is invalid: {e}"));
    }
    let header_params = header_params(&tool.input_schema).unwrap_or_else(|p| {
        problems.push(format!("runtime tool `{name}`: {p}"));
        Vec::new()
    });
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(ToolEntry {
        name: name.as_str().into(),
        title: tool.title.clone(),
        description: tool.description.clone(),
        summary: tool.summary.clone().unwrap_or_else(|| first_line(&tool.description)),
        tags: tool.tags.clone(),
        input_schema: tool.input_schema.clone(),
        output_schema: tool
            .output_schema
            .as_ref()
            .map(|s| if is_object(s) { s.clone() } else { Arc::new(schema::wrap_schema((**s).clone())) }),
        bare_output_schema: tool.output_schema.clone().filter(|s| !is_object(s)),
        annotations: tool.annotations.clone(),
        meta: tool.meta.clone(),
        icons: tool.icons.clone(),
        defer: tool.defer,
        view: linked_view(tool.meta.as_ref()),
        header_params,
        task: tool.task,
        becomes_task_itself: tool.becomes_task_itself,
        timeout: tool.timeout,
        scopes: tool.scopes.clone(),
        // A handler built at run time gets the context: it may ask.
        reaches_client: true,
        passes_through: false,
        hidden: tool.hidden,
        handler: Handler::Dynamic {
            handler: tool.handler.clone(),
            input_validator,
            output_validator: OnceLock::new(),
        },
        defined_at: DefinedAt::Runtime,
    })
}

/// The properties an input schema mirrors in headers (`"x-mcp-header": "Name"` on a string,
/// integer or boolean property reached through `properties` only), checked: each name a
/// non-empty HTTP token, unique regardless of case.
pub(crate) fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    fn walk(schema: &Value, path: &mut Vec<String>, out: &mut Vec<HeaderParam>) -> Result<(), String> {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Ok(()) };
        for (name, property) in properties {
            path.push(name.clone());
            if let Some(header) = property.get("x-mcp-header") {
                let at = path.join(".");
                let Some(header) = header.as_str().filter(|h| is_token(h)) else {
                    return Err(format!(
                        "property `{at}` has an invalid `x-mcp-header` {header}: it must be a non-empty HTTP token"
                    ));
                };
                let kind = property.get("type").and_then(Value::as_str).unwrap_or_default();
                if !matches!(kind, "string" | "integer" | "boolean") {
                    return Err(format!(
                        "property `{at}` has `x-mcp-header` but is not a string, integer or boolean"
                    ));
                }
                if out.iter().any(|p| p.header.eq_ignore_ascii_case(header)) {
                    return Err(format!("two properties are mirrored in the header `Mcp-Param-{header}`"));
                }
                out.push(HeaderParam { path: path.clone(), header: header.to_owned() });
            }
            walk(property, path, out)?;
            path.pop();
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// RFC 9110 `token`: one or more of `!#$%&'*+-.^_`|~`, digits and letters.
fn is_token(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The first line of a description, cut at 160 characters.
pub(crate) fn first_line(description: &str) -> String {
    let line = description.trim().lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}
