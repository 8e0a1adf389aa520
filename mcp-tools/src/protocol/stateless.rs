//! What the stateless revision (2026-07-28) adds to the wire: the `_meta` envelope every request
//! carries, its error codes, `resultType` and cache hints on results, and multi-round-trip
//! requests (`input_required` results answered by a retry).

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::messages::{LogLevel, ProgressToken};
use super::{INVALID_PARAMS, Implementation};

/// `_meta` key: the request's protocol revision (required).
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required).
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's name and version (optional).
pub(crate) const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the lowest level of log messages the client wants for this request (optional).
pub(crate) const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of a result: the server's name and version.
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of a notification on a `subscriptions/listen` stream.
pub(crate) const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// The request's headers and `_meta` disagree (or a required header is missing).
#[cfg(feature = "http")]
pub(crate) const HEADER_MISMATCH: i32 = -32020;
/// The request needs a client capability the client did not declare.
pub(crate) const MISSING_CLIENT_CAPABILITY: i32 = -32021;
/// The request's protocol revision is not one this server speaks.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;

/// The envelope of a stateless request: `params._meta`, as far as the server reads it. Its
/// parts are borrowed from the request as they are and decoded by [`check_envelope`]: a call
/// reads its params once, and allocates only what the request's peer keeps.
#[derive(Deserialize, Default)]
pub(crate) struct Envelope<'a> {
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        borrow,
        default,
        deserialize_with = "crate::protocol::borrowed_text"
    )]
    pub protocol_version: Option<Cow<'a, str>>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    pub client_capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow, default)]
    pub client_info: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default)]
    pub log_level: Option<&'a RawValue>,
    /// The request's progress token (not part of the envelope, read in the same pass).
    #[serde(rename = "progressToken", default)]
    pub progress_token: Option<ProgressToken>,
}

/// The part of a stateless request's params the dispatcher reads, in one pass: the envelope,
/// the answers of a retry (borrowed, decoded only when present), a `tools/call`'s tool name
/// and arguments (so that a call reads its params once), and a resource's `uri` (for an observer
/// of the request).
#[derive(Deserialize, Default)]
pub(crate) struct StatelessParams<'a> {
    /// A `tools/call`'s tool.
    #[serde(borrow, default, deserialize_with = "crate::protocol::borrowed_text")]
    pub name: Option<Cow<'a, str>>,
    /// A `tools/call`'s arguments.
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    /// A resource request's `uri`, as it was written (whoever answers the request checks it).
    #[serde(borrow, default)]
    pub uri: Option<&'a RawValue>,
    /// The envelope as it was written: decoded by [`Envelope::decode`] unless the same text
    /// was decoded before (stateless clients send the same envelope with every request).
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<&'a RawValue>,
    /// The client's answers to the previous round's input requests, by key.
    #[serde(rename = "inputResponses", borrow, default)]
    pub input_responses: Option<&'a RawValue>,
    /// The server's state from the previous round, returned as it was.
    #[serde(rename = "requestState", borrow, default)]
    pub request_state: Option<&'a RawValue>,
}

impl StatelessParams<'_> {
    /// The params of a request (absent: all empty), or "invalid params" saying why they cannot
    /// be read.
    pub fn decode(params: Option<&RawValue>) -> Result<StatelessParams<'_>, String> {
        let Some(raw) = params else { return Ok(StatelessParams::default()) };
        if !raw.get().starts_with('{') {
            return Err("Invalid params: `params` must be an object".into());
        }
        serde_json::from_str(raw.get()).map_err(|e| format!("Invalid params: {e}"))
    }

    /// The answers of `inputResponses`, read lazily ([`InputResponses`]).
    pub fn answers(&self) -> InputResponses<'_> {
        InputResponses::read(self.input_responses)
    }

    /// The `requestState` of a retry (`null` counts as none).
    pub fn request_state(&self) -> Option<Value> {
        self.request_state
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
            .filter(|state| !state.is_null())
    }
}

/// A request's `inputResponses` (a retry's answers, or `tasks/update`'s), by key: the keys are
/// read, each answer only when a question asked looks for it. Answers to questions nobody asked
/// are never built, copied or kept, however many a client sends.
#[derive(Default)]
pub(crate) struct InputResponses<'a>(HashMap<Cow<'a, str>, &'a RawValue>);

impl<'a> InputResponses<'a> {
    /// The answers of `raw` (absent, or not an object: none).
    pub fn read(raw: Option<&'a RawValue>) -> InputResponses<'a> {
        raw.and_then(|raw| serde_json::from_str(raw.get()).ok()).map(InputResponses).unwrap_or_default()
    }

    /// The answer under `key`, if it is an object (anything else counts as no answer).
    pub fn answer(&self, key: &str) -> Option<Value> {
        let raw = self.0.get(key)?;
        serde_json::from_str::<Value>(raw.get()).ok().filter(Value::is_object)
    }
}

impl Envelope<'_> {
    /// The envelope written as `meta` (absent: none), or "invalid params" saying why it cannot
    /// be read.
    pub fn decode(meta: Option<&RawValue>) -> Result<Option<Envelope<'_>>, String> {
        let Some(raw) = meta else { return Ok(None) };
        if raw.get() == "null" {
            return Ok(None);
        }
        if !raw.get().starts_with('{') {
            return Err("Invalid params: `_meta` must be an object".into());
        }
        serde_json::from_str(raw.get()).map(Some).map_err(|e| format!("Invalid params: `_meta`: {e}"))
    }
}

/// A checked envelope: the revision, the capabilities and the optional parts.
pub(crate) struct CheckedEnvelope<'a> {
    pub protocol_version: &'a str,
    pub client_capabilities: Map<String, Value>,
    pub client_info: Option<Implementation>,
    pub log_level: Option<LogLevel>,
}

/// Why an envelope is unusable: "invalid params" naming what is missing or wrong.
pub(crate) fn check_envelope<'a>(
    meta: Option<&'a Envelope<'_>>,
) -> Result<CheckedEnvelope<'a>, (i32, String)> {
    let Some(meta) = meta else {
        return Err((
            INVALID_PARAMS,
            format!(
                "Invalid params: the request has no `_meta`; a 2026-07-28 request carries `{PROTOCOL_VERSION_KEY}` and `{CLIENT_CAPABILITIES_KEY}` in `params._meta`"
            ),
        ));
    };
    let (Some(protocol_version), Some(capabilities)) = (&meta.protocol_version, meta.client_capabilities)
    else {
        let mut missing = Vec::new();
        if meta.protocol_version.is_none() {
            missing.push(PROTOCOL_VERSION_KEY);
        }
        if meta.client_capabilities.is_none() {
            missing.push(CLIENT_CAPABILITIES_KEY);
        }
        return Err((INVALID_PARAMS, format!("Invalid params: `_meta` lacks {}", missing.join(" and "))));
    };
    let invalid = |key: &str, what: &str, raw: &RawValue| {
        let shown: String = raw.get().chars().take(80).collect();
        (INVALID_PARAMS, format!("Invalid params: `{key}` must be {what}, not {shown}"))
    };
    // The common case, no capability, needs no parser.
    let client_capabilities = if capabilities.get() == "{}" {
        Map::new()
    } else {
        serde_json::from_str(capabilities.get())
            .map_err(|_| invalid(CLIENT_CAPABILITIES_KEY, "an object", capabilities))?
    };
    let client_info = match meta.client_info {
        None => None,
        Some(raw) => Some(
            serde_json::from_str::<Implementation>(raw.get())
                .map_err(|_| invalid(CLIENT_INFO_KEY, "an object with a `name` and a `version`", raw))?,
        ),
    };
    let log_level = match meta.log_level {
        None => None,
        Some(raw) => match serde_json::from_str::<LogLevel>(raw.get()) {
            Ok(level) => Some(level),
            Err(_) => {
                return Err((
                    INVALID_PARAMS,
                    format!("Invalid params: unknown `{LOG_LEVEL_KEY}` {}", raw.get()),
                ));
            }
        },
    };
    Ok(CheckedEnvelope { protocol_version, client_capabilities, client_info, log_level })
}

/// Whether a request's params carry a stateless envelope (its protocol revision).
pub(crate) fn has_envelope(params: Option<&RawValue>) -> bool {
    let Some(params) = params.map(RawValue::get) else { return false };
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<VersionOnly<'a>>,
    }
    #[derive(Deserialize)]
    struct VersionOnly<'a> {
        #[serde(
            rename = "io.modelcontextprotocol/protocolVersion",
            borrow,
            default,
            deserialize_with = "crate::protocol::borrowed_text"
        )]
        version: Option<Cow<'a, str>>,
    }
    // Most messages do not name the key anywhere (written with no escape): no need to parse them.
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(PROTOCOL_VERSION_KEY));
    if KEY.find(params.as_bytes()).is_none() && memchr::memchr(b'\\', params.as_bytes()).is_none() {
        return false;
    }
    serde_json::from_str::<Probe<'_>>(params).ok().and_then(|p| p.meta).is_some_and(|m| m.version.is_some())
}

/// How long, and for whom, a client may reuse a result (`ttlMs`, `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CacheHint {
    pub ttl_ms: u64,
    pub public: bool,
}

/// A complete result as it is serialised: `resultType` (and the cache hints) first, then the
/// result's own members.
#[derive(serde::Serialize)]
struct Completed<'a, T: ?Sized> {
    #[serde(rename = "resultType")]
    result_type: &'static str,
    #[serde(rename = "ttlMs", skip_serializing_if = "Option::is_none")]
    ttl_ms: Option<u64>,
    #[serde(rename = "cacheScope", skip_serializing_if = "Option::is_none")]
    cache_scope: Option<&'static str>,
    #[serde(flatten)]
    result: &'a T,
}

/// [`complete`] for a result not serialised yet (such as a tool's): written once, with its
/// `resultType`, instead of written and then copied behind it.
pub(crate) fn complete_value<T: serde::Serialize + ?Sized>(
    result: &T,
    cache: Option<CacheHint>,
) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(&Completed {
        result_type: "complete",
        ttl_ms: cache.map(|hint| hint.ttl_ms),
        cache_scope: cache.map(|hint| if hint.public { "public" } else { "private" }),
        result,
    })
}

/// `{"resultType":"complete", …}`: a complete result with its `resultType` (and cache hints)
/// written before the result's own members, without parsing it again.
pub(crate) fn complete(result: &RawValue, cache: Option<CacheHint>) -> Box<RawValue> {
    let text = result.get().trim_start();
    let body = text.strip_prefix('{').unwrap_or(text).trim_start();
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str("{\"resultType\":\"complete\"");
    if let Some(hint) = cache {
        out.push_str(&format!(
            ",\"ttlMs\":{},\"cacheScope\":\"{}\"",
            hint.ttl_ms,
            if hint.public { "public" } else { "private" }
        ));
    }
    if !body.starts_with('}') {
        out.push(',');
    }
    out.push_str(body);
    RawValue::from_string(out).expect("a JSON object with members added is JSON")
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::has_envelope;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("JSON")
    }

    #[test]
    fn the_envelope_is_found_however_its_key_is_written() {
        let plain = raw(r#"{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        assert!(has_envelope(Some(&plain)));
        let escaped = raw(r#"{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}"#);
        assert!(has_envelope(Some(&escaped)), "an escaped slash is the same key");
        let elsewhere = raw(r#"{"arguments":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        assert!(!has_envelope(Some(&elsewhere)), "only in `_meta`");
        assert!(!has_envelope(Some(&raw(r#"{"name":"add","arguments":{"a":1}}"#))));
        assert!(!has_envelope(Some(&raw(r#"{"_meta":{"progressToken":"t\"1"}}"#))));
        assert!(!has_envelope(None));
    }

    #[test]
    fn a_calls_tool_name_and_revision_are_borrowed_from_the_request() {
        let params =
            raw(r#"{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        let decoded = super::StatelessParams::decode(Some(&params)).expect("params");
        assert!(matches!(decoded.name, Some(std::borrow::Cow::Borrowed("add"))));
        let envelope = super::Envelope::decode(decoded.meta).expect("an envelope").expect("present");
        assert!(matches!(envelope.protocol_version, Some(std::borrow::Cow::Borrowed("2026-07-28"))));
    }
}
