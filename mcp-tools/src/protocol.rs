//! JSON-RPC 2.0 framing and the MCP message shapes this server reads and writes.
//! Types stay close to the specification's names; decoding borrows from the input line.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The protocol revision this server prefers (the newest it speaks).
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every revision this server negotiates, newest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

pub(crate) const PARSE_ERROR: i32 = -32700;
pub(crate) const INVALID_REQUEST: i32 = -32600;
pub(crate) const METHOD_NOT_FOUND: i32 = -32601;
pub(crate) const INVALID_PARAMS: i32 = -32602;
pub(crate) const INTERNAL_ERROR: i32 = -32603;

/// A JSON-RPC request id: a string or an integer (never null).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// Name and version of a client or server (`clientInfo` / `serverInfo`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable name, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl Implementation {
    /// An implementation with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation { name: name.into(), version: version.into(), title: None }
    }
}

/// One decoded line: a request, a notification, or a response to a server→client request.
/// Fields borrow from the line; `params` stays raw until the method's handler decodes it.
#[derive(Deserialize)]
pub(crate) struct RawMessage<'a> {
    #[serde(borrow, default)]
    pub jsonrpc: Option<Cow<'a, str>>,
    /// Present even when it is `null` (which is not a valid id).
    #[serde(borrow, default, deserialize_with = "present")]
    pub id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RpcError {
    pub code: i32,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        RpcError { code, message: message.into(), data: None }
    }
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }
}

/// Encodes `{"jsonrpc":"2.0","id":…,"result":…}` in one pass.
pub(crate) fn encode_result<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> Vec<u8> {
    #[derive(Serialize)]
    struct Response<'a, T: ?Sized> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        result: &'a T,
    }
    let mut out = Vec::with_capacity(128);
    serde_json::to_writer(&mut out, &Response { jsonrpc: "2.0", id, result })
        .expect("serializing a response cannot fail");
    out
}

/// Encodes an error response; `id` is `null` when the request's id could not be read.
pub(crate) fn encode_error(id: Option<&RequestId>, error: &RpcError) -> Vec<u8> {
    #[derive(Serialize)]
    struct ErrorResponse<'a> {
        jsonrpc: &'static str,
        id: Option<&'a RequestId>,
        error: &'a RpcError,
    }
    serde_json::to_vec(&ErrorResponse { jsonrpc: "2.0", id, error })
        .expect("serializing an error cannot fail")
}

/// Encodes a notification `{"jsonrpc":"2.0","method":…,"params":…}`.
pub(crate) fn encode_notification<T: Serialize + ?Sized>(method: &str, params: &T) -> Vec<u8> {
    #[derive(Serialize)]
    struct Notification<'a, T: ?Sized> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a T,
    }
    serde_json::to_vec(&Notification { jsonrpc: "2.0", method, params })
        .expect("serializing a notification cannot fail")
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
    #[serde(rename = "_meta", default)]
    pub meta: Option<RequestMeta>,
}

#[derive(Deserialize, Default)]
pub(crate) struct PaginatedParams {
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct SetLevelParams {
    pub level: crate::LogLevel,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelledParams {
    pub request_id: RequestId,
}

/// Reads a request id: integers and strings are ids; `null` and anything else are not.
pub(crate) fn parse_id(raw: &RawValue) -> Option<RequestId> {
    serde_json::from_str(raw.get()).ok()
}
