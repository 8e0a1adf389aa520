//! What the stateless revision (2026-07-28) adds to the wire: the `_meta` envelope every request
//! carries, its error codes, `resultType` and cache hints on results, and multi-round-trip
//! requests (`input_required` results answered by a retry).

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::messages::LogLevel;
use super::{INVALID_PARAMS, Implementation};

/// `_meta` key: the request's protocol revision (required).
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required).
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of a result: the server's name and version.
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of a notification on a `subscriptions/listen` stream.
pub(crate) const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// The request's headers and `_meta` disagree (or a required header is missing).
pub(crate) const HEADER_MISMATCH: i32 = -32020;
/// The request needs a client capability the client did not declare.
pub(crate) const MISSING_CLIENT_CAPABILITY: i32 = -32021;
/// The request's protocol revision is not one this server speaks.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;

/// The envelope of a stateless request: `params._meta`, as far as the server reads it.
#[derive(Deserialize, Default)]
pub(crate) struct Envelope<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    pub protocol_version: Option<Cow<'a, str>>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    pub client_capabilities: Option<Map<String, Value>>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default)]
    pub client_info: Option<Implementation>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    pub log_level: Option<Value>,
}

/// The part of a request's params this module reads: the envelope and the answers of a retry.
#[derive(Deserialize, Default)]
pub(crate) struct StatelessParams<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub meta: Option<Envelope<'a>>,
    /// The client's answers to the previous round's input requests, by key.
    #[serde(rename = "inputResponses", default)]
    pub input_responses: Option<Value>,
    /// The server's state from the previous round, returned as it was.
    #[serde(rename = "requestState", default)]
    pub request_state: Option<Value>,
}

impl StatelessParams<'_> {
    /// The params of a request (absent: all empty). `None` when they are not an object.
    pub fn decode(params: Option<&RawValue>) -> Option<StatelessParams<'_>> {
        match params {
            None => Some(StatelessParams::default()),
            Some(raw) => serde_json::from_str(raw.get()).ok(),
        }
    }

    /// The answers of `inputResponses` that are objects (anything else counts as no answer).
    pub fn answers(&self) -> HashMap<String, Value> {
        match &self.input_responses {
            Some(Value::Object(map)) => {
                map.iter().filter(|(_, v)| v.is_object()).map(|(k, v)| (k.clone(), v.clone())).collect()
            }
            _ => HashMap::new(),
        }
    }
}

/// A checked envelope: the revision, the capabilities and the optional parts.
pub(crate) struct CheckedEnvelope {
    pub protocol_version: String,
    pub client_capabilities: Map<String, Value>,
    pub client_info: Option<Implementation>,
    pub log_level: Option<LogLevel>,
}

/// Why an envelope is unusable: "invalid params" naming what is missing or wrong.
pub(crate) fn check_envelope(meta: Option<Envelope<'_>>) -> Result<CheckedEnvelope, (i32, String)> {
    let Some(meta) = meta else {
        return Err((
            INVALID_PARAMS,
            format!(
                "Invalid params: the request has no `_meta`; a 2026-07-28 request carries `{PROTOCOL_VERSION_KEY}` and `{CLIENT_CAPABILITIES_KEY}` in `params._meta`"
            ),
        ));
    };
    let mut missing = Vec::new();
    if meta.protocol_version.is_none() {
        missing.push(PROTOCOL_VERSION_KEY);
    }
    if meta.client_capabilities.is_none() {
        missing.push(CLIENT_CAPABILITIES_KEY);
    }
    if !missing.is_empty() {
        return Err((INVALID_PARAMS, format!("Invalid params: `_meta` lacks {}", missing.join(" and "))));
    }
    let log_level = match meta.log_level {
        None => None,
        Some(level) => match serde_json::from_value::<LogLevel>(level.clone()) {
            Ok(level) => Some(level),
            Err(_) => {
                return Err((
                    INVALID_PARAMS,
                    format!("Invalid params: unknown `io.modelcontextprotocol/logLevel` {level}"),
                ));
            }
        },
    };
    Ok(CheckedEnvelope {
        protocol_version: meta.protocol_version.unwrap_or_default().into_owned(),
        client_capabilities: meta.client_capabilities.unwrap_or_default(),
        client_info: meta.client_info,
        log_level,
    })
}

/// Whether a request's params carry a stateless envelope (its protocol revision).
pub(crate) fn has_envelope(params: Option<&RawValue>) -> bool {
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<VersionOnly<'a>>,
    }
    #[derive(Deserialize)]
    struct VersionOnly<'a> {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
        version: Option<Cow<'a, str>>,
    }
    params
        .and_then(|p| serde_json::from_str::<Probe<'_>>(p.get()).ok())
        .and_then(|p| p.meta)
        .is_some_and(|m| m.version.is_some())
}

/// How long, and for whom, a client may reuse a result (`ttlMs`, `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CacheHint {
    pub ttl_ms: u64,
    pub public: bool,
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
