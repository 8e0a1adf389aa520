//! Who is calling: [`AuthInfo`], the identity a verified access token carries (over HTTP with
//! authorization configured), and [`Auth`], the `#[tool]` parameter that hands it over.

use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use serde_json::{Map, Value};

/// The verified identity of a request's caller: who the token was issued to, for which client,
/// with which scopes, and the token's claims. Built by a token verifier (see the `auth` feature
/// and `HttpOptions::authorization`); read by handlers through
/// [`Context::auth`](crate::Context::auth) or an [`Auth`] parameter.
///
/// ```
/// use mcp_tools::AuthInfo;
/// let caller = AuthInfo::new("user-42").client_id("cli").scopes(["notes:read", "notes:write"]);
/// assert!(caller.has_scope("notes:write"));
/// assert!(caller.has_scopes(&["notes:read"]));
/// assert!(!caller.has_scope("admin"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct AuthInfo {
    /// The token's subject (`sub`): the user or service it was issued for.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id` or `azp`).
    pub client_id: Option<String>,
    /// The granted scopes (with any scope a granted one implies).
    pub scopes: BTreeSet<String>,
    /// When the token expires.
    pub expires_at: Option<SystemTime>,
    /// Every claim of the token (a JWT's payload, an introspection answer), for what the fields
    /// above do not cover (tenant, roles, email …).
    pub claims: Map<String, Value>,
    /// The bearer token itself, as the caller presented it (see [`AuthInfo::token`]).
    pub(crate) token: Token,
}

/// A caller's bearer token: kept out of `Debug` output, so that no log shows it.
#[derive(Clone, Default, PartialEq)]
pub(crate) struct Token(Option<Arc<str>>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Some(<redacted>)" } else { "None" })
    }
}

impl AuthInfo {
    /// An identity for `subject`, without scopes.
    pub fn new(subject: impl Into<String>) -> Self {
        AuthInfo { subject: Some(subject.into()), ..AuthInfo::default() }
    }
    /// Sets the client id.
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }
    /// Adds scopes.
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }
    /// Sets a claim.
    pub fn claim(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.claims.insert(name.into(), value.into());
        self
    }
    /// Whether the scope was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }
    /// Whether every one of `scopes` was granted.
    pub fn has_scopes<S: AsRef<str>>(&self, scopes: &[S]) -> bool {
        scopes.iter().all(|s| self.has_scope(s.as_ref()))
    }
    /// The access token the caller presented (set by the server's authorization, not by a
    /// `TokenVerifier`, feature `auth`), for exchanging it for a token of another audience
    /// (RFC 8693) or, where the upstream is meant to accept it, for passing it on
    /// (`Upstream::pass_caller_token`, feature `client`). It is a
    /// credential: never log it. `Debug` output leaves it out.
    pub fn token(&self) -> Option<&str> {
        self.token.0.as_deref()
    }

    /// Keeps the token the caller presented.
    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    pub(crate) fn with_token(mut self, token: &str) -> Self {
        self.token = Token(Some(token.into()));
        self
    }

    /// Who this is, for logs and for binding a session to its caller: the subject, else the
    /// client id.
    pub fn principal(&self) -> Option<&str> {
        self.subject.as_deref().or(self.client_id.as_deref())
    }

    /// The key that identifies the token's holder: its subject, else its client, each in its
    /// own name space (a client whose id is another subject's `sub` is not that subject).
    pub(crate) fn identity_key(&self) -> Option<String> {
        match (&self.subject, &self.client_id) {
            (Some(subject), _) => Some(format!("sub:{subject}")),
            (None, Some(client)) => Some(format!("client:{client}")),
            (None, None) => None,
        }
    }
}

/// Who a request comes from, as far as the server can tell them apart.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Caller {
    /// A verified identity (HTTP with authorization): [`identity_key`].
    Identity(Arc<str>),
    /// One connection (stdio, in process): whoever holds it.
    Connection(u64),
    /// A network address (HTTP without authorization): everyone behind it.
    Address(IpAddr),
    /// Nothing tells this caller apart from others (HTTP without authorization, mounted in a
    /// router that keeps no peer address).
    Anonymous,
}

impl Caller {
    /// The caller of a request: its verified identity, else its connection, else its address.
    pub fn of(auth: Option<&AuthInfo>, connection: Option<u64>, address: Option<IpAddr>) -> Caller {
        if let Some(key) = auth.and_then(AuthInfo::identity_key) {
            return Caller::Identity(key.into());
        }
        match (connection, address) {
            (Some(connection), _) => Caller::Connection(connection),
            (None, Some(address)) => Caller::Address(address),
            (None, None) => Caller::Anonymous,
        }
    }

    /// Who owns what this caller creates (a task): an identity or a connection. An address or
    /// nobody owns nothing: without authorization over HTTP, requests cannot be told apart, and
    /// whoever knows a task's id (128 random bits) may use it.
    pub fn owner(&self) -> Option<String> {
        match self {
            Caller::Identity(_) | Caller::Connection(_) => Some(self.key()),
            Caller::Address(_) | Caller::Anonymous => None,
        }
    }
}

impl Caller {
    /// A stable key for this caller: `sub:…` or `client:…`, `connection:N`, `address:IP`, or
    /// `anonymous`.
    pub fn key(&self) -> String {
        match self {
            Caller::Identity(key) => key.to_string(),
            Caller::Connection(n) => format!("connection:{n}"),
            Caller::Address(address) => format!("address:{address}"),
            Caller::Anonymous => "anonymous".to_owned(),
        }
    }
}

impl fmt::Display for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Caller::Identity(key) => f.write_str(key),
            Caller::Connection(n) => write!(f, "connection {n}"),
            Caller::Address(address) => write!(f, "address {address}"),
            Caller::Anonymous => f.write_str("an anonymous caller"),
        }
    }
}

/// A new connection's number (unique in this process).
pub(crate) fn next_connection() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Whether `caller` may use something that needs `scopes`: always when the request carries no
/// verified identity (stdio, or HTTP without authorization: scopes are enforced only where
/// tokens are), else when every scope was granted.
pub(crate) fn permits(caller: Option<&AuthInfo>, scopes: &[String]) -> bool {
    scopes.is_empty() || caller.is_none_or(|caller| caller.has_scopes(scopes))
}

/// The caller's verified identity, as a `#[tool]` (or resource, prompt) parameter: `Some` over
/// HTTP with authorization configured, `None` over stdio (the process owner) or HTTP without it.
///
/// ```
/// use mcp_tools::{tool, Auth};
///
/// /// Who am I?
/// #[tool]
/// async fn whoami(auth: Auth) -> String {
///     match auth.info() {
///         Some(caller) => format!("{} with {:?}", caller.principal().unwrap_or("?"), caller.scopes),
///         None => "not authenticated (stdio)".into(),
///     }
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Auth(pub Option<Arc<AuthInfo>>);

impl Auth {
    /// The identity, if the request carried one.
    pub fn info(&self) -> Option<&AuthInfo> {
        self.0.as_deref()
    }
    /// The subject, if any.
    pub fn subject(&self) -> Option<&str> {
        self.info().and_then(|i| i.subject.as_deref())
    }
    /// Whether the caller was granted `scope` (false without an identity).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.info().is_some_and(|i| i.has_scope(scope))
    }
}

#[cfg(test)]
mod tests {
    use super::AuthInfo;

    #[test]
    fn the_token_is_kept_but_never_printed() {
        let info = AuthInfo::new("alice").with_token("secret-token-value");
        assert_eq!(info.token(), Some("secret-token-value"));
        let printed = format!("{info:?}");
        assert!(!printed.contains("secret-token-value") && printed.contains("<redacted>"), "{printed}");
        assert_eq!(AuthInfo::new("bob").token(), None);
    }
}
