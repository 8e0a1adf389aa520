//! Who is calling: [`AuthInfo`], the identity a verified access token carries (over HTTP with
//! authorization configured), and [`Auth`], the `#[tool]` parameter that hands it over.

use std::collections::BTreeSet;
use std::sync::Arc;
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
    /// Who this is, for logs and for binding a session to its caller: the subject, else the
    /// client id.
    pub fn principal(&self) -> Option<&str> {
        self.subject.as_deref().or(self.client_id.as_deref())
    }
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
