//! The `SKILL.md` front matter rules (the Agent Skills specification, agentskills.io): a YAML
//! mapping between `---` lines at the top of the file, with `name` (1 to 64 lowercase letters,
//! digits and hyphens, no hyphen first, last or doubled, and the skill's folder name) and
//! `description` (1 to 1024 characters); `license`, `compatibility` (at most 500 characters),
//! `metadata` (text values by text keys, none under the `io.modelcontextprotocol/` prefix
//! reserved for MCP extensions) and `allowed-tools` are optional, and any other field passes
//! through.
//!
//! This file is compiled twice, as it is: by the runtime (`mcp-tools/src/skills/format.rs`, for
//! `ServerBuilder::skills`) and by the macros (`mcp-tools-macros/src/skills/format.rs`, for
//! `skills!`, which checks at compile time). `tests/skills.rs` fails when the two copies differ.

use serde_json::{Map, Value};

/// The front matter of `text` (a `SKILL.md`) as a JSON object, checked; or every problem found,
/// one sentence each (a field's problem starts with "front matter field `name`:").
pub(crate) fn front_matter(text: &str, folder: &str) -> Result<Map<String, Value>, Vec<String>> {
    let fields = parse(text).map_err(|problem| vec![problem])?;
    let mut problems = Vec::new();
    let mut field =
        |name: &str, problem: String| problems.push(format!("front matter field `{name}`: {problem}"));
    match fields.get("name") {
        None => field("name", "missing; it is required (the skill's folder name)".into()),
        Some(Value::String(name)) => {
            if let Some(problem) = name_problem(name) {
                field("name", problem);
            } else if name != folder {
                field(
                    "name",
                    format!("`{name}` is not the skill's folder name `{folder}`; they must be equal"),
                );
            }
        }
        Some(other) => field("name", format!("must be text, not {}", kind(other))),
    }
    match fields.get("description") {
        None => {
            field("description", "missing; it is required (what the skill does and when to use it)".into())
        }
        Some(Value::String(text)) if text.trim().is_empty() => field("description", "is empty".into()),
        Some(Value::String(text)) if text.chars().count() > 1024 => {
            field(
                "description",
                format!("has {} characters; at most 1024 are allowed", text.chars().count()),
            );
        }
        Some(Value::String(_)) => {}
        Some(other) => field("description", format!("must be text, not {}", kind(other))),
    }
    for name in ["license", "allowed-tools"] {
        match fields.get(name) {
            None | Some(Value::String(_)) => {}
            Some(other) => field(name, format!("must be text, not {}", kind(other))),
        }
    }
    match fields.get("compatibility") {
        None => {}
        Some(Value::String(text)) if text.trim().is_empty() => field("compatibility", "is empty".into()),
        Some(Value::String(text)) if text.chars().count() > 500 => {
            field(
                "compatibility",
                format!("has {} characters; at most 500 are allowed", text.chars().count()),
            );
        }
        Some(Value::String(_)) => {}
        Some(other) => field("compatibility", format!("must be text, not {}", kind(other))),
    }
    match fields.get("metadata") {
        None => {}
        Some(Value::Object(entries)) => {
            for (key, value) in entries {
                if key.starts_with("io.modelcontextprotocol/") {
                    field("metadata", format!("the key `{key}` is reserved for MCP extensions"));
                } else if !value.is_string() {
                    field("metadata", format!("the value of `{key}` must be text, not {}", kind(value)));
                }
            }
        }
        Some(other) => field("metadata", format!("must be a mapping of text values, not {}", kind(other))),
    }
    if problems.is_empty() { Ok(fields) } else { Err(problems) }
}

/// The front matter of `text` (a `SKILL.md`) as a JSON object, as written (not checked); or
/// why there is none.
pub(crate) fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let yaml = block(text)?;
    let value: Value = serde_saphyr::from_str(yaml)
        .map_err(|e| format!("its front matter is not valid YAML: {}", first_line(&e.to_string())))?;
    match value {
        Value::Object(fields) => Ok(fields),
        Value::Null => Err("its front matter is empty: `name` and `description` are required".into()),
        _ => Err("its front matter is not a mapping of fields".into()),
    }
}

/// What is wrong with `name` as a skill name, if anything.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.len() > 64 {
        return Some(format!("`{name}` has {} characters; a skill name has 1 to 64", name.chars().count()));
    }
    if let Some(c) = name.chars().find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '-')) {
        return Some(format!(
            "`{name}` has `{c}`; a skill name has only lowercase letters, digits and hyphens"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Some(format!("`{name}` starts or ends with a hyphen, or doubles one; neither is allowed"));
    }
    None
}

/// The YAML between the opening and closing `---` lines.
fn block(text: &str) -> Result<&str, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let opening = lines.next().unwrap_or_default();
    if opening.trim_end() != "---" {
        return Err("it does not begin with a `---` line opening its YAML front matter".into());
    }
    let start = opening.len();
    let mut at = start;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok(&text[start..at]);
        }
        at += line.len();
    }
    Err("its front matter has no closing `---` line".into())
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or(message)
}
