//! JSON-RPC 2.0 framing: one decoded message (borrowing from its bytes), error objects, and
//! encoding of results, errors and notifications in one pass each.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, RequestId, UNAUTHORIZED};

/// One decoded line: a request, a notification, or a response to a server→client request.
/// Fields borrow from the line; `params` stays raw until the method's handler decodes it.
#[derive(Deserialize)]
pub(crate) struct RawMessage<'a> {
    #[serde(borrow, default, deserialize_with = "crate::protocol::borrowed_text")]
    pub jsonrpc: Option<Cow<'a, str>>,
    /// Present even when it is `null` (which is not a valid id).
    #[serde(borrow, default, deserialize_with = "present")]
    pub id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::protocol::borrowed_text")]
    pub method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    /// Present even when it is `null` (a valid result).
    #[serde(borrow, default, deserialize_with = "present")]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A JSON-RPC error object (the specification's `error` member).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// The caller's token lacks `scopes` (all the operation needs): HTTP answers 403 with the
    /// step-up challenge naming them.
    pub fn insufficient_scope(scopes: &[String]) -> Self {
        ErrorObject {
            code: UNAUTHORIZED,
            message: format!("Forbidden: insufficient scope; this needs the scopes `{}`", scopes.join(" ")),
            data: Some(serde_json::json!({"requiredScopes": scopes})),
        }
    }
    /// The scopes of an [`insufficient_scope`](Self::insufficient_scope) error.
    #[cfg(feature = "auth")]
    pub fn required_scopes(&self) -> Option<Vec<String>> {
        if self.code != UNAUTHORIZED {
            return None;
        }
        let scopes = self.data.as_ref()?.get("requiredScopes")?.as_array()?;
        Some(scopes.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
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

/// Encodes a response whose result is already JSON text (a pre-serialised `tools/list` page, a
/// finished call's result): written around it in one allocation of the right size.
pub(crate) fn encode_raw_result(id: &RequestId, result: &RawValue) -> Vec<u8> {
    let result = result.get().as_bytes();
    let mut out = Vec::with_capacity(result.len() + 64);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut out, id).expect("serializing an id cannot fail");
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result);
    out.push(b'}');
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

/// A client-chosen name or URI as an error message quotes it: cut to 128 characters, so a
/// huge one is not echoed back whole.
pub(crate) fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 128;
    match text.char_indices().nth(MAX) {
        None => text.into(),
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()).into(),
    }
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

/// Checks what a message's bytes are before decoding them, without building any value: a JSON
/// object nested at most `max_depth` deep. Otherwise the error to answer: a batch (an array;
/// batches were removed in 2025-06-18), another JSON value, invalid JSON, or too deep.
pub(crate) fn check_shape(bytes: &[u8], max_depth: usize) -> Result<(), ErrorObject> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(b'[') => {
            return Err(ErrorObject::new(
                INVALID_REQUEST,
                "JSON-RPC batches are not supported (removed in MCP 2025-06-18): send one message at a time",
            ));
        }
        _ => return Err(not_a_message(bytes)),
    }
    // Nesting needs brackets: with no more of them than the limit in the whole message (counted
    // at vector speed), it cannot nest too deep, and the scan below is not needed.
    // (`b | 0x20 == b'{'` holds for `{` and `[` only; counting per 255-byte chunk in a u8
    // lets the compiler use vector instructions.)
    let brackets: usize = bytes
        .chunks(255)
        .map(|chunk| chunk.iter().map(|&b| u8::from(b | 0x20 == b'{')).fold(0u8, u8::wrapping_add) as usize)
        .sum();
    if brackets <= max_depth {
        return Ok(());
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > max_depth {
                    return Err(ErrorObject::new(
                        INVALID_REQUEST,
                        format!(
                            "the message nests arrays and objects deeper than this server's limit of {max_depth}"
                        ),
                    ));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Reads a message's JSON-RPC frame (its members borrowed from `bytes`), after checking its
/// shape ([`check_shape`], nesting at most `max_depth`); the error says what is wrong.
pub(crate) fn parse_message(bytes: &[u8], max_depth: usize) -> Result<RawMessage<'_>, ErrorObject> {
    check_shape(bytes, max_depth)?;
    parse_frame(bytes)
}

/// [`parse_message`] for a message whose shape is already checked.
pub(crate) fn parse_frame(bytes: &[u8]) -> Result<RawMessage<'_>, ErrorObject> {
    serde_json::from_slice(bytes).map_err(|e| {
        let mut error = not_a_message(bytes);
        if error.code == INVALID_REQUEST {
            error.message = format!("not a JSON-RPC message: {e}");
        }
        error
    })
}

/// The error for bytes that are not a JSON-RPC message: "parse error" if they are not JSON,
/// else "invalid request" (decided without building a value).
pub(crate) fn not_a_message(bytes: &[u8]) -> ErrorObject {
    if let Err(e) = std::str::from_utf8(bytes) {
        return ErrorObject::new(PARSE_ERROR, format!("invalid JSON: not UTF-8 text ({e})"));
    }
    match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        Ok(_) => ErrorObject::new(INVALID_REQUEST, "not a JSON-RPC message: a message is a JSON object"),
        Err(e) => ErrorObject::new(PARSE_ERROR, format!("invalid JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_told_apart_without_parsing_values() {
        assert!(check_shape(br#" {"a": [1, {"b": "[[[["}]} "#, 3).is_ok());
        assert_eq!(check_shape(b"[0,0,0]", 8).unwrap_err().code, INVALID_REQUEST);
        assert_eq!(check_shape(b"5", 8).unwrap_err().code, INVALID_REQUEST);
        assert_eq!(
            check_shape(b"{nope", 8).map(|_| ()),
            Ok(()),
            "an object's own syntax is the decoder's to judge"
        );
        assert_eq!(check_shape(b"nope", 8).unwrap_err().code, PARSE_ERROR);
        assert_eq!(check_shape(br#"{"a":[[[[]]]]}"#, 4).unwrap_err().code, INVALID_REQUEST);
        assert!(check_shape(br#"{"a":"\\\"[[[[[["}"#, 2).is_ok(), "escaped quotes stay inside the string");
    }

    #[test]
    fn a_message_borrows_its_version_and_method_and_unescapes_them_when_it_must() {
        let plain = parse_frame(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#).expect("a message");
        assert!(matches!(plain.jsonrpc, Some(Cow::Borrowed("2.0"))));
        assert!(matches!(plain.method, Some(Cow::Borrowed("tools/call"))));
        let escaped = parse_frame(br#"{"jsonrpc":"2.0","id":1,"method":"tools\/call"}"#).expect("a message");
        assert!(matches!(escaped.method, Some(Cow::Owned(ref m)) if m == "tools/call"));
        let none = parse_frame(br#"{"jsonrpc":null,"id":1}"#).expect("a message");
        assert!(none.jsonrpc.is_none() && none.method.is_none());
        assert!(parse_frame(br#"{"jsonrpc":"2.0","method":7}"#).is_err(), "a method is text");
    }

    #[test]
    fn an_id_is_a_string_or_an_integer_and_nothing_else() {
        let id = |text: &str| parse_id(&RawValue::from_string(text.to_owned()).expect("JSON"));
        assert_eq!(id("7"), Some(RequestId::Number(7)));
        assert_eq!(id("-3"), Some(RequestId::Number(-3)));
        assert_eq!(id(&i64::MAX.to_string()), Some(RequestId::Number(i64::MAX)));
        assert_eq!(id(r#""a\"b""#), Some(RequestId::String("a\"b".into())), "escapes are undone");
        assert_eq!(id(r#""""#), Some(RequestId::String("".into())));
        for not_an_id in
            ["null", "1.5", "1.0", "true", "[1]", r#"{"id":1}"#, &(i64::MAX as u64 + 1).to_string()]
        {
            assert_eq!(id(not_an_id), None, "{not_an_id} is not an id");
        }
        // The id is written back as it was read.
        assert_eq!(serde_json::to_string(&RequestId::String("x".into())).unwrap(), r#""x""#);
        assert_eq!(serde_json::to_string(&RequestId::Number(-3)).unwrap(), "-3");
    }
}
