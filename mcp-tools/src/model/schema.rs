//! The one schema policy: how schemas derived from Rust types are shaped before they are
//! advertised. Applied once per tool at start-up; hand-written schemas are never touched.
//!
//! A derived schema is plain and self-contained, because real clients handle anything else badly:
//!
//! * JSON Schema 2020-12 semantics, with no `$schema` key and no root `title`;
//! * the root is `{"type": "object", …}` (inputs always; outputs that are not objects are wrapped
//!   as `{"result": …}`, see [`OutputPlan`]);
//! * subschemas are inlined: no `$ref`/`$defs` unless the type is recursive;
//! * an optional property (`Option<T>`, not in `required`) is described by `T`'s schema: the
//!   `null` alternative is dropped from what is advertised, and so is a `"default": null`. What
//!   is advertised is what is accepted: a client leaves such a field out, and a `null` for it is
//!   refused (`/note: null is not allowed: omit the field instead`);
//! * `format` is kept only when it is a standard JSON Schema format (`date-time`, `uuid`, …);
//!   schemars' Rust-specific ones (`uint64`, `double`, …) make validators such as Ajv warn, and
//!   the numeric bounds they stand for are already in `minimum`/`maximum`;
//! * properties keep declaration order, so the output is deterministic.

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

pub use crate::model::result::OutputPlan;
use crate::model::result::ToolOutput;

/// The generator used for input (argument) schemas.
pub fn input_generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
            s.contract = Contract::Deserialize;
        })
        .into_generator()
}

/// The generator used for output (return value) schemas: they describe serialization.
pub fn output_generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
            s.contract = Contract::Serialize;
        })
        .into_generator()
}

/// The input schema of `T`, as advertised (policy applied). `T` must describe a JSON object.
pub fn input_schema_for<T: JsonSchema>() -> Result<Value, String> {
    let schema = input_generator().into_root_schema_for::<T>();
    advertised_input(schema.to_value())
}

/// The `requestedSchema` of an elicitation for `T`: the input schema (a flat object of
/// primitives and enums), with enum variants' descriptions turned into their `title`s, the
/// titled form elicitation clients show.
pub fn elicitation_schema_for<T: JsonSchema>() -> Result<Value, String> {
    let mut schema = input_schema_for::<T>()?;
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            titled_enum(prop);
            let kind = prop.get("type").and_then(Value::as_str).unwrap_or_default();
            let flat = match kind {
                "string" | "number" | "integer" | "boolean" => true,
                "array" => prop["items"].get("enum").is_some() || prop["items"].get("anyOf").is_some(),
                _ => false,
            };
            if !flat {
                return Err(format!(
                    "elicitation forms are flat: field `{name}` must be a string, number, integer, boolean, \
                     enum or list of enum values, not {prop}"
                ));
            }
        }
    }
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("additionalProperties");
        obj.remove("description");
    }
    Ok(schema)
}

/// `{"oneOf": [{"type":"string","enum":["a","b"]}, {"const":"c","description":"C"}]}` →
/// `{"type":"string","oneOf":[{"const":"a","title":"a"}, …, {"const":"c","title":"C"}]}`.
fn titled_enum(prop: &mut Value) {
    let Some(obj) = prop.as_object_mut() else { return };
    let Some(Value::Array(branches)) = obj.get("oneOf") else { return };
    let mut options = Vec::new();
    for branch in branches {
        if let Some(Value::Array(values)) = branch.get("enum") {
            options.extend(values.iter().map(|v| json!({"const": v, "title": v})));
        } else if let Some(value) = branch.get("const") {
            let title = branch.get("title").or_else(|| branch.get("description")).unwrap_or(value);
            options.push(json!({"const": value, "title": title}));
        } else {
            return;
        }
    }
    obj.insert("type".into(), "string".into());
    obj.insert("oneOf".into(), Value::Array(options));
}

/// The output plan and advertised output schema of `T`, as a `#[tool]` returning `T` gets them.
pub fn output_schema_for<T: ToolOutput>() -> (OutputPlan, Option<Value>) {
    plan_output(T::output_schema(&mut output_generator()))
}

/// Applies the policy to a derived input schema. Fails if the root is not an object.
pub fn advertised_input(mut schema: Value) -> Result<Value, String> {
    tidy_root(&mut schema);
    if !ensure_object_root(&mut schema) {
        return Err(format!(
            "the argument type's schema is not a JSON object (its schema is {schema}); \
             tool arguments are always an object"
        ));
    }
    simplify(&mut schema);
    Ok(schema)
}

/// Decides the output plan from a derived output schema and returns the schema to advertise
/// (policy applied, wrapped when needed).
pub fn plan_output(schema: Option<Schema>) -> (OutputPlan, Option<Value>) {
    let planned = plan_output_by_era(schema);
    (planned.plan, planned.schema)
}

/// A tool's output plan and the output schemas it advertises in each era.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlannedOutput {
    pub plan: OutputPlan,
    /// What 2025-11-25 clients see: an object schema (a non-object value wrapped).
    pub schema: Option<Value>,
    /// What 2026-07-28 clients see when it differs: the value's own schema, unwrapped.
    pub bare: Option<Value>,
}

/// [`plan_output`], also giving the unwrapped schema that 2026-07-28 clients see (any JSON
/// Schema is an output schema there).
pub(crate) fn plan_output_by_era(schema: Option<Schema>) -> PlannedOutput {
    let none = |plan| PlannedOutput { plan, schema: None, bare: None };
    let Some(schema) = schema else { return none(OutputPlan::Structured { wrap: false }) };
    let mut schema = schema.to_value();
    tidy_root(&mut schema);
    let bare = strip_annotations(&schema);
    if bare == json!({"type": "string"}) {
        return none(OutputPlan::Text);
    }
    if bare == json!({"type": "null"}) {
        return none(OutputPlan::Empty);
    }
    if ensure_object_root(&mut schema) {
        simplify(&mut schema);
        return PlannedOutput {
            plan: OutputPlan::Structured { wrap: false },
            schema: Some(schema),
            bare: None,
        };
    }
    let mut unwrapped = schema.clone();
    simplify(&mut unwrapped);
    let mut wrapped = wrap_schema(schema);
    simplify(&mut wrapped);
    PlannedOutput {
        plan: OutputPlan::Structured { wrap: true },
        schema: Some(wrapped),
        bare: Some(unwrapped),
    }
}

/// `{"type":"object","properties":{"result": schema},"required":["result"]}`, the schema of a
/// non-object value wrapped for 2025-11-25 clients (otherwise as written).
pub(crate) fn wrap_schema(mut schema: Value) -> Value {
    // Move `$defs` (recursive types) to the wrapper's root, and point references to the old
    // root at its new place, so every `$ref` keeps resolving.
    let defs = schema.as_object_mut().and_then(|o| o.remove("$defs"));
    rebase_root_refs(&mut schema, "#/properties/result");
    let mut wrapped = json!({
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    });
    if let Some(defs) = defs {
        wrapped["$defs"] = defs;
    }
    wrapped
}

fn rebase_root_refs(schema: &mut Value, new_root: &str) {
    match schema {
        Value::Object(obj) => {
            for (key, value) in obj.iter_mut() {
                if key == "$ref" && value == "#" {
                    *value = new_root.into();
                } else if key != "enum" && key != "const" && key != "default" && key != "examples" {
                    rebase_root_refs(value, new_root);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rebase_root_refs(v, new_root)),
        _ => {}
    }
}

/// Removes the keys a root schema must not carry: `$schema` and the type name as `title`.
fn tidy_root(schema: &mut Value) {
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        if obj.get("$defs").and_then(Value::as_object).is_some_and(Map::is_empty) {
            obj.remove("$defs");
        }
    }
}

fn strip_annotations(schema: &Value) -> Value {
    let mut bare = schema.clone();
    if let Some(obj) = bare.as_object_mut() {
        for key in ["description", "examples", "default", "$comment", "format"] {
            obj.remove(key);
        }
    }
    bare
}

/// Makes sure the root says `"type": "object"`. A schema whose every `oneOf`/`anyOf` branch is
/// an object (an internally tagged enum, say) gets the key added; anything else is not an object.
fn ensure_object_root(schema: &mut Value) -> bool {
    let Some(obj) = schema.as_object_mut() else { return false };
    match obj.get("type") {
        Some(Value::String(t)) => return t == "object",
        Some(_) => return false,
        None => {}
    }
    let branches_are_objects = ["oneOf", "anyOf"].iter().any(|k| {
        obj.get(*k).and_then(Value::as_array).is_some_and(|branches| {
            !branches.is_empty()
                && branches.iter().all(|b| b.get("type").and_then(Value::as_str) == Some("object"))
        })
    });
    if branches_are_objects {
        // Keep "type" first for readability.
        let mut with_type = Map::new();
        with_type.insert("type".into(), "object".into());
        with_type.extend(std::mem::take(obj));
        *obj = with_type;
    }
    branches_are_objects
}

/// The formats JSON Schema 2020-12 defines; other `format` values are dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Walks the schema: drops `null` alternatives from optional properties and non-standard
/// formats.
fn simplify(schema: &mut Value) {
    let Some(obj) = schema.as_object_mut() else {
        if let Some(items) = schema.as_array_mut() {
            items.iter_mut().for_each(simplify);
        }
        return;
    };
    if obj.get("format").and_then(Value::as_str).is_some_and(|f| !STANDARD_FORMATS.contains(&f)) {
        obj.remove("format");
    }
    let required: Vec<String> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if !required.iter().any(|r| r == name) {
                drop_null(prop);
            }
        }
    }
    for (key, value) in obj.iter_mut() {
        if key != "enum" && key != "const" && key != "default" && key != "examples" {
            simplify(value);
        }
    }
}

/// `{"type": ["string","null"]}` → `{"type":"string"}`; `{"anyOf":[X, {"type":"null"}]}` → X;
/// `null` removed from `enum`; `"default": null` removed.
fn drop_null(prop: &mut Value) {
    let Some(obj) = prop.as_object_mut() else { return };
    if obj.get("default") == Some(&Value::Null) {
        obj.remove("default");
    }
    if let Some(Value::Array(types)) = obj.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.pop().expect("one element");
            obj.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = obj.get(key) else { continue };
        let is_null = |b: &Value| b == &json!({"type": "null"});
        if branches.len() == 2 && branches.iter().any(is_null) {
            let keep = branches.iter().find(|b| !is_null(b)).cloned().expect("one non-null branch");
            obj.remove(key);
            if let Value::Object(inner) = keep {
                for (k, v) in inner {
                    obj.entry(k).or_insert(v);
                }
            }
        }
    }
}

/// Whether `schema` constrains values beyond what decoding them checks (types, required and
/// unknown fields, enum variants): ranges, lengths, patterns, item counts… (`#[schemars(range,
/// length, regex)]`). Bounds that only restate an integer type's own range (`minimum: 0` of a
/// `u32`) do not count: decoding already enforces them.
pub(crate) fn has_constraints(schema: &Value) -> bool {
    const CONSTRAINTS: &[&str] = &[
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "contains",
        "propertyNames",
        "patternProperties",
        "dependentRequired",
        "dependentSchemas",
        "if",
        "not",
    ];
    let Value::Object(obj) = schema else { return false };
    let natural = obj.get("format").and_then(Value::as_str).and_then(integer_range);
    let bound = |key: &str, natural: Option<f64>| {
        obj.get(key).and_then(Value::as_f64).is_some_and(|b| natural != Some(b))
    };
    if CONSTRAINTS.iter().any(|k| obj.contains_key(*k))
        || bound("minimum", natural.map(|(min, _)| min))
        || bound("maximum", natural.map(|(_, max)| max))
    {
        return true;
    }
    // The keywords whose values are schemas, or maps or lists of them.
    let one = ["items", "additionalProperties", "unevaluatedProperties", "additionalItems"];
    let map = ["properties", "$defs", "definitions"];
    let list = ["anyOf", "oneOf", "allOf", "prefixItems"];
    one.iter().filter_map(|k| obj.get(*k)).any(has_constraints)
        || map.iter().filter_map(|k| obj.get(*k)?.as_object()).any(|m| m.values().any(has_constraints))
        || list.iter().filter_map(|k| obj.get(*k)?.as_array()).any(|l| l.iter().any(has_constraints))
}

/// The range of the integer type a schemars `format` names.
fn integer_range(format: &str) -> Option<(f64, f64)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN as f64, i64::MAX as f64),
        "uint8" => (0.0, u8::MAX.into()),
        "uint16" => (0.0, u16::MAX.into()),
        "uint32" => (0.0, u32::MAX.into()),
        "uint64" | "uint" => (0.0, u64::MAX as f64),
        "uint128" => (0.0, u128::MAX as f64),
        "int128" => (i128::MIN as f64, i128::MAX as f64),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_type_array_drops_null() {
        let mut s = json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}});
        simplify(&mut s);
        assert_eq!(s["properties"]["a"], json!({"type": "string"}));
    }

    #[test]
    fn required_nullable_is_kept() {
        let mut s =
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"]});
        simplify(&mut s);
        assert_eq!(s["properties"]["a"], json!({"type": ["string", "null"]}));
    }

    #[test]
    fn optional_any_of_is_unwrapped_keeping_description() {
        let mut s = json!({"type": "object", "properties": {"a": {
            "description": "d", "anyOf": [{"type": "object", "properties": {}}, {"type": "null"}]
        }}});
        simplify(&mut s);
        assert_eq!(s["properties"]["a"], json!({"description": "d", "type": "object", "properties": {}}));
    }

    #[test]
    fn non_object_output_is_wrapped() {
        let (plan, schema) = plan_output(Some(output_generator().into_root_schema_for::<Vec<u8>>()));
        assert_eq!(plan, OutputPlan::Structured { wrap: true });
        let schema = schema.unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["result"]));
        assert_eq!(schema["properties"]["result"]["type"], "array");
    }

    #[test]
    fn a_non_object_output_keeps_its_own_schema_for_the_stateless_era() {
        let planned = plan_output_by_era(Some(output_generator().into_root_schema_for::<Vec<u8>>()));
        assert_eq!(planned.plan, OutputPlan::Structured { wrap: true });
        let bare = planned.bare.unwrap();
        assert_eq!(bare["type"], "array");
        assert_eq!(planned.schema.unwrap()["properties"]["result"], bare);
        let object = plan_output_by_era(Some(output_generator().into_root_schema_for::<Point>()));
        assert_eq!((object.plan, object.bare), (OutputPlan::Structured { wrap: false }, None));
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Point {
        x: i32,
    }

    #[test]
    fn string_and_unit_outputs_have_no_schema() {
        let (plan, schema) = plan_output(Some(output_generator().into_root_schema_for::<String>()));
        assert_eq!((plan, schema), (OutputPlan::Text, None));
        let (plan, schema) = plan_output(Some(output_generator().into_root_schema_for::<()>()));
        assert_eq!((plan, schema), (OutputPlan::Empty, None));
    }

    #[test]
    fn constraints_beyond_decoding_are_detected() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Plain {
            pattern: String,
            mode: Mode,
            n: u32,
            small: u8,
            name: String,
            list: Vec<i64>,
        }
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        enum Mode {
            Fast,
            /// Slow.
            Slow,
        }
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Ranged {
            #[schemars(range(max = 10))]
            n: u32,
        }
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Nested {
            inner: Vec<Inner>,
        }
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Inner {
            #[schemars(length(min = 1))]
            name: String,
        }
        let schema = |s: schemars::Schema| s.to_value();
        assert!(!has_constraints(&schema(schemars::schema_for!(Plain))));
        assert!(has_constraints(&schema(schemars::schema_for!(Ranged))));
        assert!(has_constraints(&schema(schemars::schema_for!(Nested))));
    }
}
