//! JSON-RPC 2.0 framing: one decoded message (borrowing from its bytes), error objects, and
//! encoding of results, errors and notifications in one pass each.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{INVALID_PARAMS, RequestId};

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

/// A JSON-RPC error object (the specification's `error` member).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ErrorObject {
    pub code: i32,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        ErrorObject { code, message: message.into(), data: None }
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
pub(crate) fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> Vec<u8> {
    #[derive(Serialize)]
    struct ErrorResponse<'a> {
        jsonrpc: &'static str,
        id: Option<&'a RequestId>,
        error: &'a ErrorObject,
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

/// Reads a request id: integers and strings are ids; `null` and anything else are not.
pub(crate) fn parse_id(raw: &RawValue) -> Option<RequestId> {
    serde_json::from_str(raw.get()).ok()
}

/// Decodes a request's `params` (absent: the type's default); a mismatch is "invalid params".
pub(crate) fn decode_params<T: serde::de::DeserializeOwned + Default>(
    params: Option<&RawValue>,
) -> Result<T, ErrorObject> {
    match params {
        None => Ok(T::default()),
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|e| ErrorObject::invalid_params(format!("invalid params: {e}"))),
    }
}
