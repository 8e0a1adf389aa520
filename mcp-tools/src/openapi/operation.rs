//! The operations of a document, each described as a tool: its name, texts, annotations, input
//! schema (parameters by location, and the request body) and output schema.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value, json};

use super::schema::{Defs, Resolver, is_object_schema};

/// Where a parameter goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Location {
    Path,
    Query,
    Header,
    Cookie,
}

impl Location {
    fn of(text: &str) -> Option<Location> {
        Some(match text {
            "path" => Location::Path,
            "query" => Location::Query,
            "header" => Location::Header,
            "cookie" => Location::Cookie,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Cookie => "cookie",
        }
    }
}

/// One parameter: the argument it is read from, and how it is sent.
#[derive(Clone, Debug)]
pub(super) struct Param {
    /// The argument's name in the tool's input (the parameter's, or `{location}_{name}` when two
    /// locations share a name).
    pub argument: String,
    /// The name on the wire.
    pub name: String,
    pub location: Location,
    /// Query arrays and objects: one `name=value` per item (`explode`, the default of `form`).
    pub explode: bool,
    /// Query objects as `name[key]=value`.
    pub deep_object: bool,
}

/// How the request body is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BodyKind {
    Json,
    Form,
}

/// An operation, ready to be called.
#[derive(Clone, Debug)]
pub(super) struct Operation {
    pub method: reqwest::Method,
    pub path: String,
    pub params: Vec<Param>,
    /// The body's kind and whether it is required; the argument is `body`.
    pub body: Option<(BodyKind, bool)>,
}

/// An operation described as a tool.
#[derive(Debug)]
pub(super) struct Described {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub tags: Vec<String>,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub read_only: bool,
    pub idempotent: bool,
    pub destructive: bool,
    pub operation: Operation,
}

/// Why an operation is not served.
pub(super) type Skipped = (String, String);

pub(super) const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// The operations of the document that `keep` keeps, described, and those skipped (with why).
pub(super) fn describe(
    resolver: &Resolver<'_>,
    doc: &Value,
    keep: impl Fn(&str, &str, &[String]) -> bool,
    output_schemas: bool,
) -> (Vec<Described>, Vec<Skipped>) {
    let mut described = Vec::new();
    let mut skipped = Vec::new();
    let mut taken: HashMap<String, usize> = HashMap::new();
    let Some(paths) = doc["paths"].as_object() else { return (described, skipped) };
    for (path, item) in paths {
        let item = resolver.follow(item);
        let shared = item["parameters"].as_array().cloned().unwrap_or_default();
        for method in METHODS {
            let Some(op) = item.get(*method) else { continue };
            let tags: Vec<String> = op["tags"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            if !keep(method, path, &tags) {
                continue;
            }
            let label = format!("{} {path}", method.to_uppercase());
            match describe_one(resolver, path, method, op, &shared, tags, output_schemas) {
                Ok(mut d) => {
                    // Names are unique: a repeated one gets a number.
                    let count = taken.entry(d.name.clone()).or_insert(0);
                    *count += 1;
                    if *count > 1 {
                        let suffix = format!("_{count}");
                        d.name = format!("{}{suffix}", truncate(&d.name, 128 - suffix.len()));
                    }
                    described.push(d);
                }
                Err(why) => skipped.push((label, why)),
            }
        }
    }
    (described, skipped)
}

fn describe_one(
    resolver: &Resolver<'_>,
    path: &str,
    method: &str,
    op: &Value,
    shared: &[Value],
    tags: Vec<String>,
    output_schemas: bool,
) -> Result<Described, String> {
    let mut defs = Defs::default();
    // The operation's parameters override the path's of the same name and location.
    let mut raw: Vec<&Value> = Vec::new();
    for p in op["parameters"].as_array().into_iter().flatten().chain(shared) {
        let p = resolver.follow(p);
        let key = (p["name"].as_str(), p["in"].as_str());
        if !raw.iter().any(|q| (q["name"].as_str(), q["in"].as_str()) == key) {
            raw.push(p);
        }
    }
    let names: Vec<&str> = raw.iter().filter_map(|p| p["name"].as_str()).collect();
    let clashes: BTreeSet<&str> =
        names.iter().copied().filter(|n| names.iter().filter(|m| *m == n).count() > 1).collect();
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut params = Vec::new();
    for p in raw {
        let (Some(name), Some(location)) = (p["name"].as_str(), p["in"].as_str().and_then(Location::of))
        else {
            return Err("a parameter without a name or a known location".into());
        };
        // OpenAPI 3: header parameters named `Accept`, `Content-Type` or `Authorization` are
        // ignored (the request's own headers say those); a caller never sets them.
        if location == Location::Header
            && ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str())
        {
            continue;
        }
        // Two locations sharing a name: each argument is prefixed with its location.
        let argument = if clashes.contains(name) || name == "body" {
            format!("{}_{name}", location.name())
        } else {
            name.to_owned()
        };
        let schema = match (p.get("schema"), p.get("content").and_then(Value::as_object)) {
            (Some(schema), _) => resolver.schema(schema, &mut defs),
            (None, Some(content)) => content
                .values()
                .next()
                .and_then(|m| m.get("schema"))
                .map_or(json!({}), |s| resolver.schema(s, &mut defs)),
            (None, None) => json!({"type": "string"}),
        };
        let mut schema = schema;
        if let (Some(description), Some(obj)) = (p["description"].as_str(), schema.as_object_mut()) {
            obj.insert("description".into(), json!(description));
        }
        let is_required = location == Location::Path || p["required"] == json!(true);
        if is_required {
            required.push(json!(argument));
        }
        let style = p["style"].as_str().unwrap_or("form");
        params.push(Param {
            argument: argument.clone(),
            name: name.to_owned(),
            location,
            explode: p["explode"].as_bool().unwrap_or(style == "form"),
            deep_object: style == "deepObject",
        });
        properties.insert(argument, schema);
    }
    let mut body = None;
    if let Some(request) = op.get("requestBody") {
        let request = resolver.follow(request);
        let content = request["content"].as_object().cloned().unwrap_or_default();
        let json_body = content.iter().find(|(m, _)| is_json(m));
        let form_body = content.iter().find(|(m, _)| m.starts_with("application/x-www-form-urlencoded"));
        let (kind, media) = match (json_body, form_body) {
            (Some(media), _) => (BodyKind::Json, media.1),
            (None, Some(media)) => (BodyKind::Form, media.1),
            (None, None) if content.is_empty() => (BodyKind::Json, &Value::Null),
            (None, None) => {
                let types: Vec<&str> = content.keys().map(String::as_str).collect();
                return Err(format!(
                    "its request body is {} (only JSON and form bodies are sent)",
                    types.join(", ")
                ));
            }
        };
        let mut schema = media.get("schema").map_or(json!({}), |s| resolver.schema(s, &mut defs));
        if let (Some(description), Some(obj)) = (request["description"].as_str(), schema.as_object_mut()) {
            obj.entry("description").or_insert(json!(description));
        }
        let is_required = request["required"] == json!(true);
        if is_required {
            required.push(json!("body"));
        }
        properties.insert("body".into(), schema);
        body = Some((kind, is_required));
    }
    let mut input_schema = json!({"type": "object", "properties": properties, "additionalProperties": false});
    if !required.is_empty() {
        input_schema["required"] = Value::Array(required);
    }
    defs.attach(&mut input_schema);

    let output_schema = output_schemas.then(|| success_schema(resolver, op)).flatten();
    let summary = op["summary"].as_str().map(str::trim).filter(|s| !s.is_empty());
    let details = op["description"].as_str().map(str::trim).filter(|s| !s.is_empty());
    let mut description = match (summary, details) {
        (Some(s), Some(d)) if !d.starts_with(s) => format!("{s}\n\n{d}"),
        (_, Some(d)) => d.to_owned(),
        (Some(s), None) => s.to_owned(),
        (None, None) => format!("{} {path}", method.to_uppercase()),
    };
    if op["deprecated"] == json!(true) {
        description.push_str("\n\n(Deprecated.)");
    }
    let method_upper = method.to_uppercase();
    Ok(Described {
        name: tool_name(op["operationId"].as_str(), method, path),
        title: summary.map(str::to_owned),
        description,
        tags,
        input_schema,
        output_schema,
        read_only: matches!(method, "get" | "head" | "options" | "trace"),
        idempotent: matches!(method, "get" | "head" | "options" | "trace" | "put" | "delete"),
        destructive: method == "delete",
        operation: Operation {
            method: reqwest::Method::from_bytes(method_upper.as_bytes()).map_err(|e| e.to_string())?,
            path: path.to_owned(),
            params,
            body,
        },
    })
}

/// The JSON schema of the first 2xx response, when it describes an object.
fn success_schema(resolver: &Resolver<'_>, op: &Value) -> Option<Value> {
    let responses = op["responses"].as_object()?;
    let (_, response) =
        responses.iter().filter(|(code, _)| code.starts_with('2')).min_by_key(|(code, _)| (*code).clone())?;
    let response = resolver.follow(response);
    let (_, media) = response["content"].as_object()?.iter().find(|(m, _)| is_json(m))?;
    let mut defs = Defs::default();
    let mut schema = resolver.schema(media.get("schema")?, &mut defs);
    if !is_object_schema(&schema) {
        return None;
    }
    defs.attach(&mut schema);
    Some(schema)
}

fn is_json(media: &str) -> bool {
    let media = media.split(';').next().unwrap_or_default().trim();
    media == "application/json" || media.ends_with("+json")
}

/// A tool name from the `operationId` (or the method and path): characters outside
/// `A-Z a-z 0-9 _ . -` become `_`, at most 128.
pub(super) fn tool_name(operation_id: Option<&str>, method: &str, path: &str) -> String {
    let source = match operation_id.map(str::trim).filter(|id| !id.is_empty()) {
        Some(id) => id.to_owned(),
        None => format!("{method}_{path}"),
    };
    let mut name = String::with_capacity(source.len());
    for c in source.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' };
        if !(c == '_' && name.ends_with('_')) {
            name.push(c);
        }
    }
    let name = name.trim_matches('_');
    let name = if name.is_empty() { "operation" } else { name };
    truncate(name, 128).to_owned()
}

fn truncate(text: &str, max: usize) -> &str {
    &text[..text.len().min(max)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_tool_name_rules() {
        assert_eq!(tool_name(Some("issues/create-comment"), "post", "/x"), "issues_create-comment");
        assert_eq!(tool_name(None, "get", "/pets/{petId}"), "get_pets_petId");
        assert_eq!(tool_name(Some("  "), "delete", "/"), "delete");
        assert_eq!(tool_name(Some(&"a".repeat(200)), "get", "/").len(), 128);
    }
}
