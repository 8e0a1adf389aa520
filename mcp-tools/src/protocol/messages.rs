//! The params of the MCP requests and notifications this server reads, and the wire enums
//! they use ([`LogLevel`], progress tokens).

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Implementation, RequestId};

/// Severity of a log message (`notifications/message`), as in RFC 5424.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub(crate) fn from_u8(n: u8) -> LogLevel {
        use LogLevel::*;
        [Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency][n.min(7) as usize]
    }
}

/// `_meta` of a request, as far as the server uses it.
#[derive(Deserialize, Default)]
pub(crate) struct RequestMeta {
    #[serde(rename = "progressToken", default)]
    pub progress_token: Option<ProgressToken>,
}

/// A progress token: a string or an integer chosen by the client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum ProgressToken {
    Number(i64),
    String(String),
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams {
    pub protocol_version: String,
    #[serde(default)]
    pub capabilities: Map<String, Value>,
    #[serde(default)]
    pub client_info: Option<Implementation>,
}

#[derive(Deserialize)]
pub(crate) struct CallToolParams<'a> {
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    /// Kept as it was sent: a call's `Context::meta`; its progress token is read from it.
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
pub(crate) struct PaginatedParams {
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct SetLevelParams {
    pub level: LogLevel,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelledParams {
    pub request_id: RequestId,
}

impl Default for SetLevelParams {
    fn default() -> Self {
        SetLevelParams { level: LogLevel::Info }
    }
}

/// `resources/read`, `resources/subscribe`, `resources/unsubscribe`.
#[derive(Deserialize, Default)]
pub(crate) struct UriParams {
    #[serde(default)]
    pub uri: String,
}

/// `prompts/get`.
#[derive(Deserialize, Default)]
pub(crate) struct GetPromptParams {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub arguments: HashMap<String, Value>,
}

/// `completion/complete`.
#[derive(Deserialize, Default)]
pub(crate) struct CompleteParams {
    #[serde(rename = "ref", default)]
    pub reference: Value,
    #[serde(default)]
    pub argument: CompleteArgument,
    #[serde(default)]
    pub context: Option<CompleteContext>,
}

#[derive(Deserialize, Default)]
pub(crate) struct CompleteArgument {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub value: String,
}

#[derive(Deserialize, Default)]
pub(crate) struct CompleteContext {
    #[serde(default)]
    pub arguments: HashMap<String, String>,
}
