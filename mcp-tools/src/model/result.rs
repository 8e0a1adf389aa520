//! What a tool returns: [`ToolResult`] (content blocks, structured content, `isError`, `_meta`)
//! and the [`ToolOutput`] trait that turns a handler's return value into one.

use schemars::JsonSchema;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::context::link::ClientError;
use crate::model::error::ToolError;
use crate::model::resource::{ResourceContents, base64_encode};

/// One content block of a tool result.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Plain (or Markdown) text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 of the image bytes.
        data: String,
        /// e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 of the audio bytes.
        data: String,
        /// e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource embedded in the result.
    Resource {
        /// The resource's contents.
        resource: EmbeddedResource,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its programmatic name.
        name: String,
        /// Description, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// MIME type, if known.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// A block as another server sent it (a proxied tool's result), passed on verbatim.
    #[serde(untagged)]
    Json(Value),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }
    /// An image block from raw bytes (base64-encoded here).
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image { data: base64_encode(bytes.as_ref()), mime_type: mime_type.into() }
    }
    /// An audio block from raw bytes (base64-encoded here).
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio { data: base64_encode(bytes.as_ref()), mime_type: mime_type.into() }
    }
    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// The contents of an embedded resource (`{"type": "resource", "resource": …}`): the same
/// shape as what `resources/read` returns.
pub type EmbeddedResource = ResourceContents;

/// Structured content, kept as the JSON text it was serialized to once (derived tools) or as a
/// value (runtime tools and builders).
#[derive(Clone, Debug)]
pub(crate) enum Structured {
    Raw(Box<RawValue>),
    Value(Value),
}

impl Serialize for Structured {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Structured::Raw(raw) => raw.serialize(s),
            Structured::Value(v) => v.serialize(s),
        }
    }
}

/// A result's content blocks: made here, or passed on as the JSON text another server sent
/// (an array), read into values ([`Content::Json`]) only when asked for.
#[derive(Clone, Debug)]
enum Blocks {
    Built(Vec<Content>),
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    Passed {
        text: Box<RawValue>,
        read: std::sync::OnceLock<Vec<Content>>,
    },
}

impl Default for Blocks {
    fn default() -> Self {
        Blocks::Built(Vec::new())
    }
}

impl Blocks {
    fn get(&self) -> &[Content] {
        match self {
            Blocks::Built(blocks) => blocks,
            Blocks::Passed { text, read } => read.get_or_init(|| Blocks::read(text)),
        }
    }

    fn to_mut(&mut self) -> &mut Vec<Content> {
        if let Blocks::Passed { text, read } = self {
            let blocks = read.take().unwrap_or_else(|| Blocks::read(text));
            *self = Blocks::Built(blocks);
        }
        match self {
            Blocks::Built(blocks) => blocks,
            Blocks::Passed { .. } => unreachable!("made built above"),
        }
    }

    fn read(text: &RawValue) -> Vec<Content> {
        serde_json::from_str::<Vec<Value>>(text.get())
            .map(|blocks| blocks.into_iter().map(Content::Json).collect())
            .unwrap_or_default()
    }
}

impl Serialize for Blocks {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Blocks::Built(blocks) => blocks.serialize(s),
            Blocks::Passed { text, .. } => text.serialize(s),
        }
    }
}

/// The result of a `tools/call`: content blocks for the model, optional structured content
/// (an object) for programs and views, an error flag, and `_meta`.
///
/// Build one for mixed content:
///
/// ```
/// use mcp_tools::{Content, EmbeddedResource, ToolResult};
/// let result = ToolResult::new()
///     .text("Here is the chart and its data.")
///     .image(&[0x89, b'P', b'N', b'G'], "image/png")
///     .resource(EmbeddedResource::text("notes://1", Some("text/markdown"), "# Note"))
///     .meta("trace", "abc");
/// assert_eq!(result.content().len(), 3);
/// assert!(!result.is_error());
/// ```
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    content: Blocks,
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<Structured>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Map<String, Value>>,
    /// The client capability whose absence made the call fail (a `ClientError` passed up with
    /// `?`): a 2026-07-28 request is then answered with the protocol's error naming it.
    #[serde(skip)]
    missing_capability: Option<String>,
    /// The handler panicked (a task then fails rather than completes).
    #[serde(skip)]
    panicked: bool,
    /// The call failed at the protocol level, with this JSON-RPC error object (a mounted tool
    /// whose upstream task failed): a task then fails with it; a call answered at once is a
    /// failed result like any other.
    #[serde(skip)]
    protocol_error: Option<Value>,
    /// The caller lacks these scopes (`ToolError::insufficient_scope`): answered with the
    /// authorization step-up where requests carry tokens.
    #[serde(skip)]
    required_scopes: Option<Vec<String>>,
}

impl ToolResult {
    /// An empty, successful result.
    pub fn new() -> Self {
        Self::default()
    }
    /// A failed result (`isError: true`) whose text is `message`.
    pub fn error(message: impl Into<String>) -> Self {
        ToolResult { content: Blocks::Built(vec![Content::text(message)]), is_error: true, ..Self::default() }
    }
    /// A successful result with structured content (must serialize to a JSON object) and the
    /// same JSON as a text block for clients that read only text.
    pub fn structured(value: impl Serialize) -> Result<Self, ToolError> {
        let value = serde_json::to_value(value).map_err(ToolError::internal)?;
        let text = value.to_string();
        Ok(ToolResult {
            content: Blocks::Built(vec![Content::text(text)]),
            structured_content: Some(Structured::Value(value)),
            ..Self::default()
        })
    }
    /// Appends a text block.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.content.to_mut().push(Content::text(text));
        self
    }
    /// Appends a Markdown text block (MCP text blocks carry Markdown; hosts render it).
    pub fn markdown(self, markdown: impl Into<String>) -> Self {
        self.text(markdown)
    }
    /// Appends an image block from raw bytes.
    pub fn image(mut self, bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        self.content.to_mut().push(Content::image(bytes, mime_type));
        self
    }
    /// Appends an audio block from raw bytes.
    pub fn audio(mut self, bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        self.content.to_mut().push(Content::audio(bytes, mime_type));
        self
    }
    /// Appends an embedded resource.
    pub fn resource(mut self, resource: EmbeddedResource) -> Self {
        self.content.to_mut().push(Content::Resource { resource });
        self
    }
    /// Appends a link to a resource.
    pub fn resource_link(
        mut self,
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: Option<&str>,
    ) -> Self {
        self.content.to_mut().push(Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: mime_type.map(str::to_owned),
        });
        self
    }
    /// Appends any content block.
    pub fn content_block(mut self, content: Content) -> Self {
        self.content.to_mut().push(content);
        self
    }
    /// Sets the structured content (a JSON object) without adding a text block.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured_content = Some(Structured::Value(value));
        self
    }
    /// Adds a `_meta` entry.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta.get_or_insert_with(Map::new).insert(key.into(), value.into());
        self
    }
    /// Marks the result as failed (`isError: true`) or not.
    pub fn with_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// The content blocks.
    pub fn content(&self) -> &[Content] {
        self.content.get()
    }
    /// Whether the result reports a failure.
    pub fn is_error(&self) -> bool {
        self.is_error
    }
    /// The structured content, parsed.
    pub fn structured_content(&self) -> Option<Value> {
        match self.structured_content.as_ref()? {
            Structured::Value(v) => Some(v.clone()),
            Structured::Raw(raw) => serde_json::from_str(raw.get()).ok(),
        }
    }
    /// The `_meta` map.
    pub fn meta_map(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()
    }
    /// The text of every text block, joined by newlines.
    pub fn joined_text(&self) -> String {
        self.content.get().iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
    }

    pub(crate) fn structured_value(&self) -> Option<&Value> {
        match self.structured_content.as_ref()? {
            Structured::Value(v) => Some(v),
            Structured::Raw(_) => None,
        }
    }
    /// The failed result of a tool whose handler returned `error`; its internal detail is logged.
    pub(crate) fn from_error(error: ToolError, tool: &str) -> Self {
        let missing_capability = match error.source_error().and_then(|s| s.downcast_ref::<ClientError>()) {
            Some(ClientError::MissingCapability(capability)) => Some(capability.clone()),
            _ => None,
        };
        if let Some(source) = error.source_error() {
            tracing::warn!(tool, error = %source, "tool failed: {}", error.message());
        }
        let required_scopes = error.required_scopes().map(<[String]>::to_vec);
        ToolResult { missing_capability, required_scopes, ..ToolResult::error(error.message().to_owned()) }
    }
    /// The failed result of a call the caller lacks `scopes` for.
    pub(crate) fn insufficient_scope(scopes: &[String]) -> Self {
        ToolResult::from_error(ToolError::insufficient_scope(scopes.iter().cloned()), "")
    }
    /// The scopes the caller lacked, if that is why the call failed.
    pub(crate) fn required_scopes(&self) -> Option<&[String]> {
        self.required_scopes.as_deref()
    }
    /// The failed result of a handler that panicked.
    pub(crate) fn from_panic(message: impl Into<String>) -> Self {
        ToolResult { panicked: true, ..ToolResult::error(message) }
    }
    /// Whether the handler panicked.
    pub(crate) fn panicked(&self) -> bool {
        self.panicked
    }
    /// The failed result of a call that failed at the protocol level with `error` (a JSON-RPC
    /// error object), saying `message`.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn protocol_failure(message: impl Into<String>, error: Value) -> Self {
        ToolResult { protocol_error: Some(error), ..ToolResult::error(message) }
    }
    /// The JSON-RPC error the call failed with at the protocol level, if it did.
    pub(crate) fn protocol_error(&self) -> Option<&Value> {
        self.protocol_error.as_ref()
    }
    /// The client capability whose absence made the call fail, if that is why it failed.
    pub(crate) fn missing_capability(&self) -> Option<&str> {
        self.missing_capability.as_deref()
    }
    /// This result with its structured content wrapped as `{"result": …}` (for 2025-11-25
    /// clients of a tool whose output is not an object).
    pub(crate) fn wrap_structured(mut self) -> Self {
        let value = match self.structured_content.take() {
            None => return self,
            Some(Structured::Value(v)) => v,
            Some(Structured::Raw(raw)) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
        };
        let mut wrapped = Map::new();
        wrapped.insert("result".to_owned(), value);
        self.structured_content = Some(Structured::Value(Value::Object(wrapped)));
        self
    }
    /// A result as another server sent it (a `CallToolResult` as JSON): its content blocks,
    /// structured content, error flag and `_meta`, passed on verbatim (a proxy's, a mounted
    /// server's).
    pub fn from_json(result: Value) -> Self {
        let Value::Object(mut fields) = result else {
            return ToolResult::error("the server answered a tool call with something that is not a result");
        };
        let content = match fields.remove("content") {
            Some(Value::Array(blocks)) => Blocks::Built(blocks.into_iter().map(Content::Json).collect()),
            _ => Blocks::default(),
        };
        let structured_content =
            fields.remove("structuredContent").filter(|v| !v.is_null()).map(Structured::Value);
        let is_error = fields.get("isError") == Some(&Value::Bool(true));
        let meta = match fields.remove("_meta") {
            Some(Value::Object(meta)) => Some(meta),
            _ => None,
        };
        ToolResult { content, structured_content, is_error, meta, ..Self::default() }
    }

    /// [`from_json`](Self::from_json) of a result as the JSON text another server sent, its
    /// content blocks kept as that text (read into values only if asked for): the same result,
    /// sent on with the blocks as they came. `None` for a result that is not a JSON object, or
    /// whose `content` is not an array.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn passed_on(result: &RawValue) -> Option<Self> {
        #[derive(serde::Deserialize)]
        struct Parts<'a> {
            #[serde(borrow)]
            content: Option<&'a RawValue>,
            #[serde(rename = "structuredContent", borrow)]
            structured_content: Option<&'a RawValue>,
            #[serde(rename = "isError", borrow)]
            is_error: Option<&'a RawValue>,
            #[serde(rename = "_meta", borrow)]
            meta: Option<&'a RawValue>,
        }
        // (A key given twice does not read: the caller reads such a result as a value.)
        let parts: Parts<'_> = serde_json::from_str(result.get()).ok()?;
        let content = match parts.content {
            None => Blocks::default(),
            Some(blocks) if blocks.get().starts_with('[') => {
                Blocks::Passed { text: blocks.to_owned(), read: std::sync::OnceLock::new() }
            }
            Some(_) => return None,
        };
        // Structured content is a value, as `from_json` makes it (an output schema checks it).
        let structured_content = match parts.structured_content {
            None => None,
            Some(raw) => Some(Structured::Value(serde_json::from_str(raw.get()).ok()?)),
        };
        let meta = match parts.meta {
            Some(raw) if raw.get().starts_with('{') => Some(serde_json::from_str(raw.get()).ok()?),
            _ => None,
        };
        let is_error = parts.is_error.is_some_and(|raw| raw.get() == "true");
        Some(ToolResult { content, structured_content, is_error, meta, ..Self::default() })
    }

    /// Whether the content blocks are still the text another server sent ([`passed_on`]).
    ///
    /// [`passed_on`]: Self::passed_on
    #[cfg(all(test, feature = "client"))]
    pub(crate) fn is_passed_on(&self) -> bool {
        matches!(self.content, Blocks::Passed { .. })
    }

    pub(crate) fn from_raw_structured(raw: Box<RawValue>) -> Self {
        ToolResult {
            content: Blocks::Built(vec![Content::text(raw.get().to_owned())]),
            structured_content: Some(Structured::Raw(raw)),
            ..Self::default()
        }
    }
}

/// How a tool's return value becomes a result, decided once per tool from its output schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputPlan {
    /// `()`: an empty result, no output schema.
    Empty,
    /// A plain string: one text block, no output schema.
    Text,
    /// Structured content and an output schema; `wrap` puts non-object values in
    /// `{"result": …}`.
    Structured {
        /// Whether the value is wrapped in `{"result": …}`.
        wrap: bool,
    },
}

/// A value a tool can return.
///
/// Implemented for every `T: Serialize + JsonSchema` and for [`ToolResult`]. How a value
/// becomes a result is decided once per tool, at start-up, from `T`'s schema (see
/// [`crate::schema`]):
///
/// * a plain string (`String`, `&'static str`, `Cow<str>` …) becomes one text block;
/// * `()` becomes an empty result;
/// * anything else becomes `structuredContent` (wrapped as `{"result": …}` when it is not a JSON
///   object) plus the same JSON as a text block, and the tool advertises the matching
///   `outputSchema`.
///
/// A `#[tool]` function may also return `Result<T, E>` with `T: ToolOutput` and
/// `E: Into<ToolError>`; `Err` becomes an `isError: true` result.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a #[tool] function",
    label = "this return type",
    note = "derive `serde::Serialize` and `schemars::JsonSchema` for it (it must also be `Send`), or return `String`, `()`, `mcp_tools::ToolResult`, or a `Result` of one of these",
    note = "if it already derives both, your crate may use another major version of serde or schemars than mcp-tools (serde 1, schemars 1): `cargo tree -d` shows duplicates"
)]
pub trait ToolOutput: Send {
    /// The output schema this type advertises (before the schema policy), or `None` for
    /// results without structured content.
    fn output_schema(generator: &mut schemars::SchemaGenerator) -> Option<schemars::Schema>;
    /// Converts the value into a result, following the plan decided at start-up.
    fn into_tool_result(self, plan: OutputPlan) -> ToolResult;
}

// `do_not_recommend`: an unsuitable type is reported with `ToolOutput`'s message, once, rather
// than once per missing trait with the derive's own message.
#[diagnostic::do_not_recommend]
impl<T: Serialize + JsonSchema + Send> ToolOutput for T {
    fn output_schema(generator: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
        Some(generator.root_schema_for::<T>())
    }
    fn into_tool_result(self, plan: OutputPlan) -> ToolResult {
        match plan {
            OutputPlan::Empty => ToolResult::new(),
            OutputPlan::Text => match serde_json::to_value(&self) {
                Ok(Value::String(text)) => ToolResult::new().text(text),
                Ok(other) => ToolResult::new().text(other.to_string()),
                Err(e) => serialize_failure(e),
            },
            OutputPlan::Structured { wrap } => {
                let json = if wrap {
                    #[derive(Serialize)]
                    struct Wrapped<'a, T> {
                        result: &'a T,
                    }
                    serde_json::to_string(&Wrapped { result: &self })
                } else {
                    serde_json::to_string(&self)
                };
                match json.map(RawValue::from_string) {
                    Ok(Ok(raw)) => ToolResult::from_raw_structured(raw),
                    Ok(Err(e)) | Err(e) => serialize_failure(e),
                }
            }
        }
    }
}

fn serialize_failure(error: serde_json::Error) -> ToolResult {
    tracing::error!(%error, "a tool's output could not be serialized");
    ToolResult::error(format!("the tool's output could not be serialized: {error}"))
}

#[diagnostic::do_not_recommend]
impl ToolOutput for ToolResult {
    fn output_schema(_: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
        None
    }
    fn into_tool_result(self, _: OutputPlan) -> ToolResult {
        self
    }
}
