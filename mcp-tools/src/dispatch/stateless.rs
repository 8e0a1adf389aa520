//! The parts of the dispatch path only the stateless era (2026-07-28) has: `server/discover`,
//! the rounds of a multi-round-trip request (answers carried by the client, sealed in a
//! `requestState` it cannot alter undetected), `subscriptions/listen` filters, and the error
//! shapes of the revision.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::events::ServerEvent;
use crate::context::peer::Peer;
use crate::protocol::jsonrpc::ErrorObject;
use crate::protocol::messages::ProgressToken;
use crate::protocol::stateless::{
    Envelope, MISSING_CLIENT_CAPABILITY, SERVER_INFO_KEY, SUBSCRIPTION_ID_KEY, UNSUPPORTED_PROTOCOL_VERSION,
    check_envelope,
};
use crate::protocol::{
    INVALID_PARAMS, Implementation, RESOURCE_NOT_FOUND, RequestId, STATELESS_VERSIONS,
    SUPPORTED_PROTOCOL_VERSIONS,
};

/// How long a `requestState` stays valid: a person may be answering the questions.
const STATE_LIFETIME: Duration = Duration::from_secs(60 * 60);

/// The client of a stateless request, from its envelope.
pub(crate) struct StatelessClient {
    pub peer: Arc<Peer>,
    /// The request's progress token (`_meta.progressToken`).
    pub progress_token: Option<ProgressToken>,
}

/// Envelopes the server has decoded: a client sends the same envelope with every request, and
/// the same text makes the same peer, so the last one is kept with its peer (a stateless peer
/// does not change once made). Envelopes with a progress token, which differ from request to
/// request, and long ones are decoded every time.
#[derive(Default)]
pub(crate) struct KnownEnvelopes {
    last: ArcSwapOption<(Box<str>, Arc<Peer>)>,
}

/// Envelopes longer than this are not kept.
const KEPT_ENVELOPE_BYTES: usize = 4096;

impl KnownEnvelopes {
    /// The client that `meta`, a request's `_meta`, describes, or why it describes none
    /// (missing parts, a revision this server does not speak).
    pub fn client(&self, meta: Option<&RawValue>) -> Result<StatelessClient, ErrorObject> {
        if let Some(meta) = meta
            && let Some(known) = &*self.last.load()
            && *known.0 == *meta.get()
        {
            return Ok(StatelessClient { peer: known.1.clone(), progress_token: None });
        }
        let envelope = Envelope::decode(meta).map_err(ErrorObject::invalid_params)?;
        let checked =
            check_envelope(envelope.as_ref()).map_err(|(code, message)| ErrorObject::new(code, message))?;
        let Some(&version) = STATELESS_VERSIONS.iter().find(|v| **v == checked.protocol_version) else {
            return Err(unsupported_version(checked.protocol_version));
        };
        let peer = Arc::new(Peer::stateless(
            version,
            checked.client_capabilities,
            checked.client_info,
            checked.log_level,
        ));
        let progress_token = envelope.and_then(|e| e.progress_token);
        if let Some(meta) = meta
            && progress_token.is_none()
            && meta.get().len() <= KEPT_ENVELOPE_BYTES
        {
            self.last.store(Some(Arc::new((meta.get().into(), peer.clone()))));
        }
        Ok(StatelessClient { peer, progress_token })
    }
}

/// What one round of a multi-round-trip request knows: the answers of the previous rounds
/// (sealed in its state), the request's params (whose `inputResponses` answer this round's
/// questions, each read only when asked: [`InputResponses`]), and what binds a state to this
/// request (its method and its params but the answers).
pub(crate) struct Round {
    pub answers: HashMap<String, Value>,
    /// Computed when first needed (to open a `requestState`, or to seal one): most requests
    /// do neither, and the digest costs more than the rest of a call.
    binding: OnceLock<[u8; 32]>,
    method: &'static str,
    params: Option<Arc<RawValue>>,
}

impl Round {
    /// A round of `method` with `params`, with no answers yet.
    pub fn new(method: &'static str, params: Option<&RawValue>) -> Round {
        Round {
            answers: HashMap::new(),
            binding: OnceLock::new(),
            method,
            params: params.map(|p| Arc::from(p.to_owned())),
        }
    }

    /// The request's params, for its `inputResponses`.
    pub fn params(&self) -> Option<Arc<RawValue>> {
        self.params.clone()
    }

    /// What binds a sealed state to this request ([`binding_of`]).
    pub fn binding(&self) -> &[u8; 32] {
        self.binding.get_or_init(|| binding_of(self.method, self.params.as_deref()))
    }
}

/// The digest of a request's method and params, `_meta`, `inputResponses` and `requestState`
/// left out, with object members sorted: the same request retried gets the same binding.
pub(crate) fn binding_of(method: &str, params: Option<&RawValue>) -> [u8; 32] {
    let mut params: Value = params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or(Value::Null);
    if let Some(object) = params.as_object_mut() {
        for key in ["_meta", "inputResponses", "requestState"] {
            object.remove(key);
        }
    }
    let mut text = String::from(method);
    text.push('\n');
    canonical(&params, &mut text);
    Sha256::digest(text.as_bytes()).into()
}

/// JSON with object members sorted by name, so equal values have equal text.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// What a `requestState` carries, as it is read back.
#[derive(Deserialize)]
struct Sealed {
    /// Expiry, in seconds since the Unix epoch.
    #[serde(rename = "e")]
    expires: u64,
    /// The answers so far, by key.
    #[serde(rename = "a")]
    answers: HashMap<String, Value>,
}

/// [`Sealed`] as it is written, borrowing the answers.
#[derive(Serialize)]
struct Sealing<'a> {
    #[serde(rename = "e")]
    expires: u64,
    #[serde(rename = "a")]
    answers: HashMap<&'a str, &'a Value>,
}

fn tag(key: &[u8; 32], binding: &[u8; 32], payload: &[u8]) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(binding);
    mac.update(payload);
    mac
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The `requestState` of a round: the answers so far (the previous rounds', and `used`, those
/// of this request's `inputResponses` its questions read), bound to the request, signed with
/// the server's key, valid for an hour; an error when they take more than `max_bytes` (a
/// request's rounds are bounded in size).
pub(crate) fn seal(
    key: &[u8; 32],
    round: &Round,
    used: &HashMap<String, Value>,
    max_bytes: usize,
) -> Result<String, ErrorObject> {
    let answers = round.answers.iter().chain(used).map(|(k, v)| (k.as_str(), v)).collect();
    let sealing = Sealing { expires: now() + STATE_LIFETIME.as_secs(), answers };
    let payload = serde_json::to_vec(&sealing).expect("answers serialize");
    if payload.len() > max_bytes {
        return Err(ErrorObject::invalid_params(format!(
            "the answers to this request's questions take {} bytes, more than this server's limit of {max_bytes}",
            payload.len()
        )));
    }
    let signature = tag(key, round.binding(), &payload).finalize().into_bytes();
    Ok(format!("v1.{}.{}", URL_SAFE_NO_PAD.encode(&payload), URL_SAFE_NO_PAD.encode(signature)))
}

/// The answers sealed in `state`, if this server sealed it for this request, it has not
/// expired, and it is no larger than a state of `max_bytes` of answers; otherwise why not (an
/// "invalid params" error).
pub(crate) fn open(
    key: &[u8; 32],
    binding: &[u8; 32],
    state: &Value,
    max_bytes: usize,
) -> Result<HashMap<String, Value>, ErrorObject> {
    let invalid = |why: &str| ErrorObject::invalid_params(format!("Invalid params: `requestState` {why}"));
    let Some(state) = state.as_str() else { return Err(invalid("is not a string")) };
    // Base64 of at most `max_bytes`, a signature and the separators: nothing larger is decoded.
    if state.len() > max_bytes.div_ceil(3) * 4 + 64 {
        return Err(invalid("is larger than any this server issues"));
    }
    let mut parts = state.split('.');
    let (Some("v1"), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid("is not one this server issued"));
    };
    let (Ok(payload), Ok(signature)) = (URL_SAFE_NO_PAD.decode(payload), URL_SAFE_NO_PAD.decode(signature))
    else {
        return Err(invalid("is not one this server issued"));
    };
    if tag(key, binding, &payload).verify_slice(&signature).is_err() {
        return Err(invalid("failed its integrity check: it was altered, or issued for another request"));
    }
    let sealed: Sealed = serde_json::from_slice(&payload).map_err(|_| invalid("is malformed"))?;
    if sealed.expires < now() {
        return Err(invalid("has expired; call again without it"));
    }
    Ok(sealed.answers)
}

/// A fresh random key for sealing request states.
pub(crate) fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).expect("the operating system provides random bytes");
    key
}

/// `{"resultType":"input_required","inputRequests":{…},"requestState":"…"}`.
pub(crate) fn input_required(questions: Vec<(String, Value)>, state: String) -> Box<RawValue> {
    let requests: Map<String, Value> = questions.into_iter().collect();
    let result = json!({"resultType": "input_required", "inputRequests": requests, "requestState": state});
    serde_json::value::to_raw_value(&result).expect("JSON serializes")
}

/// The `server/discover` result: versions, capabilities, instructions, identity in `_meta`.
pub(crate) fn discover(
    info: &Implementation,
    instructions: Option<&str>,
    capabilities: Value,
) -> Box<RawValue> {
    let mut result = json!({
        "resultType": "complete",
        "supportedVersions": SUPPORTED_PROTOCOL_VERSIONS,
        "capabilities": capabilities,
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": {SERVER_INFO_KEY: info},
    });
    if let Some(instructions) = instructions {
        result["instructions"] = json!(instructions);
    }
    serde_json::value::to_raw_value(&result).expect("JSON serializes")
}

/// The error of a request whose revision this server does not speak.
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: format!(
            "Unsupported protocol version {requested:?}; this server speaks {}",
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        ),
        data: Some(json!({"supported": SUPPORTED_PROTOCOL_VERSIONS, "requested": requested})),
    }
}

/// The error of a request that needs a client capability the client did not declare.
pub(crate) fn missing_capability(capability: &str) -> ErrorObject {
    // An extension's identifier (`vendor/name`, e.g. a mounted upstream's need of the tasks
    // extension) is required under `extensions`.
    if capability.contains('/') {
        return ErrorObject {
            code: MISSING_CLIENT_CAPABILITY,
            message: format!("Missing required client capability: the `{capability}` extension"),
            data: Some(json!({"requiredCapabilities": {"extensions": {capability: {}}}})),
        };
    }
    ErrorObject {
        code: MISSING_CLIENT_CAPABILITY,
        message: format!("Missing required client capability `{capability}`"),
        data: Some(json!({"requiredCapabilities": {capability: {}}})),
    }
}

/// An error as 2026-07-28 says it: an unknown resource is "invalid params" (SEP-2164).
pub(crate) fn in_stateless_terms(mut error: ErrorObject) -> ErrorObject {
    if error.code == RESOURCE_NOT_FOUND {
        error.code = INVALID_PARAMS;
    }
    error
}

/// What a `subscriptions/listen` stream carries.
#[derive(Default, Deserialize, Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListenFilter {
    #[serde(default, skip_serializing_if = "is_false")]
    pub tools_list_changed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub prompts_list_changed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub resources_list_changed: bool,
    #[serde(default, skip_serializing_if = "HashSet::is_empty")]
    pub resource_subscriptions: HashSet<String>,
    /// Tasks whose changes are wanted (`notifications/tasks`; the tasks extension).
    #[serde(default, skip_serializing_if = "HashSet::is_empty")]
    pub task_ids: HashSet<String>,
}

fn is_false(b: &bool) -> bool {
    !b
}

impl ListenFilter {
    /// The filter a `subscriptions/listen` request asks for, narrowed to what this server has.
    pub fn honored(requested: ListenFilter, has_resources: bool, has_prompts: bool) -> ListenFilter {
        ListenFilter {
            tools_list_changed: requested.tools_list_changed,
            prompts_list_changed: requested.prompts_list_changed && has_prompts,
            resources_list_changed: requested.resources_list_changed && has_resources,
            resource_subscriptions: if has_resources {
                requested.resource_subscriptions
            } else {
                HashSet::new()
            },
            task_ids: requested.task_ids,
        }
    }

    /// The notification for `event` on the stream `subscription`, if the filter asks for it.
    pub fn notification(&self, event: &ServerEvent, subscription: &RequestId) -> Option<Vec<u8>> {
        let meta = json!({SUBSCRIPTION_ID_KEY: subscription});
        let (method, params) = match event {
            ServerEvent::ToolsChanged if self.tools_list_changed => {
                ("notifications/tools/list_changed", json!({"_meta": meta}))
            }
            ServerEvent::PromptsChanged if self.prompts_list_changed => {
                ("notifications/prompts/list_changed", json!({"_meta": meta}))
            }
            ServerEvent::ResourcesChanged if self.resources_list_changed => {
                ("notifications/resources/list_changed", json!({"_meta": meta}))
            }
            ServerEvent::ResourceUpdated(uri) if self.resource_subscriptions.contains(uri) => {
                ("notifications/resources/updated", json!({"uri": uri, "_meta": meta}))
            }
            ServerEvent::TaskChanged(task_id, detailed) if self.task_ids.contains(task_id) => {
                let mut params = (**detailed).clone();
                params.insert("_meta".into(), meta);
                ("notifications/tasks", Value::Object(params))
            }
            _ => return None,
        };
        Some(crate::protocol::jsonrpc::encode_notification(method, &params))
    }

    /// `notifications/subscriptions/acknowledged`: the stream is open and carries this.
    pub fn acknowledgement(&self, subscription: &RequestId) -> Vec<u8> {
        crate::protocol::jsonrpc::encode_notification(
            "notifications/subscriptions/acknowledged",
            &json!({"_meta": {SUBSCRIPTION_ID_KEY: subscription}, "notifications": self}),
        )
    }
}

/// The final result of a listen stream the server ends.
pub(crate) fn listen_ended(subscription: &RequestId) -> Box<RawValue> {
    let result = json!({"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: subscription}});
    serde_json::value::to_raw_value(&result).expect("JSON serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("JSON")
    }

    #[test]
    fn an_envelope_seen_before_gives_its_peer_again_and_others_are_read_afresh() {
        let known = KnownEnvelopes::default();
        let meta = |name: &str| {
            raw(&format!(
                r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"{name}","version":"1"}}}}"#
            ))
        };
        let first = known.client(Some(&meta("a"))).expect("a valid envelope");
        assert_eq!(first.peer.client_info.name, "a");
        let again = known.client(Some(&meta("a"))).expect("the same envelope");
        assert!(Arc::ptr_eq(&first.peer, &again.peer), "the same text makes the same peer");
        let other = known.client(Some(&meta("b"))).expect("another client");
        assert_eq!(other.peer.client_info.name, "b");
        assert!(!Arc::ptr_eq(&first.peer, &other.peer));

        // A progress token is the request's own: read every time, and the envelope not kept.
        let with_token = raw(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"t1"}"#,
        );
        for _ in 0..2 {
            let client = known.client(Some(&with_token)).expect("valid");
            assert_eq!(client.progress_token, Some(ProgressToken::String("t1".into())));
        }
        assert!(
            Arc::ptr_eq(&known.client(Some(&meta("b"))).unwrap().peer, &other.peer),
            "b is still the last kept"
        );

        // What is wrong is said every time, never kept.
        let unsupported = raw(
            r#"{"io.modelcontextprotocol/protocolVersion":"2030-01-01","io.modelcontextprotocol/clientCapabilities":{}}"#,
        );
        for _ in 0..2 {
            let error = known.client(Some(&unsupported)).err().expect("an unsupported revision");
            assert_eq!(error.code, UNSUPPORTED_PROTOCOL_VERSION);
        }
        let error = known.client(Some(&raw("[1]"))).err().expect("not an object");
        assert!(error.message.contains("must be an object"), "{}", error.message);
        let error = known.client(None).err().expect("no envelope");
        assert_eq!(error.code, INVALID_PARAMS);
    }

    fn round(answers: &[(&str, Value)]) -> Round {
        let params = RawValue::from_string(r#"{"name":"t","arguments":{"a":1,"b":2}}"#.into()).unwrap();
        let mut round = Round::new("tools/call", Some(&params));
        round.answers = answers.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        round
    }

    #[test]
    fn a_sealed_state_opens_with_its_answers() {
        let key = random_key();
        let round = round(&[("user_name", json!({"action": "accept"}))]);
        let used = HashMap::from([("next".to_owned(), json!({"action": "decline"}))]);
        let state = seal(&key, &round, &used, LIMIT).unwrap();
        let mut all = round.answers.clone();
        all.extend(used);
        assert_eq!(open(&key, round.binding(), &json!(state), LIMIT).unwrap(), all);
    }

    #[test]
    fn an_altered_state_or_another_request_or_key_is_refused() {
        let key = random_key();
        let round = round(&[("q", json!({"action": "accept", "content": {"ok": true}}))]);
        let state = seal(&key, &round, &HashMap::new(), LIMIT).unwrap();
        let tampered = format!("{state}-TAMPERED");
        assert!(
            open(&key, round.binding(), &json!(tampered), LIMIT).unwrap_err().message.contains("integrity")
        );
        let other = binding_of(
            "tools/call",
            Some(&RawValue::from_string(r#"{"name":"t","arguments":{"a":2}}"#.into()).unwrap()),
        );
        assert!(open(&key, &other, &json!(state), LIMIT).is_err());
        assert!(open(&random_key(), round.binding(), &json!(state), LIMIT).is_err());
        assert!(open(&key, round.binding(), &json!(42), LIMIT).is_err());
    }

    const LIMIT: usize = 64 * 1024;

    #[test]
    fn a_state_is_bounded_in_size_when_sealed_and_when_opened() {
        let key = random_key();
        let big = round(&[("essay", json!({"action": "accept", "content": {"text": "x".repeat(2000)}}))]);
        let error = seal(&key, &big, &HashMap::new(), 1024).unwrap_err();
        assert!(error.message.contains("more than this server's limit of 1024"), "{}", error.message);
        let state = seal(&key, &big, &HashMap::new(), LIMIT).unwrap();
        let error = open(&key, big.binding(), &json!(state), 1024).unwrap_err();
        assert!(error.message.contains("larger than any"), "{}", error.message);
        let huge = format!("v1.{}.sig", "A".repeat(10 * LIMIT));
        assert!(open(&key, big.binding(), &json!(huge), LIMIT).unwrap_err().message.contains("larger"));
    }

    #[test]
    fn the_binding_ignores_member_order_and_the_round_trip_fields() {
        let a = binding_of(
            "tools/call",
            Some(
                &RawValue::from_string(r#"{"name":"t","arguments":{"a":1,"b":[1,{"y":2,"x":1}]}}"#.into())
                    .unwrap(),
            ),
        );
        let b = binding_of(
            "tools/call",
            Some(&RawValue::from_string(
                r#"{"arguments":{"b":[1,{"x":1,"y":2}],"a":1},"name":"t","requestState":"s","inputResponses":{},"_meta":{}}"#.into(),
            )
            .unwrap()),
        );
        assert_eq!(a, b);
        assert_ne!(a, binding_of("prompts/get", None));
    }
}
