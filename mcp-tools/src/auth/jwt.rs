//! [`JwtVerifier`]: JWT access tokens (RFC 9068) checked against the issuer's published keys.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use tokio::sync::Mutex as AsyncMutex;

use super::fetch;
use super::token::{
    AuthConfigError, AuthError, QUOTE_LIMIT, REASON_LIMIT, TokenVerifier, audience_matches, identity_of,
    untrusted,
};
use crate::context::auth::AuthInfo;

/// The signature algorithms accepted: asymmetric ones only (a key set publishes public keys;
/// `none` and the HMAC algorithms are refused).
const ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens: the header's `typ` saying it is one (`at+jwt`, RFC 9068 §4: not
/// an ID token or another JWT of the issuer; [`allow_jwt_typ`](Self::allow_jwt_typ) for
/// issuers that type their access tokens `JWT`), the signature with the issuer's published keys
/// (RS256/384/512, PS256/384/512, ES256/384, EdDSA; never `none` or HMAC), `exp` and `nbf` with
/// a small leeway for clock skew (60 s by default), `iss` equal to the issuer, and `aud` naming
/// this resource (RFC 8707). Scopes come from `scope` (or `scp`), the subject from `sub`, the
/// client from `client_id` (or `azp`).
///
/// The key set is found through the issuer's metadata (RFC 8414 `oauth-authorization-server`,
/// then OpenID Connect `openid-configuration`, each checked to name the same issuer), fetched
/// on first use and kept. A token signed by an unknown key (`kid`) makes the verifier fetch
/// the set again, at most once every 30 s (so keys the issuer rotates in are picked up, and a
/// flood of bad tokens does not become a flood of requests to the issuer); the set is also
/// refreshed after an hour. When the keys cannot be fetched at all, requests get 503.
pub struct JwtVerifier {
    issuer: String,
    jwks_uri: Option<String>,
    leeway: Duration,
    allow_jwt_typ: bool,
    refresh_after: Duration,
    min_refetch: Duration,
    keys: Mutex<Keys>,
    /// One fetch at a time.
    fetching: AsyncMutex<()>,
    client: reqwest::Client,
}

#[derive(Default)]
struct Keys {
    by_kid: HashMap<Option<String>, (DecodingKey, Option<Algorithm>)>,
    fetched_at: Option<Instant>,
    attempted_at: Option<Instant>,
    jwks_uri: Option<String>,
    last_error: Option<String>,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("jwks_uri", &self.jwks_uri)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// Tokens of `issuer` (its identifier: `https://login.example.com`, or with a path), whose
    /// key set is found through its metadata.
    pub fn new(issuer: &str) -> Result<Self, AuthConfigError> {
        fetch::check_url(issuer)?;
        Ok(JwtVerifier {
            issuer: issuer.trim_end_matches('/').to_owned(),
            jwks_uri: None,
            leeway: Duration::from_secs(60),
            allow_jwt_typ: false,
            refresh_after: Duration::from_secs(3600),
            min_refetch: Duration::from_secs(30),
            keys: Mutex::new(Keys::default()),
            fetching: AsyncMutex::new(()),
            client: fetch::client(),
        })
    }

    /// Fetches the key set from `jwks_uri` instead of discovering it.
    pub fn jwks_uri(mut self, jwks_uri: &str) -> Result<Self, AuthConfigError> {
        fetch::check_url(jwks_uri)?;
        self.jwks_uri = Some(jwks_uri.to_owned());
        Ok(self)
    }

    /// The clock skew tolerated on `exp` and `nbf` (default 60 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Also accepts tokens whose header says `typ: JWT` (or `application/jwt`) or has no `typ`,
    /// for identity providers that issue their access tokens so (Keycloak and Microsoft Entra
    /// ID, for instance). RFC 9068 asks for `at+jwt` so that no other JWT the issuer signs (an OpenID
    /// Connect ID token, say) passes for an access token; with this option the audience check
    /// is what tells them apart, so do not use it when the issuer's other tokens may name this
    /// resource as their audience. Off by default.
    pub fn allow_jwt_typ(mut self) -> Self {
        self.allow_jwt_typ = true;
        self
    }

    /// Whether a token's `typ` header says it is an access token (compared as media types:
    /// in any case, `application/` optional, RFC 7515 §4.1.9).
    fn typ_accepted(&self, typ: Option<&str>) -> bool {
        let Some(typ) = typ else { return self.allow_jwt_typ };
        let typ = typ.to_ascii_lowercase();
        let typ = typ.strip_prefix("application/").unwrap_or(&typ);
        typ == "at+jwt" || (self.allow_jwt_typ && typ == "jwt")
    }

    /// The shortest time between two fetches of the key set caused by unknown keys (default
    /// 30 s).
    pub fn min_refetch_interval(mut self, interval: Duration) -> Self {
        self.min_refetch = interval;
        self
    }

    async fn check(&self, token: &str, resource: &str) -> Result<AuthInfo, AuthError> {
        let invalid = |why: &str| AuthError::Invalid(why.to_owned());
        // (`alg: none` is not even an algorithm to the decoder.)
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| invalid("not a JWT signed with an accepted algorithm"))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(AuthError::Invalid(format!("tokens signed with {:?} are not accepted", header.alg)));
        }
        if !self.typ_accepted(header.typ.as_deref()) {
            return Err(AuthError::Invalid(match &header.typ {
                Some(typ) => format!(
                    "not an access token: its `typ` is \"{}\", not \"at+jwt\" (RFC 9068)",
                    untrusted(typ, QUOTE_LIMIT)
                ),
                None => "not an access token: its header has no `typ` \"at+jwt\" (RFC 9068)".to_owned(),
            }));
        }
        let kid = header.kid.clone();
        let key = match self.key(&kid, false).await? {
            Some(key) => key,
            None => self.key(&kid, true).await?.ok_or_else(|| {
                AuthError::Invalid(match &kid {
                    Some(kid) => format!("signed by an unknown key ({})", untrusted(kid, QUOTE_LIMIT)),
                    None => "signed by an unknown key (no kid)".to_owned(),
                })
            })?,
        };
        let (key, key_alg) = key;
        if key_alg.is_some_and(|a| a != header.alg) {
            return Err(invalid("the token's algorithm is not its key's"));
        }
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.validate_aud = false; // checked below, in canonical form
        validation.set_issuer(&[&self.issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation).map_err(|e| {
            AuthError::Invalid(match e.kind() {
                ErrorKind::ExpiredSignature => "expired".to_owned(),
                ErrorKind::ImmatureSignature => {
                    "not valid yet (its `nbf` is in the future: are the clocks in sync?)".to_owned()
                }
                ErrorKind::InvalidIssuer => format!("not issued by {}", self.issuer),
                ErrorKind::InvalidSignature => "bad signature".to_owned(),
                ErrorKind::MissingRequiredClaim(claim) => format!("no `{claim}` claim"),
                ErrorKind::InvalidAlgorithm => "the token's algorithm does not match its key".to_owned(),
                // (A decoding error may quote the token's claims.)
                other => format!("rejected ({})", untrusted(&format!("{other:?}"), QUOTE_LIMIT)),
            })
        })?;
        if !audience_matches(data.claims.get("aud"), resource) {
            return Err(AuthError::Invalid(format!("not issued for this resource ({resource})")));
        }
        Ok(identity_of(data.claims))
    }

    /// The key named `kid` (a token without `kid`: the only key, if there is one), fetching the
    /// set first when there is none yet, it is old, or `refetch` asks (at most once per
    /// `min_refetch`).
    async fn key(
        &self,
        kid: &Option<String>,
        refetch: bool,
    ) -> Result<Option<(DecodingKey, Option<Algorithm>)>, AuthError> {
        let lookup = |keys: &Keys| match kid {
            Some(_) => keys.by_kid.get(kid).cloned(),
            None if keys.by_kid.len() == 1 => keys.by_kid.values().next().cloned(),
            None => keys.by_kid.get(&None).cloned(),
        };
        // What the keys we have allow, when no fetch is due (or allowed) now.
        let settled = |keys: &Keys, fetch_due: bool| -> Option<Result<_, AuthError>> {
            let tried_recently = keys.attempted_at.is_some_and(|at| at.elapsed() < self.min_refetch);
            if !fetch_due || tried_recently {
                return Some(match (&keys.last_error, keys.by_kid.is_empty()) {
                    (Some(why), true) => {
                        Err(AuthError::Unavailable(format!("cannot fetch the issuer's signing keys: {why}")))
                    }
                    _ => Ok(lookup(keys)),
                });
            }
            None
        };
        {
            let keys = self.keys.lock().expect("keys lock");
            let stale = keys.fetched_at.is_none_or(|at| at.elapsed() > self.refresh_after);
            if let Some(outcome) = settled(&keys, stale || refetch) {
                return outcome;
            }
        }
        let _one = self.fetching.lock().await;
        if let Some(outcome) = settled(&self.keys.lock().expect("keys lock"), true) {
            return outcome; // fetched (or tried) by another request meanwhile
        }
        let fetched = self.fetch_keys().await;
        let mut keys = self.keys.lock().expect("keys lock");
        keys.attempted_at = Some(Instant::now());
        match fetched {
            Ok((jwks_uri, fetched)) => {
                keys.by_kid = fetched;
                keys.jwks_uri = Some(jwks_uri);
                keys.fetched_at = keys.attempted_at;
                keys.last_error = None;
            }
            Err(why) => {
                tracing::warn!(
                    issuer = %self.issuer,
                    reason = %untrusted(&why, REASON_LIMIT),
                    "cannot fetch the issuer's signing keys"
                );
                keys.last_error = Some(why);
            }
        }
        // On failure, the keys we had (if any) still serve.
        settled(&keys, false).expect("settled without a fetch due")
    }

    /// The key set: its URI (given, remembered or discovered) and its usable keys.
    #[allow(clippy::type_complexity)]
    async fn fetch_keys(
        &self,
    ) -> Result<(String, HashMap<Option<String>, (DecodingKey, Option<Algorithm>)>), String> {
        let known = self.keys.lock().expect("keys lock").jwks_uri.clone();
        let jwks_uri = match self.jwks_uri.clone().or(known) {
            Some(uri) => uri,
            None => self.discover().await?,
        };
        let set: JwkSet = serde_json::from_value(fetch::json(self.client.get(&jwks_uri)).await?)
            .map_err(|e| format!("{jwks_uri} is not a JWK set: {e}"))?;
        let mut keys = HashMap::new();
        for jwk in &set.keys {
            // Signing keys only (`use` absent or `sig`).
            if jwk
                .common
                .public_key_use
                .as_ref()
                .is_some_and(|u| *u != jsonwebtoken::jwk::PublicKeyUse::Signature)
            {
                continue;
            }
            let alg = jwk.common.key_algorithm.and_then(|a| a.to_string().parse::<Algorithm>().ok());
            match DecodingKey::from_jwk(jwk) {
                Ok(key) => {
                    keys.insert(jwk.common.key_id.clone(), (key, alg));
                }
                Err(e) => tracing::debug!(
                    kid = %untrusted(jwk.common.key_id.as_deref().unwrap_or_default(), QUOTE_LIMIT),
                    error = %e,
                    "skipping an unusable key"
                ),
            }
        }
        if keys.is_empty() {
            return Err(format!("{jwks_uri} has no usable signing key"));
        }
        Ok((jwks_uri, keys))
    }

    /// The `jwks_uri` of the issuer's metadata, from the well-known URIs in the order the MCP
    /// specification gives; a document naming another issuer is refused.
    async fn discover(&self) -> Result<String, String> {
        let (origin, path) = super::token::split_resource(&self.issuer);
        let candidates = if path.is_empty() {
            vec![
                format!("{origin}/.well-known/oauth-authorization-server"),
                format!("{origin}/.well-known/openid-configuration"),
            ]
        } else {
            vec![
                format!("{origin}/.well-known/oauth-authorization-server{path}"),
                format!("{origin}/.well-known/openid-configuration{path}"),
                format!("{}/.well-known/openid-configuration", self.issuer),
            ]
        };
        let mut problems = Vec::new();
        for url in candidates {
            match fetch::json(self.client.get(&url)).await {
                Ok(doc) => {
                    let issuer = doc["issuer"].as_str().unwrap_or_default().trim_end_matches('/');
                    if issuer != self.issuer {
                        let named = untrusted(issuer, QUOTE_LIMIT);
                        problems.push(format!("{url} names the issuer \"{named}\", not {}", self.issuer));
                        continue;
                    }
                    match doc["jwks_uri"].as_str() {
                        Some(uri) => {
                            fetch::check_url(uri).map_err(|e| e.0)?;
                            return Ok(uri.to_owned());
                        }
                        None => problems.push(format!("{url} has no jwks_uri")),
                    }
                }
                Err(e) => problems.push(e),
            }
        }
        Err(format!("no metadata of {} gives a key set ({})", self.issuer, problems.join("; ")))
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> BoxFuture<'a, Result<AuthInfo, AuthError>> {
        Box::pin(self.check(token, resource))
    }
}
