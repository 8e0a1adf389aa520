//! Schemas of an OpenAPI document as JSON Schema 2020-12: local `$ref`s inlined (a schema
//! that refers back to itself goes into `$defs`, the one way to write a recursive schema), and
//! OpenAPI 3.0's dialect translated (`nullable`, boolean `exclusiveMinimum`, `example`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// Resolves the schemas of one document.
pub(super) struct Resolver<'a> {
    doc: &'a Value,
    /// OpenAPI 3.0 (its own schema dialect) rather than 3.1 (JSON Schema 2020-12).
    legacy: bool,
    /// Every schema is `{}`: for finding which operations can be served, quickly.
    shallow: bool,
}

/// The schema being built for one tool: its recursive definitions.
#[derive(Default)]
pub(super) struct Defs {
    defs: BTreeMap<String, Value>,
    /// The refs being inlined, innermost last (a ref met again is recursive).
    stack: Vec<String>,
}

impl Defs {
    /// Adds the definitions to a tool's schema.
    pub fn attach(self, schema: &mut Value) {
        if !self.defs.is_empty()
            && let Some(obj) = schema.as_object_mut()
        {
            obj.insert("$defs".into(), Value::Object(self.defs.into_iter().collect()));
        }
    }
}

/// How deep schemas are inlined before refusing (a document nesting deeper is pathological).
const MAX_DEPTH: usize = 64;

impl<'a> Resolver<'a> {
    pub fn new(doc: &'a Value) -> Self {
        let legacy = doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.0"));
        Resolver { doc, legacy, shallow: false }
    }

    /// A resolver that answers `{}` for every schema (the operations' shapes without their
    /// schemas, which are most of the work).
    pub fn shallow(doc: &'a Value) -> Self {
        Resolver { shallow: true, ..Resolver::new(doc) }
    }

    /// The value a local `$ref` (`#/components/...`) points at.
    pub fn target(&self, reference: &str) -> Option<&'a Value> {
        let pointer = reference.strip_prefix('#')?;
        self.doc.pointer(pointer)
    }

    /// An object that may be a `$ref` (a parameter, a request body, a response), followed.
    pub fn follow(&self, value: &'a Value) -> &'a Value {
        let mut value = value;
        for _ in 0..MAX_DEPTH {
            match value.get("$ref").and_then(Value::as_str).and_then(|r| self.target(r)) {
                Some(target) => value = target,
                None => break,
            }
        }
        value
    }

    /// `schema` as JSON Schema 2020-12, references inlined (recursive ones into `defs`).
    pub fn schema(&self, schema: &Value, defs: &mut Defs) -> Value {
        if self.shallow {
            return json!({});
        }
        self.convert(schema, defs, 0)
    }

    fn convert(&self, schema: &Value, defs: &mut Defs, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return json!({});
        }
        let Value::Object(obj) = schema else {
            return schema.clone(); // `true`, `false`
        };
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            return self.reference(reference, defs, depth);
        }
        let mut out = Map::new();
        for (key, value) in obj {
            let converted = match key.as_str() {
                // Keywords whose value is a schema.
                "items"
                | "additionalProperties"
                | "not"
                | "contains"
                | "propertyNames"
                | "if"
                | "then"
                | "else"
                | "unevaluatedProperties"
                | "unevaluatedItems" => self.convert(value, defs, depth + 1),
                // … a list of schemas.
                "allOf" | "anyOf" | "oneOf" | "prefixItems" => match value {
                    Value::Array(items) => {
                        Value::Array(items.iter().map(|s| self.convert(s, defs, depth + 1)).collect())
                    }
                    other => other.clone(),
                },
                // … a map of schemas.
                "properties" | "patternProperties" | "dependentSchemas" | "$defs" => match value {
                    Value::Object(map) => Value::Object(
                        map.iter().map(|(k, s)| (k.clone(), self.convert(s, defs, depth + 1))).collect(),
                    ),
                    other => other.clone(),
                },
                // OpenAPI-only keywords.
                "discriminator" | "xml" | "externalDocs" | "nullable" => continue,
                "example" => {
                    out.insert("examples".into(), json!([value]));
                    continue;
                }
                _ => value.clone(),
            };
            out.insert(key.clone(), converted);
        }
        if self.legacy {
            legacy_dialect(obj, &mut out);
        }
        Value::Object(out)
    }

    /// A `$ref`: inlined, or (when it refers back to a schema being inlined) a reference into
    /// `$defs`; an unresolvable one accepts anything.
    fn reference(&self, reference: &str, defs: &mut Defs, depth: usize) -> Value {
        let name = def_name(reference);
        if defs.stack.iter().any(|r| r == reference) {
            // Recursive: defined once in `$defs` (filled when the outer inlining finishes).
            defs.defs.entry(name.clone()).or_insert(Value::Null);
            return json!({"$ref": format!("#/$defs/{name}")});
        }
        let Some(target) = self.target(reference) else {
            tracing::debug!(reference, "an unresolvable $ref accepts anything");
            return json!({});
        };
        defs.stack.push(reference.to_owned());
        let inlined = self.convert(target, defs, depth + 1);
        defs.stack.pop();
        if defs.defs.get(&name).is_some_and(Value::is_null) {
            // It was referred to from inside itself: the definition is this schema.
            defs.defs.insert(name.clone(), inlined);
            return json!({"$ref": format!("#/$defs/{name}")});
        }
        inlined
    }
}

/// The `$defs` name of a reference (`#/components/schemas/Node` → `Node`).
fn def_name(reference: &str) -> String {
    let last = reference.rsplit('/').next().unwrap_or(reference);
    last.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// OpenAPI 3.0 → JSON Schema 2020-12: `nullable: true` admits `null`; boolean
/// `exclusiveMinimum`/`exclusiveMaximum` become numbers.
fn legacy_dialect(original: &Map<String, Value>, out: &mut Map<String, Value>) {
    if original.get("nullable") == Some(&Value::Bool(true)) {
        match out.get("type").cloned() {
            Some(Value::String(t)) => {
                out.insert("type".into(), json!([t, "null"]));
            }
            Some(Value::Array(mut types)) if !types.contains(&json!("null")) => {
                types.push(json!("null"));
                out.insert("type".into(), Value::Array(types));
            }
            Some(_) => {}
            None => {
                // No type: anything, `null` included, already.
                if let Some(Value::Array(choices)) = out.get_mut("enum")
                    && !choices.contains(&Value::Null)
                {
                    choices.push(Value::Null);
                }
            }
        }
    }
    for (flag, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        match original.get(flag) {
            Some(Value::Bool(true)) => {
                if let Some(limit) = out.remove(bound) {
                    out.insert(flag.into(), limit);
                } else {
                    out.remove(flag);
                }
            }
            Some(Value::Bool(false)) => {
                out.remove(flag);
            }
            _ => {}
        }
    }
}

/// Whether a (converted) schema describes JSON objects.
pub(super) fn is_object_schema(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
        None => schema.get("properties").is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_inlined_and_recursion_goes_to_defs() {
        let doc = json!({"openapi": "3.0.3", "components": {"schemas": {
            "Pet": {"type": "object", "properties": {"name": {"type": "string", "nullable": true}, "owner": {"$ref": "#/components/schemas/Person"}}},
            "Person": {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0, "exclusiveMinimum": true}}},
            "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}},
        }}});
        let resolver = Resolver::new(&doc);
        let mut defs = Defs::default();
        let pet = resolver.schema(&json!({"$ref": "#/components/schemas/Pet"}), &mut defs);
        assert_eq!(pet["properties"]["name"]["type"], json!(["string", "null"]));
        assert_eq!(
            pet["properties"]["owner"]["properties"]["age"],
            json!({"type": "integer", "exclusiveMinimum": 0})
        );
        assert!(defs.defs.is_empty());
        let node = resolver.schema(&json!({"$ref": "#/components/schemas/Node"}), &mut defs);
        assert_eq!(node, json!({"$ref": "#/$defs/Node"}));
        assert_eq!(defs.defs["Node"]["properties"]["children"]["items"], json!({"$ref": "#/$defs/Node"}));
        let mut tool = json!({"type": "object", "properties": {"tree": node}});
        defs.attach(&mut tool);
        assert!(
            jsonschema::validator_for(&tool)
                .unwrap()
                .is_valid(&json!({"tree": {"children": [{"children": []}]}}))
        );
    }
}
