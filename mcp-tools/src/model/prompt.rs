//! Prompts: message templates a user picks in the client (`prompts/list`, `prompts/get`).
//! Define one with [`#[prompt]`](macro@crate::prompt) on a function whose parameters are the
//! prompt's arguments, or build a [`Prompt`] at run time.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::context::Context;
use crate::model::error::ToolError;
use crate::model::resource::ItemCompleter;
use crate::model::result::{Content, EmbeddedResource};

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// One content block.
    pub content: Content,
}

impl PromptMessage {
    /// A user message with text.
    pub fn user(text: impl Into<String>) -> Self {
        PromptMessage { role: "user".into(), content: Content::text(text) }
    }
    /// An assistant message with text.
    pub fn assistant(text: impl Into<String>) -> Self {
        PromptMessage { role: "assistant".into(), content: Content::text(text) }
    }
    /// A message with any content block (image, audio, embedded resource, …).
    pub fn new(role: impl Into<String>, content: Content) -> Self {
        PromptMessage { role: role.into(), content }
    }
    /// A user message embedding a resource.
    pub fn user_resource(resource: EmbeddedResource) -> Self {
        PromptMessage { role: "user".into(), content: Content::Resource { resource } }
    }
}

/// The result of `prompts/get`: an optional description and the messages.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PromptResult {
    /// A description of this rendering.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl PromptResult {
    /// A result of these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        PromptResult { description: None, messages }
    }
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// What a prompt function returns, converted to a [`PromptResult`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a #[prompt] function",
    label = "this return type",
    note = "return `String` (one user message), `PromptMessage`, `Vec<PromptMessage>`, `PromptResult`, or a `Result` of one of these"
)]
pub trait IntoPromptResult {
    /// Converts the value.
    fn into_prompt_result(self) -> PromptResult;
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> PromptResult {
        PromptResult::new(vec![PromptMessage::user(self)])
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> PromptResult {
        self.to_owned().into_prompt_result()
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> PromptResult {
        PromptResult::new(vec![self])
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> PromptResult {
        PromptResult::new(self)
    }
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> PromptResult {
        self
    }
}

/// One argument of a prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether `prompts/get` must supply it.
    pub required: bool,
}

impl PromptArgument {
    /// A required argument.
    pub fn required(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArgument { name: name.into(), description: Some(description.into()), required: true }
    }
    /// An optional argument.
    pub fn optional(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArgument { name: name.into(), description: Some(description.into()), required: false }
    }
}

pub(crate) type PromptHandler = Arc<
    dyn Fn(HashMap<String, String>, Context) -> BoxFuture<'static, Result<PromptResult, ToolError>>
        + Send
        + Sync,
>;

/// A prompt built at run time.
///
/// ```
/// use mcp_tools::{Prompt, PromptArgument, PromptMessage, PromptResult};
/// let review = Prompt::new("review", "Review a piece of code.", |args, _ctx| async move {
///     let code = args.get("code").cloned().unwrap_or_default();
///     Ok(PromptResult::new(vec![PromptMessage::user(format!("Review this code:\n{code}"))]))
/// })
/// .argument(PromptArgument::required("code", "The code to review"));
/// ```
#[derive(Clone)]
pub struct Prompt {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) arguments: Vec<PromptArgument>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) scopes: Arc<[String]>,
    pub(crate) handler: PromptHandler,
    /// Completes this prompt's arguments instead of the server's completer.
    pub(crate) completer: Option<ItemCompleter>,
}

impl Prompt {
    /// A prompt named `name` with a description, rendered by `handler` from the arguments.
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        F: Fn(HashMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptResult, ToolError>> + Send + 'static,
    {
        Prompt {
            name: name.into(),
            title: None,
            description: description.into(),
            arguments: Vec::new(),
            meta: None,
            scopes: Arc::from([]),
            handler: Arc::new(move |args, ctx| Box::pin(handler(args, ctx))),
            completer: None,
        }
    }
    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Adds an argument.
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }
    /// The OAuth scopes a caller needs (over HTTP with authorization): a caller without them
    /// does not see the prompt listed, and getting it is answered with the 403 step-up.
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
    /// Adds a `_meta` entry.
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta.get_or_insert_with(Map::new).insert(key.into(), value.into());
        self
    }

    pub(crate) fn definition(&self) -> Value {
        let mut def =
            json!({"name": self.name, "description": self.description, "arguments": self.arguments});
        if let Some(title) = &self.title {
            def["title"] = json!(title);
        }
        if let Some(meta) = &self.meta {
            def["_meta"] = Value::Object(meta.clone());
        }
        def
    }
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .field("title", &self.title)
            .field("description", &self.description)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}
