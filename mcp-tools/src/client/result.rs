//! What a client gets back: a tool call's result, and the server's notifications.

use serde_json::Value;

/// A tool call's result (`CallToolResult`), as the server sent it.
#[derive(Clone, Debug, PartialEq)]
pub struct CallResult(Value);

impl CallResult {
    pub(crate) fn new(result: Value) -> Self {
        CallResult(result)
    }

    /// Whether the tool reported an error (`isError`).
    pub fn is_error(&self) -> bool {
        self.0["isError"] == true
    }

    /// The content blocks.
    pub fn content(&self) -> &[Value] {
        self.0["content"].as_array().map_or(&[], Vec::as_slice)
    }

    /// The text blocks, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.content().iter().filter_map(|c| c["text"].as_str()).collect();
        texts.join("\n")
    }

    /// The structured content, if any.
    pub fn structured(&self) -> Option<&Value> {
        self.0.get("structuredContent")
    }

    /// The whole result, as JSON.
    pub fn json(&self) -> &Value {
        &self.0
    }

    /// The whole result.
    pub fn into_json(self) -> Value {
        self.0
    }
}

/// A notification of the server's.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/tools/list_changed`.
    ToolsChanged,
    /// `notifications/resources/list_changed`.
    ResourcesChanged,
    /// `notifications/prompts/list_changed`.
    PromptsChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// `notifications/message`: a log message.
    Log {
        /// Its level (`info`, `error` …).
        level: String,
        /// The logger, if named.
        logger: Option<String>,
        /// What it says.
        data: Value,
    },
    /// Any other notification.
    Other {
        /// Its method.
        method: String,
        /// Its params.
        params: Value,
    },
}

impl ServerNotification {
    pub(crate) fn of(method: &str, params: &Value) -> Self {
        match method {
            "notifications/tools/list_changed" => ServerNotification::ToolsChanged,
            "notifications/resources/list_changed" => ServerNotification::ResourcesChanged,
            "notifications/prompts/list_changed" => ServerNotification::PromptsChanged,
            "notifications/resources/updated" => ServerNotification::ResourceUpdated {
                uri: params["uri"].as_str().unwrap_or_default().to_owned(),
            },
            "notifications/message" => ServerNotification::Log {
                level: params["level"].as_str().unwrap_or("info").to_owned(),
                logger: params["logger"].as_str().map(str::to_owned),
                data: params["data"].clone(),
            },
            other => ServerNotification::Other { method: other.to_owned(), params: params.clone() },
        }
    }
}
