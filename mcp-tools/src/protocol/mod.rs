//! The wire, and only the wire: JSON-RPC 2.0 framing ([`jsonrpc`]), the MCP message shapes
//! ([`messages`]), protocol revisions, ids and error codes. Imports nothing of the crate.

pub(crate) mod jsonrpc;
pub(crate) mod messages;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The protocol revision this server prefers (the newest it speaks).
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every revision this server negotiates, newest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

pub(crate) const PARSE_ERROR: i32 = -32700;
pub(crate) const INVALID_REQUEST: i32 = -32600;
pub(crate) const METHOD_NOT_FOUND: i32 = -32601;
pub(crate) const INVALID_PARAMS: i32 = -32602;
pub(crate) const INTERNAL_ERROR: i32 = -32603;
/// `resources/read` of an unknown URI.
pub(crate) const RESOURCE_NOT_FOUND: i32 = -32002;

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
