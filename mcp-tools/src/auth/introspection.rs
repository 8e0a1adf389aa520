//! [`Introspection`]: opaque tokens checked with the authorization server (RFC 7662).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::fetch;
use super::token::{AuthConfigError, AuthError, TokenVerifier, audience_matches, identity_of};
use crate::context::auth::AuthInfo;

/// Verifies opaque access tokens by asking the authorization server's introspection endpoint
/// (RFC 7662), authenticated as this resource server's client (HTTP Basic). A token is accepted
/// when the answer says `active`, its `exp` (if any) is in the future, and its `aud` names this
/// resource (RFC 8707; [`allow_missing_audience`](Self::allow_missing_audience) for servers that
/// leave `aud` out). Answers are cached (by the token's digest) for at most a minute and never
/// past the token's expiry, so a revoked token stops working within a minute.
pub struct Introspection {
    endpoint: reqwest::Url,
    client_id: String,
    client_secret: String,
    require_audience: bool,
    cache_for: Duration,
    cache: Mutex<HashMap<[u8; 32], (AuthInfo, Instant)>>,
    client: reqwest::Client,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint.as_str())
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// The most answers kept.
const CACHE_ENTRIES: usize = 10_000;

impl Introspection {
    /// Introspects at `endpoint` as the client `client_id` with `client_secret`.
    pub fn new(
        endpoint: &str,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Result<Self, AuthConfigError> {
        Ok(Introspection {
            endpoint: fetch::check_url(endpoint)?,
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            require_audience: true,
            cache_for: Duration::from_secs(60),
            cache: Mutex::new(HashMap::new()),
            client: fetch::client(),
        })
    }

    /// Accepts answers without `aud` (some servers leave it out; then any token of the server
    /// is accepted, so use this only when the server issues tokens for this resource alone).
    pub fn allow_missing_audience(mut self) -> Self {
        self.require_audience = false;
        self
    }

    /// How long an answer is reused (default 60 s; zero: every request asks).
    pub fn cache_for(mut self, duration: Duration) -> Self {
        self.cache_for = duration;
        self
    }

    async fn check(&self, token: &str, resource: &str) -> Result<AuthInfo, AuthError> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((info, until)) = self.cache.lock().expect("cache lock").get(&digest)
            && Instant::now() < *until
        {
            return Ok(info.clone());
        }
        let request = self
            .client
            .post(self.endpoint.clone())
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .header("accept", "application/json")
            .form(&[("token", token), ("token_type_hint", "access_token")]);
        let answer = fetch::json(request).await.map_err(AuthError::Unavailable)?;
        let Value::Object(claims) = answer else {
            return Err(AuthError::Unavailable("the introspection answer is not a JSON object".into()));
        };
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(AuthError::Invalid("not active (expired, revoked or unknown)".into()));
        }
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_secs();
        let exp = claims.get("exp").and_then(Value::as_u64);
        if exp.is_some_and(|exp| exp <= now) {
            return Err(AuthError::Invalid("expired".into()));
        }
        match claims.get("aud") {
            None if !self.require_audience => {}
            aud if audience_matches(aud, resource) => {}
            _ => return Err(AuthError::Invalid(format!("not issued for this resource ({resource})"))),
        }
        let info = identity_of(claims);
        let ttl = exp.map_or(self.cache_for, |exp| self.cache_for.min(Duration::from_secs(exp - now)));
        if !ttl.is_zero() {
            let mut cache = self.cache.lock().expect("cache lock");
            if cache.len() >= CACHE_ENTRIES {
                let now = Instant::now();
                cache.retain(|_, (_, until)| *until > now);
                if cache.len() >= CACHE_ENTRIES {
                    cache.clear();
                }
            }
            cache.insert(digest, (info.clone(), Instant::now() + ttl));
        }
        Ok(info)
    }
}

impl TokenVerifier for Introspection {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> BoxFuture<'a, Result<AuthInfo, AuthError>> {
        Box::pin(self.check(token, resource))
    }
}
