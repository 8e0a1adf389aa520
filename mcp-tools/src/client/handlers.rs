//! What a client answers the server's questions with: its roots, and the defaults an
//! elicitation's answer gets for the fields it leaves out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A root the client offers the server (`roots/list`): a `file://` URI, and a name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// The root's URI (`file:///home/me/project`).
    pub uri: String,
    /// Its name, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// A root at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Root { uri: uri.into(), name: None }
    }
    /// Names it.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Fills in an accepted elicitation `answer` the defaults that `requested_schema` gives for the
/// fields it leaves out (SEP-1034: a client applies them), as the client does with every
/// answer of its elicitation handler.
///
/// ```
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {
///     "name": {"type": "string", "default": "Ada"},
///     "age": {"type": "integer"}}});
/// let mut answer = json!({"action": "accept", "content": {"age": 36}});
/// mcp_tools::client::elicitation_defaults(&schema, &mut answer);
/// assert_eq!(answer["content"], json!({"age": 36, "name": "Ada"}));
/// ```
pub fn elicitation_defaults(requested_schema: &Value, answer: &mut Value) {
    if answer["action"] != "accept" {
        return;
    }
    let Some(properties) = requested_schema["properties"].as_object() else { return };
    if !answer["content"].is_object() {
        answer["content"] = Value::Object(Default::default());
    }
    let content = answer["content"].as_object_mut().expect("made an object above");
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}
