//! [`Authorization`]: the resource, its authorization servers, its verifier and required
//! scopes; the challenges of failed requests, and the RFC 9728 metadata document.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};

use super::jwt::JwtVerifier;
use super::token::{
    AuthConfigError, AuthError, QUOTE_LIMIT, REASON_LIMIT, TokenVerifier, canonical_resource, split_resource,
    untrusted,
};
use crate::context::auth::AuthInfo;

/// How the HTTP endpoint authorizes requests: this resource's canonical URI, the authorization
/// servers clients get tokens from, the token verifier, and the scopes every request needs.
#[derive(Clone)]
pub struct Authorization {
    resource: String,
    authorization_servers: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
    required_scopes: Vec<String>,
    scopes_supported: Option<Vec<String>>,
    implied: HashMap<String, Vec<String>>,
    resource_name: Option<String>,
    resource_documentation: Option<String>,
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorization")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("required_scopes", &self.required_scopes)
            .finish_non_exhaustive()
    }
}

impl Authorization {
    /// Tokens for `resource` (this server's canonical URI, e.g. `https://mcp.example.com/mcp`:
    /// what clients send as the RFC 8707 `resource` parameter, and the audience tokens must
    /// carry), checked by `verifier`. Name the authorization servers with
    /// [`authorization_server`](Self::authorization_server).
    pub fn new(resource: &str, verifier: impl TokenVerifier) -> Result<Self, AuthConfigError> {
        Ok(Authorization {
            resource: canonical_resource(resource)?,
            authorization_servers: Vec::new(),
            verifier: Arc::new(verifier),
            required_scopes: Vec::new(),
            scopes_supported: None,
            implied: HashMap::new(),
            resource_name: None,
            resource_documentation: None,
        })
    }

    /// JWT access tokens issued by `issuer` for `resource`, verified with the keys the issuer
    /// publishes (found through its RFC 8414 or OpenID Connect metadata): see [`JwtVerifier`].
    pub fn jwt(issuer: &str, resource: &str) -> Result<Self, AuthConfigError> {
        let verifier = JwtVerifier::new(issuer)?;
        Ok(Self::new(resource, verifier)?.authorization_server(issuer))
    }

    /// Adds an authorization server clients may get tokens from (listed in the metadata).
    pub fn authorization_server(mut self, issuer: &str) -> Self {
        let issuer = issuer.trim_end_matches('/').to_owned();
        if !self.authorization_servers.contains(&issuer) {
            self.authorization_servers.push(issuer);
        }
        self
    }

    /// Scopes every request needs (403 `insufficient_scope` without them).
    pub fn require_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.required_scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// The `scopes_supported` of the metadata: what a client asks for up front (default: the
    /// required scopes; others are obtained by step-up when an operation needs them).
    pub fn scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// A scope that implies others (`notes:admin` implies `notes:read` and `notes:write`): a
    /// token granted the broader one may do what the narrower ones allow.
    pub fn scope_implies<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        broader: &str,
        narrower: I,
    ) -> Self {
        self.implied.entry(broader.to_owned()).or_default().extend(narrower.into_iter().map(Into::into));
        self
    }

    /// A human-readable name of this resource, for the metadata.
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// A page documenting this resource, for the metadata.
    pub fn resource_documentation(mut self, url: impl Into<String>) -> Self {
        self.resource_documentation = Some(url.into());
        self
    }

    /// The canonical URI of this resource.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The URL of this resource's metadata document.
    pub fn metadata_url(&self) -> String {
        let (origin, path) = split_resource(&self.resource);
        format!("{origin}/.well-known/oauth-protected-resource{path}")
    }

    /// The paths (on this server) the metadata is served at: the one derived from the resource
    /// URI's path, and the root one.
    pub(crate) fn metadata_paths(&self) -> Vec<String> {
        let (_, path) = split_resource(&self.resource);
        let root = "/.well-known/oauth-protected-resource".to_owned();
        if path.is_empty() { vec![root] } else { vec![format!("{root}{path}"), root] }
    }

    /// The RFC 9728 metadata document.
    pub(crate) fn metadata(&self) -> Value {
        let mut doc = json!({"resource": self.resource, "bearer_methods_supported": ["header"]});
        // None for tokens no authorization server issues (static tokens).
        if !self.authorization_servers.is_empty() {
            doc["authorization_servers"] = json!(self.authorization_servers);
        }
        let supported = self.scopes_supported.as_ref().unwrap_or(&self.required_scopes);
        if !supported.is_empty() {
            doc["scopes_supported"] = json!(supported);
        }
        if let Some(name) = &self.resource_name {
            doc["resource_name"] = json!(name);
        }
        if let Some(url) = &self.resource_documentation {
            doc["resource_documentation"] = json!(url);
        }
        doc
    }

    /// Checks a request's `Authorization` header value (`None`: there was none): the caller's
    /// identity, with the scopes its granted ones imply, or the challenge to answer with.
    pub(crate) async fn authenticate(&self, header: Option<&str>) -> Result<AuthInfo, Challenge> {
        // Credentials of another scheme (Basic…) are no bearer token at all: the plain challenge,
        // without an error code (RFC 6750 §3.1), tells the client which scheme to use.
        let Some(header) = header.filter(|h| is_bearer(h)) else {
            return Err(self.challenge(ChallengeKind::Missing));
        };
        let Some(token) = bearer_token(header) else {
            return Err(self.challenge(ChallengeKind::Malformed));
        };
        let mut info = match self.verifier.verify(token, &self.resource).await {
            Ok(info) => info.with_token(token),
            // A reason may quote what the caller sent (any verifier's, not only ours): it is
            // logged and answered escaped and cut.
            Err(AuthError::Invalid(why)) => {
                let why = untrusted(&why, REASON_LIMIT);
                tracing::info!(reason = %why, "refused a request: invalid access token");
                return Err(self.challenge(ChallengeKind::Invalid(why)));
            }
            Err(AuthError::Unavailable(why)) => {
                let why = untrusted(&why, REASON_LIMIT);
                tracing::warn!(reason = %why, "cannot verify access tokens");
                return Err(self.challenge(ChallengeKind::Unavailable(why)));
            }
        };
        self.expand(&mut info.scopes);
        if !info.has_scopes(&self.required_scopes) {
            let principal = untrusted(info.principal().unwrap_or("?"), QUOTE_LIMIT);
            tracing::info!(%principal, "refused a request: the token lacks the server's required scopes");
            return Err(self.insufficient_scope(&self.required_scopes));
        }
        Ok(info)
    }

    /// Adds every scope the granted ones imply (transitively).
    fn expand(&self, scopes: &mut BTreeSet<String>) {
        let mut pending: Vec<String> = scopes.iter().cloned().collect();
        while let Some(scope) = pending.pop() {
            for implied in self.implied.get(&scope).into_iter().flatten() {
                if scopes.insert(implied.clone()) {
                    pending.push(implied.clone());
                }
            }
        }
    }

    /// The answer to a request whose credentials are malformed (several `Authorization`
    /// headers, a token in the URI).
    pub(crate) fn malformed(&self) -> Challenge {
        self.challenge(ChallengeKind::Malformed)
    }

    /// The step-up challenge for an operation needing `scopes`: they are named together with
    /// the server's required ones, so a client that replaces its scopes with the challenge's
    /// (as some do) still gets a token every request accepts.
    pub(crate) fn insufficient_scope(&self, scopes: &[String]) -> Challenge {
        let mut all = self.required_scopes.clone();
        all.extend(scopes.iter().filter(|s| !self.required_scopes.contains(s)).cloned());
        self.challenge(ChallengeKind::InsufficientScope(all))
    }

    fn challenge(&self, kind: ChallengeKind) -> Challenge {
        let mut params = vec![format!("resource_metadata=\"{}\"", self.metadata_url())];
        let (status, error, description, scopes) = match &kind {
            ChallengeKind::Missing => (401, None, None, self.required_scopes.clone()),
            ChallengeKind::Malformed => (
                400,
                Some("invalid_request"),
                Some("the Authorization header must be `Bearer <token>`".to_owned()),
                Vec::new(),
            ),
            ChallengeKind::Invalid(why) => {
                (401, Some("invalid_token"), Some(why.clone()), self.required_scopes.clone())
            }
            ChallengeKind::Unavailable(why) => (503, None, Some(why.clone()), Vec::new()),
            ChallengeKind::InsufficientScope(scopes) => (
                403,
                Some("insufficient_scope"),
                Some(format!("this needs the scopes `{}`", scopes.join(" "))),
                scopes.clone(),
            ),
        };
        if let Some(error) = error {
            params.insert(0, format!("error=\"{error}\""));
        }
        if !scopes.is_empty() {
            params.push(format!("scope=\"{}\"", scopes.join(" ")));
        }
        if let Some(description) = &description {
            params.push(format!("error_description=\"{}\"", quoted(description)));
        }
        Challenge {
            status,
            www_authenticate: (status != 503).then(|| format!("Bearer {}", params.join(", "))),
            message: match kind {
                ChallengeKind::Missing => {
                    "Unauthorized: this server needs an access token (`Authorization: Bearer …`)".to_owned()
                }
                ChallengeKind::Malformed => {
                    "Bad Request: the Authorization header must be `Bearer <token>`".to_owned()
                }
                ChallengeKind::Invalid(why) => format!("Unauthorized: invalid access token: {why}"),
                ChallengeKind::Unavailable(why) => {
                    format!("Service Unavailable: cannot verify access tokens now: {why}")
                }
                ChallengeKind::InsufficientScope(scopes) => {
                    format!("Forbidden: insufficient scope; this needs the scopes `{}`", scopes.join(" "))
                }
            },
        }
    }
}

enum ChallengeKind {
    Missing,
    Malformed,
    Invalid(String),
    Unavailable(String),
    InsufficientScope(Vec<String>),
}

/// An authorization failure as HTTP answers it: the status, the `WWW-Authenticate` header and
/// a message for the JSON-RPC error body.
#[derive(Clone, Debug)]
pub(crate) struct Challenge {
    pub status: u16,
    pub www_authenticate: Option<String>,
    pub message: String,
}

/// Whether an `Authorization` header value is of the `Bearer` scheme (in any case), well
/// formed or not.
fn is_bearer(header: &str) -> bool {
    let scheme = header.split_once(' ').map_or(header, |(scheme, _)| scheme);
    scheme.eq_ignore_ascii_case("bearer")
}

/// The token of an `Authorization: Bearer <token>` header value (RFC 6750 §2.1: the scheme in
/// any case, one space, a token68).
fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.split_once(' ')?;
    let token68 = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && token.chars().all(token68))
        .then_some(token)
}

/// Escapes a value for a quoted-string of an HTTP header (and keeps it to printable ASCII).
fn quoted(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii() && !c.is_ascii_control())
        .flat_map(|c| if c == '"' || c == '\\' { vec!['\\', c] } else { vec![c] })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::static_tokens::StaticTokens;
    use super::super::token::scopes_of;
    use super::*;

    #[test]
    fn resource_uris_are_canonical() {
        assert_eq!(
            canonical_resource("HTTPS://MCP.Example.com/mcp/").unwrap(),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            canonical_resource("https://mcp.example.com:8443").unwrap(),
            "https://mcp.example.com:8443"
        );
        assert_eq!(canonical_resource("http://localhost:3000/mcp").unwrap(), "http://localhost:3000/mcp");
        for bad in ["mcp.example.com", "https://x/#frag", "http://mcp.example.com/mcp", "https://x/?a=b", ""]
        {
            assert!(canonical_resource(bad).is_err(), "{bad}");
        }
        assert_eq!(split_resource("https://h:1/a/b"), ("https://h:1", "/a/b"));
        assert_eq!(split_resource("https://h"), ("https://h", ""));
    }

    #[test]
    fn bearer_tokens_are_read_strictly() {
        assert_eq!(bearer_token("Bearer abc.DEF-_~+/="), Some("abc.DEF-_~+/="));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        for bad in ["Basic abc", "Bearer", "Bearer ", "Bearer a b", "Bearer  abc", "Bearer ab\"c", "abc"] {
            assert_eq!(bearer_token(bad), None, "{bad}");
        }
        for bearer in ["Bearer", "bearer abc", "BEARER  a b"] {
            assert!(is_bearer(bearer), "{bearer}");
        }
        for other in ["Basic abc", "Bearerish abc", "", "Digest username=\"u\""] {
            assert!(!is_bearer(other), "{other}");
        }
    }

    #[test]
    fn scopes_come_from_scope_or_scp_and_imply_others() {
        let claims = json!({"scope": "a b", "scp": ["c"]});
        let scopes = scopes_of(claims.as_object().unwrap());
        assert_eq!(scopes.into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        let auth = Authorization::new("https://r.example", StaticTokens::new())
            .unwrap()
            .scope_implies("admin", ["write"])
            .scope_implies("write", ["read"]);
        let mut granted = BTreeSet::from(["admin".to_owned()]);
        auth.expand(&mut granted);
        assert_eq!(granted.into_iter().collect::<Vec<_>>(), ["admin", "read", "write"]);
    }

    #[test]
    fn challenges_name_the_metadata_and_the_scopes() {
        let auth = Authorization::new("https://mcp.example.com/mcp", StaticTokens::new())
            .unwrap()
            .authorization_server("https://login.example.com/")
            .require_scopes(["notes:read"]);
        assert_eq!(auth.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
        assert_eq!(
            auth.metadata_paths(),
            ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
        );
        let missing = auth.challenge(ChallengeKind::Missing);
        assert_eq!(missing.status, 401);
        assert_eq!(
            missing.www_authenticate.as_deref(),
            Some(
                r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="notes:read""#
            )
        );
        let step_up = auth.insufficient_scope(&["notes:write".to_owned()]);
        assert_eq!(step_up.status, 403);
        let header = step_up.www_authenticate.unwrap();
        assert!(header.starts_with(r#"Bearer error="insufficient_scope", resource_metadata=""#), "{header}");
        assert!(header.contains(r#"scope="notes:read notes:write""#), "{header}");
        let metadata = auth.metadata();
        assert_eq!(metadata["resource"], "https://mcp.example.com/mcp");
        assert_eq!(metadata["authorization_servers"], json!(["https://login.example.com"]));
        assert_eq!(metadata["scopes_supported"], json!(["notes:read"]));
    }

    /// A log that keeps what the fmt layer writes.
    #[derive(Clone, Default)]
    struct Log(Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Log {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_refused_token_is_one_log_line_whatever_it_carries() {
        use base64::Engine as _;
        // An issuer's key set (the public key of tests/data/auth/ec-1).
        let jwks = json!({"keys": [{"kty": "EC", "kid": "ec-1", "use": "sig", "alg": "ES256", "crv": "P-256",
            "x": "sT9-SX7XlY4txBcMcmh4Wi5JzzvpefxE6bQzbeBBUUw", "y": "4i32xeW8JN5-TuqBWwjO3BWSAWvMBYzmlIzNy70bgaE"}]});
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let app =
            axum::Router::new().route("/jwks", axum::routing::get(move || async move { jwks.to_string() }));
        tokio::spawn(async move { axum::serve(listener, app).await });
        let verifier = JwtVerifier::new(&issuer).unwrap().jwks_uri(&format!("{issuer}/jwks")).unwrap();
        let auth = Authorization::new("http://localhost/mcp", verifier).unwrap();

        let log = Log::default();
        let writer = log.clone();
        let subscriber =
            tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false).finish();
        let _logging = tracing::subscriber::set_default(subscriber);
        let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let kid = format!("k\nFORGED line{}", "x".repeat(10_000));
        let header = b64(json!({"alg": "ES256", "typ": "at+jwt", "kid": kid}));
        let payload = b64(json!({"iss": issuer, "aud": "http://localhost/mcp", "exp": 4_000_000_000u64}));
        let refused = auth.authenticate(Some(&format!("Bearer {header}.{payload}.c2ln"))).await.unwrap_err();
        assert_eq!(refused.status, 401);

        let log = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
        assert_eq!(log.lines().count(), 1, "{log}");
        assert!(log.contains("refused a request") && log.contains(r"unknown key (k\nFORGED line"), "{log}");
        assert!(log.len() < 1024, "a {}-byte log line", log.len());
    }
}
