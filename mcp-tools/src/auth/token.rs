//! What a verifier is ([`TokenVerifier`]), how it fails ([`AuthError`]), and what every
//! verifier shares: resource URIs in canonical form, identities from claims, audiences.

use std::collections::BTreeSet;
use std::fmt;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::context::auth::AuthInfo;

/// Checks a bearer token and says whose it is.
///
/// `resource` is this server's canonical URI: a token must have been issued for it (its
/// audience, RFC 8707). The three implementations here cover JWTs, opaque tokens and fixed
/// tokens; implement it for anything else (a database of API keys, a call to your own
/// service).
pub trait TokenVerifier: Send + Sync + 'static {
    /// The identity the token carries, or why it is refused.
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> BoxFuture<'a, Result<AuthInfo, AuthError>>;
}

/// Why a token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthError {
    /// The token is not valid for this server: malformed, expired, not yet valid, signed by an
    /// unknown key, for another audience or issuer, revoked… (HTTP 401 `invalid_token`). The
    /// text is logged and sent as `error_description`; it never contains the token.
    Invalid(String),
    /// The token cannot be checked now: the issuer's keys or the introspection endpoint are
    /// unreachable (HTTP 503, the client may retry).
    Unavailable(String),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::Invalid(why) => write!(f, "invalid token: {why}"),
            AuthError::Unavailable(why) => write!(f, "cannot verify tokens now: {why}"),
        }
    }
}

impl std::error::Error for AuthError {}

/// A configuration that cannot work (a resource URI that is not one, a weak static token…).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthConfigError(pub String);

impl fmt::Display for AuthConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AuthConfigError {}

/// The canonical form of a resource URI (RFC 8707 / the MCP specification): absolute
/// `https` (or `http` on a loopback host), lowercase scheme and host, no fragment, no query,
/// no trailing slash.
pub(crate) fn canonical_resource(resource: &str) -> Result<String, AuthConfigError> {
    let invalid = |why: &str| AuthConfigError(format!("{resource:?} is not a resource URI: {why}"));
    let uri: http::Uri = resource.trim().parse().map_err(|_| invalid("it does not parse"))?;
    let scheme =
        uri.scheme_str().ok_or_else(|| invalid("it has no scheme (https://…)"))?.to_ascii_lowercase();
    let host = uri.host().ok_or_else(|| invalid("it has no host"))?.to_ascii_lowercase();
    if resource.contains('#') {
        return Err(invalid("it has a fragment"));
    }
    if uri.query().is_some() {
        return Err(invalid("it has a query"));
    }
    let loopback = matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]");
    if scheme != "https" && !(scheme == "http" && loopback) {
        return Err(invalid("it must be https (http only on a loopback host)"));
    }
    let port = uri.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
    let path = uri.path().trim_end_matches('/');
    Ok(format!("{scheme}://{host}{port}{path}"))
}

/// `("https://host:port", "/path")` of a canonical resource URI.
pub(crate) fn split_resource(resource: &str) -> (&str, &str) {
    let after_scheme = resource.find("://").map_or(0, |i| i + 3);
    match resource[after_scheme..].find('/') {
        Some(i) => resource.split_at(after_scheme + i),
        None => (resource, ""),
    }
}

/// The scopes a token's claims grant: `scope` (a space-separated string, RFC 8693 / 9068) or
/// `scp` (a list or a string, as some providers send).
pub(crate) fn scopes_of(claims: &serde_json::Map<String, Value>) -> BTreeSet<String> {
    let mut scopes = BTreeSet::new();
    for key in ["scope", "scp"] {
        match claims.get(key) {
            Some(Value::String(s)) => scopes.extend(s.split_ascii_whitespace().map(str::to_owned)),
            Some(Value::Array(items)) => {
                scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_owned))
            }
            _ => {}
        }
    }
    scopes
}

/// An identity from a token's claims (a JWT payload, an introspection answer).
pub(crate) fn identity_of(claims: serde_json::Map<String, Value>) -> AuthInfo {
    let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_owned);
    AuthInfo {
        subject: text("sub"),
        client_id: text("client_id").or_else(|| text("azp")),
        scopes: scopes_of(&claims),
        expires_at: claims
            .get("exp")
            .and_then(Value::as_u64)
            .map(|secs| std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs)),
        claims,
    }
}

/// Whether `aud` (a string or a list) names `resource` (compared in canonical form).
pub(crate) fn audience_matches(aud: Option<&Value>, resource: &str) -> bool {
    let matches = |a: &str| canonical_resource(a).is_ok_and(|a| a == resource) || a == resource;
    match aud {
        Some(Value::String(a)) => matches(a),
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).any(matches),
        _ => false,
    }
}
