//! Invalid arguments, explained: every problem of a call in one list, each line starting with
//! the JSON pointer of the value it is about (`(root)` for the arguments object itself).
//!
//! Three sources are merged:
//!
//! * the input schema's validator: types, required fields, constraints. A failed `oneOf` or
//!   `anyOf` is explained by the variant the value meant (the one its tag names, else the closest
//!   one), or by the tags allowed, instead of "not valid under any of the schemas";
//! * for a derived schema, a [`walk`] of the arguments alongside it: the fields no type has, in
//!   every serde enum representation (serde reads internally, adjacently tagged and untagged enums
//!   and flattened fields through a buffer that drops unknown fields unseen), and a `null` where
//!   the advertised schema has none (an omitted optional field);
//! * decoding: what only the types' own `Deserialize` checks.

use std::collections::HashMap;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use serde_json::{Map, Value};

use crate::__private::ArgumentError;

/// The message of a field that no type has.
const UNKNOWN: &str = "unknown field: the tool's input schema has no such property";
/// The message of a `null` for an optional field whose schema has no `null`.
const NULL: &str = "null is not allowed: omit the field instead";

/// How deep schemas and values are followed (recursive types, hostile nesting).
const MAX_DEPTH: usize = 128;

/// One problem with the arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Problem {
    /// A JSON pointer into the arguments; empty for the arguments object itself.
    path: String,
    message: String,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Found by the validator.
    Schema,
    /// A field no type has.
    Unknown,
    /// A `null` the advertised schema does not allow.
    Null,
    /// Found by decoding.
    Decode,
}

impl Problem {
    fn new(kind: Kind, path: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem { path: path.into(), message: message.into(), kind }
    }

    fn line(&self) -> String {
        let path = if self.path.is_empty() { "(root)" } else { &self.path };
        format!("{path}: {}", self.message)
    }
}

/// What a tool's arguments are checked for beyond decoding them, on every call.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Checks {
    /// The schema constrains more than decoding checks (ranges, lengths, patterns): the arguments
    /// are validated against it.
    pub constrained: bool,
    /// The schema has enums with object variants or flattened enums, whose unknown fields serde
    /// drops unseen: the arguments are walked alongside it.
    pub walk: bool,
    /// Some optional property's advertised schema has no `null`: arguments that contain `null`
    /// are walked for it.
    pub nulls: bool,
}

impl Checks {
    /// The checks a derived input schema (as advertised) needs; `constrained` is decided on the
    /// schema as derived, whose integer formats tell a type's own range from a constraint.
    pub fn of(schema: &Value, constrained: bool) -> Checks {
        Checks { constrained, walk: buffers_variants(schema, 0), nulls: refuses_null(schema, schema, 0) }
    }
}

/// Whether a `oneOf`/`anyOf`/`allOf` somewhere in `schema` may hold objects (enum variants
/// with fields, flattened enums). `Option<T>`'s two branches, one of them `null`, do not count:
/// serde reads those without a buffer.
fn buffers_variants(schema: &Value, depth: usize) -> bool {
    let Value::Object(obj) = schema else { return false };
    if depth > MAX_DEPTH {
        return true;
    }
    let may_be_object = |branch: &Value| match branch {
        Value::Object(b) => {
            let scalar = b.get("type").and_then(Value::as_str).is_some_and(|t| t != "object")
                && !b.contains_key("$ref")
                && !["oneOf", "anyOf", "allOf"].iter().any(|k| b.contains_key(*k));
            !scalar && !is_null_schema(branch)
        }
        _ => false,
    };
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(Value::Array(branches)) = obj.get(key) {
            let not_null = branches.iter().filter(|b| !is_null_schema(b)).count();
            if (key == "allOf" || not_null > 1) && branches.iter().any(may_be_object) {
                return true;
            }
        }
    }
    obj.iter().any(|(key, value)| match (key.as_str(), value) {
        ("enum" | "const" | "default" | "examples", _) => false,
        (_, Value::Array(items)) => items.iter().any(|v| buffers_variants(v, depth + 1)),
        (_, Value::Object(_)) => buffers_variants(value, depth + 1),
        _ => false,
    })
}

/// Whether some optional property in `schema` does not allow `null`.
fn refuses_null(root: &Value, schema: &Value, depth: usize) -> bool {
    let Value::Object(obj) = schema else { return false };
    if depth > MAX_DEPTH {
        return true;
    }
    if let Some(Value::Object(properties)) = obj.get("properties") {
        let required = required_of(obj);
        if properties.iter().any(|(k, s)| !required.contains(&k.as_str()) && !admits_null(root, s, 0)) {
            return true;
        }
    }
    obj.iter().any(|(key, value)| match (key.as_str(), value) {
        ("enum" | "const" | "default" | "examples", _) => false,
        (_, Value::Array(items)) => items.iter().any(|v| refuses_null(root, v, depth + 1)),
        (_, Value::Object(map)) if key == "properties" || key == "$defs" => {
            map.values().any(|v| refuses_null(root, v, depth + 1))
        }
        (_, Value::Object(_)) => refuses_null(root, value, depth + 1),
        _ => false,
    })
}

// ---------------------------------------------------------------------------------------------
// The whole explanation.

/// Every problem of `value`, as lines for the model, in the order of the arguments' text.
///
/// `derived`: `schema` was derived from the argument types (objects that declare `properties`
/// are closed, as serde's structs are), so the arguments are also walked alongside it.
/// `decoding`: what decoding the arguments said; `trust_ignored`: its unknown fields are
/// reported at their path (not so where serde loses the variant of an externally tagged enum).
pub(crate) fn problems(
    validator: Option<&Validator>,
    schema: &Value,
    derived: bool,
    value: &Value,
    decoding: Option<&ArgumentError>,
    trust_ignored: bool,
) -> Vec<String> {
    let mut found = Vec::new();
    if derived {
        found.extend(walk(schema, value, true));
    }
    if let Some(validator) = validator {
        for error in validator.iter_errors(value) {
            explain(&error, schema, &mut found, 0);
        }
    }
    if let Some(decoding) = decoding {
        if decoding.unknown.is_empty() {
            // Its path, cut to where the arguments have a value (serde names a unit variant
            // given as a string like the key of a variant with fields).
            let mut path = decoding.path.as_str();
            while value.pointer(path).is_none()
                && let Some(cut) = path.rfind('/')
            {
                path = &path[..cut];
            }
            found.push(Problem::new(Kind::Decode, path, decoding.message.clone()));
        } else if trust_ignored {
            found.extend(
                decoding.unknown.iter().map(|path| Problem::new(Kind::Unknown, path.clone(), UNKNOWN)),
            );
        }
    }
    let found = merge(found);
    if found.is_empty() {
        return decoding.map(ArgumentError::problems).unwrap_or_default();
    }
    in_document_order(found, value).iter().map(Problem::line).collect()
}

/// Drops the problems another one already says: the validator's type error for a refused
/// `null`, a decoding error where (or below where) another problem is, repeated lines.
fn merge(found: Vec<Problem>) -> Vec<Problem> {
    let nulls: Vec<&str> = found.iter().filter(|p| p.kind == Kind::Null).map(|p| p.path.as_str()).collect();
    let at_or_below = |path: &str, other: &str| {
        path.is_empty() || other == path || other.strip_prefix(path).is_some_and(|rest| rest.starts_with('/'))
    };
    let mut kept: Vec<Problem> = Vec::with_capacity(found.len());
    for problem in &found {
        let said = match problem.kind {
            Kind::Schema => nulls.contains(&problem.path.as_str()),
            Kind::Decode => {
                found.iter().any(|p| p.kind != Kind::Decode && at_or_below(&problem.path, &p.path))
            }
            Kind::Unknown | Kind::Null => false,
        };
        let repeated = kept.iter().any(|k| {
            k.path == problem.path
                && (k.message == problem.message
                    || (k.kind == Kind::Unknown && problem.kind == Kind::Unknown))
        });
        if !said && !repeated {
            kept.push(problem.clone());
        }
    }
    kept
}

/// Sorts problems by where their value is in the arguments (a missing field's problem is at
/// its object), keeping the order of problems at one place.
fn in_document_order(mut found: Vec<Problem>, value: &Value) -> Vec<Problem> {
    fn number(value: &Value, path: &mut String, order: &mut HashMap<String, usize>, depth: usize) {
        order.insert(path.clone(), order.len());
        if depth > MAX_DEPTH {
            return;
        }
        let len = path.len();
        match value {
            Value::Object(fields) => {
                for (key, field) in fields {
                    push_key(path, key);
                    number(field, path, order, depth + 1);
                    path.truncate(len);
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    path.push('/');
                    path.push_str(&index.to_string());
                    number(item, path, order, depth + 1);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
    let mut order = HashMap::new();
    number(value, &mut String::new(), &mut order, 0);
    let position = |path: &str| {
        let mut path = path;
        loop {
            if let Some(&at) = order.get(path) {
                return at;
            }
            match path.rfind('/') {
                Some(cut) => path = &path[..cut],
                None => return 0,
            }
        }
    };
    found.sort_by_cached_key(|p| position(&p.path));
    found
}

fn push_key(path: &mut String, key: &str) {
    path.push('/');
    if key.contains(['~', '/']) {
        path.push_str(&key.replace('~', "~0").replace('/', "~1"));
    } else {
        path.push_str(key);
    }
}

// ---------------------------------------------------------------------------------------------
// The validator's errors.

fn explain(error: &ValidationError<'_>, schema: &Value, out: &mut Vec<Problem>, depth: usize) {
    let path = error.instance_path().as_str();
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            for key in unexpected {
                let mut at = path.to_owned();
                push_key(&mut at, key);
                out.push(Problem::new(Kind::Unknown, at, UNKNOWN));
            }
        }
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context }
            if depth < MAX_DEPTH =>
        {
            explain_variants(error, context, schema, out, depth);
        }
        _ => out.push(Problem::new(Kind::Schema, path, error.to_string())),
    }
}

/// A value that matches none of a `oneOf`'s (`anyOf`'s) variants: the problems of the variant
/// its tag names, or the tags allowed; else the problems of the closest variant.
fn explain_variants(
    error: &ValidationError<'_>,
    context: &[Vec<ValidationError<'static>>],
    schema: &Value,
    out: &mut Vec<Problem>,
    depth: usize,
) {
    let path = error.instance_path().as_str();
    let instance: &Value = error.instance();
    let explain_branch = |index: usize, out: &mut Vec<Problem>| match context.get(index) {
        Some(errors) if !errors.is_empty() => {
            errors.iter().for_each(|e| explain(e, schema, out, depth + 1));
            true
        }
        _ => false,
    };
    let branches = schema.pointer(error.schema_path().as_str()).and_then(Value::as_array);
    if let Some(branches) = branches {
        let resolved: Vec<&Value> = branches.iter().map(|b| deref(schema, b)).collect();
        if let (Some(tag), Some(fields)) = (tag_of(&resolved), instance.as_object()) {
            let allowed = one_of(tag.values.iter().map(|(_, v)| v.to_string()));
            match fields.get(tag.key) {
                None => {
                    let message = format!("\"{}\" is a required property (one of {allowed})", tag.key);
                    return out.push(Problem::new(Kind::Schema, path, message));
                }
                Some(given) => match tag.values.iter().find(|(_, v)| *v == given) {
                    Some(&(index, _)) => {
                        if explain_branch(index, out) {
                            return;
                        }
                    }
                    None => {
                        let mut at = path.to_owned();
                        push_key(&mut at, tag.key);
                        return out.push(Problem::new(
                            Kind::Schema,
                            at,
                            format!("{given} is not one of {allowed}"),
                        ));
                    }
                },
            }
        } else if let Some(external) = external_of(&resolved) {
            let named = instance.as_object().and_then(|fields| {
                external.keyed.iter().find(|(_, key)| fields.contains_key(*key)).map(|&(index, _)| index)
            });
            if let Some(index) = named
                && explain_branch(index, out)
            {
                return;
            }
            let forms = external
                .units
                .iter()
                .map(|v| v.to_string())
                .chain(external.keyed.iter().map(|(_, key)| format!("{{{}: …}}", Value::from(*key))));
            let message = format!("{} is not one of {}", short(instance), one_of(forms));
            return out.push(Problem::new(Kind::Schema, path, message));
        }
    }
    // No tag: the variant with the fewest problems, one whose type is right first.
    let wrong_type = |errors: &[ValidationError<'_>]| {
        errors.iter().any(|e| {
            e.instance_path().as_str() == path
                && matches!(
                    e.kind(),
                    ValidationErrorKind::Type { .. }
                        | ValidationErrorKind::Constant { .. }
                        | ValidationErrorKind::Enum { .. }
                        | ValidationErrorKind::FalseSchema
                )
        })
    };
    if !context.is_empty() && context.iter().all(|errors| wrong_type(errors)) {
        let mut types: Vec<String> = Vec::new();
        for e in context.iter().flatten().filter(|e| e.instance_path().as_str() == path) {
            let named: Vec<String> = match e.kind() {
                ValidationErrorKind::Type { kind: TypeKind::Single(t) } => vec![t.to_string()],
                ValidationErrorKind::Type { kind: TypeKind::Multiple(set) } => {
                    set.iter().map(|t| t.to_string()).collect()
                }
                _ => Vec::new(),
            };
            for t in named {
                if !types.contains(&t) {
                    types.push(t);
                }
            }
        }
        // Only types are wrong: say which ones would do.
        if context
            .iter()
            .flatten()
            .filter(|e| e.instance_path().as_str() == path)
            .all(|e| matches!(e.kind(), ValidationErrorKind::Type { .. }))
            && !types.is_empty()
        {
            let types = one_of(types.iter().map(|t| format!("\"{t}\"")));
            return out.push(Problem::new(Kind::Schema, path, format!("{instance} is not of type {types}")));
        }
    }
    let closest = (0..context.len()).min_by_key(|&i| (wrong_type(&context[i]), context[i].len()));
    if let Some(index) = closest
        && explain_branch(index, out)
    {
        return;
    }
    out.push(Problem::new(Kind::Schema, path, error.to_string()));
}

/// `"a", "b" or "c"`.
fn one_of(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// A value in a message: an object by its keys, an array elided.
fn short(value: &Value) -> String {
    match value {
        Value::Object(fields) => {
            let keys: Vec<String> =
                fields.keys().map(|k| format!("{}: …", Value::from(k.as_str()))).collect();
            format!("{{{}}}", keys.join(", "))
        }
        Value::Array(items) if !items.is_empty() => "[…]".to_owned(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// The walk.

/// Walks `value` alongside a derived `schema`: the fields no schema declares (objects that
/// declare `properties` are closed, as serde's structs are; `additionalProperties`, maps, and
/// schemas that declare nothing are open) and, for an optional property whose schema does not
/// allow `null`, a `null` (always; `unknown` says whether unknown fields are looked for).
/// Variants are picked as serde picks them: by tag, by key, else the first that fits.
pub(crate) fn walk(schema: &Value, value: &Value, unknown: bool) -> Vec<Problem> {
    let mut walker = Walker { root: schema, unknown, problems: Vec::new() };
    walker.walk(value, &[schema], &mut String::new(), 0);
    walker.problems
}

struct Walker<'s> {
    root: &'s Value,
    unknown: bool,
    problems: Vec<Problem>,
}

/// The schemas that apply to one value, `$ref`s followed and variants picked.
#[derive(Default)]
struct View<'s> {
    schemas: Vec<&'s Map<String, Value>>,
    /// Some schema lets any key in, or could not be followed: no key is unknown.
    open: bool,
}

impl<'s> Walker<'s> {
    fn walk(&mut self, value: &Value, schemas: &[&'s Value], path: &mut String, depth: usize) {
        if depth > MAX_DEPTH || !(value.is_object() || value.is_array()) {
            return;
        }
        let mut view = View::default();
        for schema in schemas {
            self.gather(schema, value, &mut view, depth);
        }
        let len = path.len();
        match value {
            Value::Object(fields) => {
                let declares = view.schemas.iter().any(|s| {
                    s.contains_key("properties")
                        || s.get("additionalProperties") == Some(&Value::Bool(false))
                        || s.get("unevaluatedProperties") == Some(&Value::Bool(false))
                });
                let extra: Vec<&'s Value> = view
                    .schemas
                    .iter()
                    .filter_map(|s| s.get("additionalProperties"))
                    .filter(|s| **s != Value::Bool(false))
                    .collect();
                let open = view.open
                    || !declares
                    || !extra.is_empty()
                    || view.schemas.iter().any(|s| {
                        s.contains_key("patternProperties")
                            || s.get("unevaluatedProperties").is_some_and(|u| *u != Value::Bool(false))
                    });
                for (key, field) in fields {
                    let declared: Vec<&'s Value> =
                        view.schemas.iter().filter_map(|s| s.get("properties")?.get(key)).collect();
                    push_key(path, key);
                    if !declared.is_empty() {
                        let required = view.schemas.iter().any(|s| required_of(s).contains(&key.as_str()));
                        if field.is_null()
                            && !required
                            && !declared.iter().all(|s| admits_null(self.root, s, 0))
                        {
                            self.problems.push(Problem::new(Kind::Null, path.clone(), NULL));
                        } else {
                            self.walk(field, &declared, path, depth + 1);
                        }
                    } else if !extra.is_empty() {
                        self.walk(field, &extra, path, depth + 1);
                    } else if !open && self.unknown {
                        self.problems.push(Problem::new(Kind::Unknown, path.clone(), UNKNOWN));
                    }
                    path.truncate(len);
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    let applicable: Vec<&'s Value> = view
                        .schemas
                        .iter()
                        .filter_map(|s| {
                            let prefix = s.get("prefixItems").and_then(Value::as_array);
                            match prefix.and_then(|p| p.get(index)) {
                                Some(schema) => Some(schema),
                                None => s.get("items"),
                            }
                        })
                        .collect();
                    if !applicable.is_empty() {
                        path.push('/');
                        path.push_str(&index.to_string());
                        self.walk(item, &applicable, path, depth + 1);
                        path.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }

    /// Adds `schema` and the schemas it applies in place (`$ref`, `allOf`, the picked variants of
    /// `oneOf`/`anyOf`) to `view`.
    fn gather(&self, schema: &'s Value, value: &Value, view: &mut View<'s>, depth: usize) {
        let obj = match schema {
            Value::Object(obj) if depth <= MAX_DEPTH => obj,
            Value::Bool(false) => return,
            _ => {
                view.open = true;
                return;
            }
        };
        view.schemas.push(obj);
        if let Some(reference) = obj.get("$ref") {
            match reference.as_str().and_then(|r| resolve(self.root, r)) {
                Some(target) => self.gather(target, value, view, depth + 1),
                None => view.open = true,
            }
        }
        if ["$dynamicRef", "if", "dependentSchemas"].iter().any(|k| obj.contains_key(*k)) {
            view.open = true;
        }
        if let Some(Value::Array(all)) = obj.get("allOf") {
            for schema in all {
                self.gather(schema, value, view, depth + 1);
            }
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = obj.get(key) {
                match pick(self.root, branches, value) {
                    Some(picked) => {
                        for index in picked {
                            self.gather(&branches[index], value, view, depth + 1);
                        }
                    }
                    None => view.open = true,
                }
            }
        }
    }
}

/// The variants serde would read `value` as: the one its tag names (internally, adjacently
/// tagged), the one its key names (externally tagged), else the first that fits (untagged).
/// `None` when none does: the validator explains that.
fn pick(root: &Value, branches: &[Value], value: &Value) -> Option<Vec<usize>> {
    let resolved: Vec<&Value> = branches.iter().map(|b| deref(root, b)).collect();
    if let Some(tag) = tag_of(&resolved) {
        let given = value.as_object()?.get(tag.key)?;
        let picked: Vec<usize> = tag.values.iter().filter(|(_, v)| *v == given).map(|&(i, _)| i).collect();
        return (!picked.is_empty()).then_some(picked);
    }
    if let Some(external) = external_of(&resolved) {
        return match value {
            Value::Object(fields) => {
                let picked: Vec<usize> = external
                    .keyed
                    .iter()
                    .filter(|(_, key)| fields.contains_key(*key))
                    .map(|&(i, _)| i)
                    .take(1)
                    .collect();
                (!picked.is_empty()).then_some(picked)
            }
            _ => Some(Vec::new()),
        };
    }
    if let Some(index) = branches.iter().position(|b| fits(root, b, value, 0)) {
        return Some(vec![index]);
    }
    // None fits (the value is invalid): the only variant of the value's type, if one is
    // (`Option<T>`'s `T` for an object), so that the fields of an invalid value are still
    // looked at.
    let mut typed = resolved.iter().enumerate().filter(|(_, b)| match b.get("type") {
        Some(t) => fits(root, &serde_json::json!({ "type": t }), value, 0),
        None => false,
    });
    match (typed.next(), typed.next()) {
        (Some((index, _)), None) => Some(vec![index]),
        _ => None,
    }
}

/// The tag of internally or adjacently tagged variants: a property every variant requires,
/// each with a constant value.
struct Tag<'s> {
    key: &'s str,
    /// Each variant's index and tag value.
    values: Vec<(usize, &'s Value)>,
}

fn tag_of<'s>(branches: &[&'s Value]) -> Option<Tag<'s>> {
    let first = branches.first()?.get("properties")?.as_object()?;
    'keys: for key in first.keys() {
        let mut values = Vec::with_capacity(branches.len());
        for (index, branch) in branches.iter().enumerate() {
            let Value::Object(branch) = branch else { continue 'keys };
            let value = branch.get("properties").and_then(|p| p.get(key)).and_then(constant);
            match value {
                Some(value) if required_of(branch).contains(&key.as_str()) => values.push((index, value)),
                _ => continue 'keys,
            }
        }
        return Some(Tag { key, values });
    }
    None
}

/// Externally tagged variants: unit variants are strings, the others objects of one key.
struct External<'s> {
    units: Vec<&'s Value>,
    /// Each keyed variant's index and key.
    keyed: Vec<(usize, &'s str)>,
}

fn external_of<'s>(branches: &[&'s Value]) -> Option<External<'s>> {
    let mut external = External { units: Vec::new(), keyed: Vec::new() };
    for (index, branch) in branches.iter().enumerate() {
        let Value::Object(branch) = branch else { return None };
        if let Some(value) = branch.get("const") {
            external.units.push(value);
        } else if let Some(Value::Array(values)) = branch.get("enum") {
            external.units.extend(values);
        } else {
            let properties = branch.get("properties").and_then(Value::as_object)?;
            let required = required_of(branch);
            match (properties.keys().next(), properties.len(), required.as_slice()) {
                (Some(key), 1, [only]) if key == only => external.keyed.push((index, key.as_str())),
                _ => return None,
            }
        }
    }
    Some(external)
}

/// A schema's single value: `const`, or an `enum` of one.
fn constant(schema: &Value) -> Option<&Value> {
    match (schema.get("const"), schema.get("enum").and_then(Value::as_array)) {
        (Some(value), _) => Some(value),
        (None, Some(values)) if values.len() == 1 => values.first(),
        _ => None,
    }
}

/// Whether `value` fits `schema` as far as decoding would check it: types, constant values,
/// required and closed properties, numeric bounds, recursively. Lengths and patterns are
/// ignored (serde does not check them either).
fn fits(root: &Value, schema: &Value, value: &Value, depth: usize) -> bool {
    let obj = match schema {
        Value::Bool(b) => return *b,
        Value::Object(obj) if depth <= MAX_DEPTH => obj,
        _ => return true,
    };
    if let Some(target) = obj.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r))
        && !fits(root, target, value, depth + 1)
    {
        return false;
    }
    if let Some(types) = obj.get("type") {
        let one = |t: &Value| match t.as_str() {
            Some("null") => value.is_null(),
            Some("boolean") => value.is_boolean(),
            Some("string") => value.is_string(),
            Some("integer") => value.is_i64() || value.is_u64(),
            Some("number") => value.is_number(),
            Some("array") => value.is_array(),
            Some("object") => value.is_object(),
            _ => true,
        };
        let ok = match types {
            Value::Array(types) => types.iter().any(one),
            t => one(t),
        };
        if !ok {
            return false;
        }
    }
    if obj.get("const").is_some_and(|c| c != value)
        || obj.get("enum").and_then(Value::as_array).is_some_and(|e| !e.contains(value))
    {
        return false;
    }
    if let Some(n) = value.as_f64() {
        let bound = |key: &str, ok: fn(f64, f64) -> bool| {
            obj.get(key).and_then(Value::as_f64).is_none_or(|b| ok(n, b))
        };
        if !(bound("minimum", |n, b| n >= b)
            && bound("maximum", |n, b| n <= b)
            && bound("exclusiveMinimum", |n, b| n > b)
            && bound("exclusiveMaximum", |n, b| n < b))
        {
            return false;
        }
    }
    match value {
        Value::Object(fields) => {
            if !required_of(obj).iter().all(|k| fields.contains_key(*k)) {
                return false;
            }
            let properties = obj.get("properties").and_then(Value::as_object);
            if let Some(properties) = properties {
                for (key, field) in fields {
                    if let Some(schema) = properties.get(key)
                        && !fits(root, schema, field, depth + 1)
                    {
                        return false;
                    }
                }
            }
            if obj.get("additionalProperties") == Some(&Value::Bool(false))
                && !fields.keys().all(|k| properties.is_some_and(|p| p.contains_key(k)))
            {
                return false;
            }
        }
        Value::Array(items) => {
            let prefix = obj.get("prefixItems").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            for (index, item) in items.iter().enumerate() {
                let schema = prefix.get(index).or_else(|| obj.get("items"));
                if schema.is_some_and(|s| !fits(root, s, item, depth + 1)) {
                    return false;
                }
            }
        }
        _ => {}
    }
    if let Some(Value::Array(all)) = obj.get("allOf")
        && !all.iter().all(|s| fits(root, s, value, depth + 1))
    {
        return false;
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = obj.get(key)
            && !branches.iter().any(|s| fits(root, s, value, depth + 1))
        {
            return false;
        }
    }
    true
}

/// Whether `schema` allows `null`.
fn admits_null(root: &Value, schema: &Value, depth: usize) -> bool {
    let obj = match schema {
        Value::Bool(b) => return *b,
        Value::Object(obj) if depth <= MAX_DEPTH => obj,
        _ => return true,
    };
    if let Some(target) = obj.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r))
        && !admits_null(root, target, depth + 1)
    {
        return false;
    }
    let typed = match obj.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => true,
    };
    typed
        && obj.get("const").is_none_or(Value::is_null)
        && obj.get("enum").and_then(Value::as_array).is_none_or(|e| e.contains(&Value::Null))
        && ["oneOf", "anyOf"].iter().all(|k| {
            obj.get(*k)
                .and_then(Value::as_array)
                .is_none_or(|b| b.iter().any(|s| admits_null(root, s, depth + 1)))
        })
        && obj
            .get("allOf")
            .and_then(Value::as_array)
            .is_none_or(|b| b.iter().all(|s| admits_null(root, s, depth + 1)))
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

fn required_of(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |r| r.iter().filter_map(Value::as_str).collect())
}

/// A local `$ref` (`#`, `#/$defs/Name`), resolved in `root`.
fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() { Some(root) } else { root.pointer(pointer) }
}

/// `schema`, or what its `$ref` points at.
fn deref<'s>(root: &'s Value, schema: &'s Value) -> &'s Value {
    let mut schema = schema;
    for _ in 0..MAX_DEPTH {
        match schema.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r)) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lines(problems: Vec<Problem>) -> Vec<String> {
        problems.iter().map(Problem::line).collect()
    }

    #[test]
    fn closed_objects_report_unknown_fields_and_open_ones_do_not() {
        let schema = json!({"type": "object", "properties": {
            "s": {"type": "object", "properties": {"a": {"type": "integer"}}},
            "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {}}}},
            "any": true,
            "obj": {"type": "object"},
        }});
        let value = json!({"s": {"a": 1, "b": 2}, "m": {"k": {"x": 1, "y": 2}}, "any": {"z": 1}, "obj": {"z": 1}, "w": 1});
        assert_eq!(
            lines(walk(&schema, &value, true)),
            [format!("/s/b: {UNKNOWN}"), format!("/m/k/y: {UNKNOWN}"), format!("/w: {UNKNOWN}")]
        );
        assert!(walk(&schema, &value, false).is_empty(), "nulls only");
    }

    #[test]
    fn refs_are_followed_and_keys_escaped() {
        let schema = json!({"type": "object", "properties": {"t": {"$ref": "#/$defs/T"}}, "$defs": {
            "T": {"type": "object", "properties": {"c": {"type": "array", "items": {"$ref": "#/$defs/T"}}}}
        }});
        let value = json!({"t": {"c": [{"c": [], "a/b": 1}]}});
        assert_eq!(lines(walk(&schema, &value, true)), [format!("/t/c/0/a~1b: {UNKNOWN}")]);
    }

    #[test]
    fn an_invalid_value_is_walked_with_the_only_variant_of_its_type() {
        let schema = json!({"type": "array", "items": {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"type": "null"},
        ]}});
        let value = json!([{"a": "x", "b": 1}, null, {"a": 1}]);
        assert_eq!(lines(walk(&schema, &value, true)), [format!("/0/b: {UNKNOWN}")]);
    }

    #[test]
    fn nulls_are_refused_only_for_optional_properties_without_null() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string"},
            "b": {"type": ["string", "null"]},
            "c": {"type": "string"},
            "d": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "e": {},
        }, "required": ["c"]});
        let value = json!({"a": null, "b": null, "c": null, "d": null, "e": null});
        assert_eq!(lines(walk(&schema, &value, false)), [format!("/a: {NULL}")]);
        assert!(Checks::of(&schema, false).nulls);
        assert!(!Checks::of(&json!({"properties": {"b": {"type": ["string", "null"]}}}), false).nulls);
    }

    #[test]
    fn only_compositions_that_may_hold_objects_need_the_walk() {
        let strings = json!({"properties": {"p": {"oneOf": [{"type": "string", "enum": ["a"]}, {"type": "string", "const": "b"}]}}});
        let option =
            json!({"properties": {"p": {"items": {"anyOf": [{"type": "object"}, {"type": "null"}]}}}});
        let tagged = json!({"properties": {"p": {"oneOf": [{"type": "object"}, {"type": "object"}]}}});
        assert!(!Checks::of(&strings, false).walk);
        assert!(!Checks::of(&option, false).walk);
        assert!(Checks::of(&tagged, false).walk);
    }

    #[test]
    fn problems_are_merged_and_ordered_as_the_arguments() {
        let value = json!({"a": 1, "b": {"c": null}, "d": 2});
        let found = vec![
            Problem::new(Kind::Schema, "/d", "d is wrong"),
            Problem::new(Kind::Schema, "/b/c", "null is not of type \"string\""),
            Problem::new(Kind::Null, "/b/c", NULL),
            Problem::new(Kind::Unknown, "/a", UNKNOWN),
            Problem::new(Kind::Unknown, "/a", UNKNOWN),
            Problem::new(Kind::Decode, "/d", "invalid type"),
            Problem::new(Kind::Decode, "/e", "missing"),
        ];
        assert_eq!(
            lines(in_document_order(merge(found), &value)),
            // A path the arguments do not have is placed at their root.
            [
                "/e: missing".to_owned(),
                format!("/a: {UNKNOWN}"),
                format!("/b/c: {NULL}"),
                "/d: d is wrong".to_owned(),
            ]
        );
    }
}
