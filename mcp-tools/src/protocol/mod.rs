//! The wire, and only the wire: JSON-RPC 2.0 framing ([`jsonrpc`]), the MCP message shapes
//! ([`messages`]), what the stateless revision adds to them ([`stateless`]), the identifiers of
//! extensions and a peer's declaration of them ([`extensions`]), protocol revisions and their two
//! eras, ids and error codes. Imports nothing of the crate.

pub mod extensions;
pub(crate) mod jsonrpc;
pub(crate) mod messages;
pub(crate) mod stateless;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The newest protocol revision this server speaks.
pub const LATEST_PROTOCOL_VERSION: &str = "2026-07-28";

/// Every revision this server speaks, newest first: the stateless revision (each request carries
/// its version) and those negotiated by `initialize`.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The revisions of the stateless era: no `initialize`, an envelope on every request.
pub(crate) const STATELESS_VERSIONS: &[&str] = &["2026-07-28"];

/// The revisions `initialize` negotiates, newest first.
pub(crate) const HANDSHAKE_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// What `initialize` answers a client asking for a revision it does not negotiate.
pub(crate) const LATEST_HANDSHAKE_VERSION: &str = HANDSHAKE_VERSIONS[0];

/// The two shapes of the protocol. One server speaks both, to each client in its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2025-11-25 and older: an `initialize` handshake opens a session; the server may send
    /// requests to the client.
    Handshake,
    /// 2026-07-28: no handshake and no session; every request carries its version and the
    /// client's capabilities, and a call that needs input from the client answers with an
    /// `input_required` result the client retries.
    Stateless,
}

impl Era {
    /// The era of a protocol revision.
    pub fn of(version: &str) -> Era {
        if version >= STATELESS_VERSIONS[STATELESS_VERSIONS.len() - 1] && version.starts_with("20") {
            Era::Stateless
        } else {
            Era::Handshake
        }
    }
}

/// `#[serde(deserialize_with = "borrowed_text")]` for an `Option<Cow<'a, str>>` field: the
/// text borrowed from the message when it has no escapes. serde borrows only a field whose type
/// is exactly `Cow<str>`; behind an `Option`, `#[serde(borrow)]` alone gets a new `String` every
/// time.
pub(crate) fn borrowed_text<'de, D>(deserializer: D) -> Result<Option<std::borrow::Cow<'de, str>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    struct Text<'a>(#[serde(borrow)] std::borrow::Cow<'a, str>);
    Ok(Option::<Text<'de>>::deserialize(deserializer)?.map(|text| text.0))
}

pub(crate) const PARSE_ERROR: i32 = -32700;
pub(crate) const INVALID_REQUEST: i32 = -32600;
pub(crate) const METHOD_NOT_FOUND: i32 = -32601;
pub(crate) const INVALID_PARAMS: i32 = -32602;
pub(crate) const INTERNAL_ERROR: i32 = -32603;
/// `resources/read` of an unknown URI.
pub(crate) const RESOURCE_NOT_FOUND: i32 = -32002;
/// The caller is not authorized: no valid access token (HTTP 401), or one without the scopes
/// the request needs (HTTP 403, the step-up challenge; `data.requiredScopes` names them).
pub(crate) const UNAUTHORIZED: i32 = -32003;

/// A JSON-RPC request id: a string or an integer (never null).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

/// Read by hand: serde's derived `untagged` reading first buffers the value into its generic
/// `Content` tree, then tries each variant; every request's id is read this way at least once.
impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl serde::de::Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a request id (a string or an integer)")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RequestId, E> {
                i64::try_from(n)
                    .map(RequestId::Number)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(n), &self))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(s.into()))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
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
