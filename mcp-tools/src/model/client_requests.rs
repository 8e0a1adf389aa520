//! Requests from a tool to the client: sampling (`sampling/createMessage`), elicitation
//! (`elicitation/create`) and roots (`roots/list`). Each checks the capability the client
//! declared, travels on the stream of the call being served (stdio, or the call's SSE stream
//! over HTTP), and is cancelled with the call.

use std::future::Future;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::schema::elicitation_schema_for;
use crate::context::Context;
use crate::context::link::ClientError;

/// A `sampling/createMessage` request: ask the client's model for a completion.
///
/// ```
/// use mcp_tools::SamplingRequest;
/// let request = SamplingRequest::new(200)
///     .system_prompt("You are terse.")
///     .user("Summarise: the sky is blue because of Rayleigh scattering.")
///     .temperature(0.2);
/// ```
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingRequest {
    messages: Vec<Value>,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_preferences: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop_sequences: Vec<String>,
}

impl SamplingRequest {
    /// A request for at most `max_tokens` tokens, with no messages yet.
    pub fn new(max_tokens: u32) -> Self {
        SamplingRequest {
            messages: Vec::new(),
            max_tokens,
            system_prompt: None,
            temperature: None,
            model_preferences: None,
            stop_sequences: Vec::new(),
        }
    }
    /// Appends a user text message.
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push(json!({"role": "user", "content": {"type": "text", "text": text.into()}}));
        self
    }
    /// Appends an assistant text message.
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        self.messages.push(json!({"role": "assistant", "content": {"type": "text", "text": text.into()}}));
        self
    }
    /// Appends a message with any content block (e.g. an image), as JSON.
    pub fn message(mut self, role: &str, content: Value) -> Self {
        self.messages.push(json!({"role": role, "content": content}));
        self
    }
    /// Sets the system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }
    /// Sets the temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }
    /// Sets `modelPreferences` (hints, cost/speed/intelligence priorities), as JSON.
    pub fn model_preferences(mut self, preferences: Value) -> Self {
        self.model_preferences = Some(preferences);
        self
    }
    /// Adds a stop sequence.
    pub fn stop_sequence(mut self, stop: impl Into<String>) -> Self {
        self.stop_sequences.push(stop.into());
        self
    }
}

/// The client's answer to a sampling request.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingResponse {
    /// Usually `assistant`.
    pub role: String,
    /// The content block (text, image or audio), as JSON.
    pub content: Value,
    /// The model that answered.
    #[serde(default)]
    pub model: String,
    /// Why generation stopped, if said.
    #[serde(default)]
    pub stop_reason: Option<String>,
}

impl SamplingResponse {
    /// The text of a text answer.
    pub fn text(&self) -> Option<&str> {
        self.content.get("text").and_then(Value::as_str)
    }
}

/// The user's answer to an elicitation.
#[derive(Clone, Debug, PartialEq)]
pub enum Elicitation<T> {
    /// The user submitted the form.
    Accept(T),
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

/// An elicitation answer in its raw form (`action` and `content`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ElicitationResponse {
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    /// The submitted values (on `accept`).
    #[serde(default)]
    pub content: Option<Value>,
}

/// A root the client exposes (a directory or other location).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// Its URI, e.g. `file:///home/user/project`.
    pub uri: String,
    /// A display name, if given.
    #[serde(default)]
    pub name: Option<String>,
}

// Each method returns a future that owns a clone of the context (an `Arc`), so a question can
// be asked of a temporary, e.g. `ctx.input_key("name").elicit::<T>(…)` inside `tokio::join!`.
impl Context {
    /// Sends any request to the client and returns its raw result. (A 2026-07-28 client can only
    /// be asked `elicitation/create`, `sampling/createMessage` and `roots/list`.)
    pub fn request_client(
        &self,
        method: &str,
        params: Value,
    ) -> impl Future<Output = Result<Value, ClientError>> + Send + 'static {
        let (ctx, method) = (self.clone(), method.to_owned());
        async move {
            let parts = ctx.parts();
            parts.client.request(ctx.input_key_name(), &method, params, &parts.reply, &parts.cancel).await
        }
    }

    fn require_capability(&self, capability: &str) -> Result<(), ClientError> {
        if let Some(unavailable) = self.parts().client.unavailable() {
            return Err(unavailable);
        }
        if self.client_capabilities().contains_key(capability) {
            Ok(())
        } else {
            Err(ClientError::MissingCapability(capability.to_owned()))
        }
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    pub fn sample(
        &self,
        request: SamplingRequest,
    ) -> impl Future<Output = Result<SamplingResponse, ClientError>> + Send + 'static {
        let ctx = self.clone();
        async move {
            ctx.require_capability("sampling")?;
            let params = serde_json::to_value(&request).expect("a sampling request serializes");
            let result = ctx.request_client("sampling/createMessage", params).await?;
            serde_json::from_value(result).map_err(|e| ClientError::Malformed(e.to_string()))
        }
    }

    /// Asks the user for input shaped like `T` (`elicitation/create`). The requested schema is
    /// derived from `T`: a flat object of strings, numbers, booleans and enums (unit variants'
    /// doc comments become their titles); `#[serde(default)]` values are offered as defaults.
    pub fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> impl Future<Output = Result<Elicitation<T>, ClientError>> + Send + 'static {
        let schema = elicitation_schema_for::<T>().map_err(ClientError::Unsupported);
        let asked = schema.map(|schema| self.elicit_with_schema(message, schema));
        async move {
            let response = asked?.await?;
            match response.action.as_str() {
                "accept" => {
                    let content = response.content.unwrap_or_else(|| json!({}));
                    serde_json::from_value(content)
                        .map(Elicitation::Accept)
                        .map_err(|e| ClientError::Malformed(format!("the submitted values do not fit: {e}")))
                }
                "decline" => Ok(Elicitation::Decline),
                "cancel" => Ok(Elicitation::Cancel),
                other => Err(ClientError::Malformed(format!("unknown elicitation action `{other}`"))),
            }
        }
    }

    /// Asks the user for input with a hand-written `requestedSchema`.
    pub fn elicit_with_schema(
        &self,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> impl Future<Output = Result<ElicitationResponse, ClientError>> + Send + 'static {
        let (ctx, message) = (self.clone(), message.into());
        async move {
            ctx.require_capability("elicitation")?;
            let params = json!({"message": message, "requestedSchema": requested_schema});
            let result = ctx.request_client("elicitation/create", params).await?;
            serde_json::from_value(result).map_err(|e| ClientError::Malformed(e.to_string()))
        }
    }

    /// The client's roots (`roots/list`).
    pub fn list_roots(&self) -> impl Future<Output = Result<Vec<Root>, ClientError>> + Send + 'static {
        let ctx = self.clone();
        async move {
            ctx.require_capability("roots")?;
            let result = ctx.request_client("roots/list", json!({})).await?;
            #[derive(Deserialize)]
            struct Roots {
                roots: Vec<Root>,
            }
            serde_json::from_value::<Roots>(result)
                .map(|r| r.roots)
                .map_err(|e| ClientError::Malformed(e.to_string()))
        }
    }
}
