//! Why a client's request failed.

use std::time::Duration;

use serde_json::Value;

/// Why a client's request failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("the server answered {code}: {message}")]
    Rpc {
        /// The error code.
        code: i64,
        /// Its message.
        message: String,
        /// Its data, if any.
        data: Option<Value>,
    },
    /// The connection could not be made, or failed (the text says why).
    #[error("transport: {0}")]
    Transport(String),
    /// HTTP: the server refused the credentials (or asked for more), and they could not be
    /// renewed.
    #[error("authorization: {0}")]
    Unauthorized(String),
    /// The server sent something that is not what the protocol says.
    #[error("protocol: {0}")]
    Protocol(String),
    /// The connection is closed.
    #[error("the connection is closed")]
    Closed,
    /// What the server sent does not match what it announced: a skill's file whose size or
    /// digest differs from its skill's entry, a file the entry does not list, a `SKILL.md` whose
    /// front matter is not the entry's. Its content must not be used.
    #[error("not verified: {0}")]
    Unverified(String),
    /// No answer within the request timeout.
    #[error("the server did not answer within {0:?}")]
    Timeout(Duration),
}

impl ClientError {
    /// The JSON-RPC error code, for an error the server answered.
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc { code, .. } => Some(*code),
            _ => None,
        }
    }
}
