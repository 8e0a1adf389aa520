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
    /// text is logged and sent as `error_description`; it never contains the token. It is
    /// written with control characters escaped and cut at 512 characters, but quote little of
    /// what the caller sent (the verifiers here quote at most 64 characters of it).
    Invalid(String),
    /// The token cannot be checked now: the issuer's keys or the introspection endpoint are
    /// unreachable, or too many tokens are being checked at once (HTTP 503, the client may
    /// retry). Logged and answered like [`Invalid`](Self::Invalid)'s text.
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

/// The most characters of caller-controlled text (a `kid`, a `typ`, a decoding error) quoted
/// in a reason.
pub(crate) const QUOTE_LIMIT: usize = 64;

/// The most characters of a reason (a verifier's, the issuer's) logged or answered.
pub(crate) const REASON_LIMIT: usize = 512;

/// `text`, chosen by someone untrusted (a caller, what an issuer's server sent), as it may be
/// written to a log line or an answer: control characters, Unicode line separators and
/// bidirectional overrides escaped (`\n`, `\u{202e}`), so that it can neither start a line of
/// its own nor disguise one, and at most `limit` characters, cut with `...`. Backslashes are
/// left alone: applied again, it changes nothing.
pub(crate) fn untrusted(text: &str, limit: usize) -> String {
    // Besides control characters: the line and paragraph separators, and the marks and
    // overrides that reorder how text is shown.
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{2028}'..='\u{2029}' | '\u{200e}'..='\u{200f}')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    let width = |c: char| if hidden(c) { c.escape_default().len() } else { 1 };
    let mut total = 0;
    let fits = text.chars().all(|c| {
        total += width(c);
        total <= limit
    });
    const CUT: &str = "...";
    let budget = if fits { limit } else { limit.saturating_sub(CUT.len()) };
    let mut shown = String::with_capacity(text.len().min(budget));
    let mut used = 0;
    for c in text.chars() {
        used += width(c);
        if used > budget {
            break;
        }
        if hidden(c) {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    if !fits {
        shown.push_str(CUT);
    }
    shown
}

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
        ..AuthInfo::default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_text_is_escaped_and_cut() {
        assert_eq!(untrusted("rsa-1", QUOTE_LIMIT), "rsa-1");
        assert_eq!(untrusted("", QUOTE_LIMIT), "");
        assert_eq!(untrusted("clé du coffre", QUOTE_LIMIT), "clé du coffre");
        assert_eq!(
            untrusted("k\nFORGED\r\t\u{1b}[31m\u{7f}\u{85}\u{2028}\u{202e}\\n", QUOTE_LIMIT),
            r"k\nFORGED\r\t\u{1b}[31m\u{7f}\u{85}\u{2028}\u{202e}\n"
        );
        let long = untrusted(&format!("k\nFORGED line{}", "x".repeat(10_000)), QUOTE_LIMIT);
        assert_eq!(long.chars().count(), QUOTE_LIMIT);
        assert!(long.starts_with(r"k\nFORGED linexx") && long.ends_with("x..."), "{long}");
        assert!(!long.contains('\n'));
        // An escape is never cut in half.
        let edge = untrusted(&format!("{}\u{1b}tail", "x".repeat(58)), QUOTE_LIMIT);
        assert_eq!(edge, format!("{}...", "x".repeat(58)));
        // Exactly the limit is not cut.
        let full = "y".repeat(QUOTE_LIMIT);
        assert_eq!(untrusted(&full, QUOTE_LIMIT), full);
        // What it wrote, it leaves as it is.
        for shown in [&long, &edge, &full] {
            assert_eq!(&untrusted(shown, QUOTE_LIMIT), shown);
        }
    }
}
