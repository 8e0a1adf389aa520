//! [`Introspection`]: opaque tokens checked with the authorization server (RFC 7662).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use super::fetch;
use super::token::{AuthConfigError, AuthError, TokenVerifier, audience_matches, identity_of};
use crate::context::auth::AuthInfo;

/// Verifies opaque access tokens by asking the authorization server's introspection endpoint
/// (RFC 7662), authenticated as this resource server's client (HTTP Basic). A token is accepted
/// when the answer says `active`, its `exp` (if any) is in the future, and its `aud` names this
/// resource (RFC 8707; [`allow_missing_audience`](Self::allow_missing_audience) for servers that
/// leave `aud` out). Answers are cached (by the token's digest) for at most a minute and never
/// past the token's expiry, so a revoked token stops working within a minute.
///
/// Guessed, revoked or foreign tokens must not turn into as many requests to the authorization
/// server: a refused token is remembered (by digest) for a minute, the 10,000 most recent at
/// most ([`negative_cache`](Self::negative_cache)), and at most 32 introspection requests are
/// under way at once; a token check that finds them all busy waits up to a second for one, then
/// is answered 503 ([`max_concurrent_requests`](Self::max_concurrent_requests)).
pub struct Introspection {
    endpoint: reqwest::Url,
    client_id: String,
    client_secret: String,
    require_audience: bool,
    cache_for: Duration,
    cache: Mutex<HashMap<[u8; 32], (AuthInfo, Instant)>>,
    refuse_for: Duration,
    refusals_kept: usize,
    refusals: Mutex<Refusals>,
    concurrent: usize,
    wait: Duration,
    requests: Semaphore,
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

/// Tokens refused recently, by digest, with why; `order` is oldest first (every entry lives
/// equally long, so it is also the order they expire in).
#[derive(Default)]
struct Refusals {
    by_digest: HashMap<[u8; 32], (Instant, String)>,
    order: VecDeque<([u8; 32], Instant)>,
}

impl Refusals {
    fn get(&self, digest: &[u8; 32]) -> Option<&str> {
        let (until, why) = self.by_digest.get(digest)?;
        (Instant::now() < *until).then_some(why.as_str())
    }

    /// Remembers a refusal until `until`, dropping expired ones and, beyond `most`, the oldest.
    fn insert(&mut self, digest: [u8; 32], until: Instant, why: &str, most: usize) {
        let now = Instant::now();
        while let Some(&(oldest, expires)) = self.order.front() {
            if expires > now && self.order.len() < most {
                break;
            }
            self.order.pop_front();
            // The same token may have been refused again since (two requests at once).
            if self.by_digest.get(&oldest).is_some_and(|(at, _)| *at == expires) {
                self.by_digest.remove(&oldest);
            }
        }
        self.order.push_back((digest, until));
        self.by_digest.insert(digest, (until, why.to_owned()));
    }
}

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
            refuse_for: Duration::from_secs(60),
            refusals_kept: 10_000,
            refusals: Mutex::new(Refusals::default()),
            concurrent: 32,
            wait: Duration::from_secs(1),
            requests: Semaphore::new(32),
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

    /// How long a refused token (inactive, expired, for another resource) is answered 401
    /// without asking again, and how many such tokens are remembered, the oldest forgotten
    /// first (default 60 s and 10,000; a zero duration or count: every request asks).
    pub fn negative_cache(mut self, duration: Duration, entries: usize) -> Self {
        self.refuse_for = duration;
        self.refusals_kept = entries;
        self
    }

    /// At most `requests` introspection requests under way at once (default 32, at least 1); a
    /// token check finding them all busy waits up to `wait` (default 1 s) for one, then is
    /// refused as unverifiable now (HTTP 503 with `Retry-After`).
    pub fn max_concurrent_requests(mut self, requests: usize, wait: Duration) -> Self {
        self.concurrent = requests.clamp(1, Semaphore::MAX_PERMITS);
        self.requests = Semaphore::new(self.concurrent);
        self.wait = wait;
        self
    }

    /// What is known of a token without asking: a cached answer or a recent refusal.
    fn known(&self, digest: &[u8; 32]) -> Option<Result<AuthInfo, AuthError>> {
        if let Some((info, until)) = self.cache.lock().expect("cache lock").get(digest)
            && Instant::now() < *until
        {
            return Some(Ok(info.clone()));
        }
        let refusals = self.refusals.lock().expect("refusals lock");
        refusals.get(digest).map(|why| Err(AuthError::Invalid(why.to_owned())))
    }

    async fn check(&self, token: &str, resource: &str) -> Result<AuthInfo, AuthError> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(known) = self.known(&digest) {
            return known;
        }
        let Ok(Ok(_request)) = tokio::time::timeout(self.wait, self.requests.acquire()).await else {
            return Err(AuthError::Unavailable(format!(
                "too many tokens to check at once ({} introspection requests under way)",
                self.concurrent
            )));
        };
        // Another request with the same token may have been answered while this one waited.
        if let Some(known) = self.known(&digest) {
            return known;
        }
        let outcome = self.introspect(token, resource).await;
        match &outcome {
            Ok(info) => self.remember(digest, info),
            Err(AuthError::Invalid(why)) if !self.refuse_for.is_zero() && self.refusals_kept > 0 => {
                let until = Instant::now() + self.refuse_for;
                let mut refusals = self.refusals.lock().expect("refusals lock");
                refusals.insert(digest, until, why, self.refusals_kept);
            }
            Err(_) => {}
        }
        outcome
    }

    /// Asks the endpoint about `token` and checks its answer.
    async fn introspect(&self, token: &str, resource: &str) -> Result<AuthInfo, AuthError> {
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
        let exp = claims.get("exp").and_then(Value::as_u64);
        if exp.is_some_and(|exp| exp <= unix_now()) {
            return Err(AuthError::Invalid("expired".into()));
        }
        match claims.get("aud") {
            None if !self.require_audience => {}
            aud if audience_matches(aud, resource) => {}
            _ => return Err(AuthError::Invalid(format!("not issued for this resource ({resource})"))),
        }
        Ok(identity_of(claims))
    }

    /// Keeps an accepted token's identity for reuse, never past the token's expiry.
    fn remember(&self, digest: [u8; 32], info: &AuthInfo) {
        let left = info
            .expires_at
            .map(|at| at.duration_since(SystemTime::now()).unwrap_or_default())
            .unwrap_or(self.cache_for);
        let ttl = self.cache_for.min(left);
        if ttl.is_zero() {
            return;
        }
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
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_secs()
}

impl TokenVerifier for Introspection {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> BoxFuture<'a, Result<AuthInfo, AuthError>> {
        Box::pin(self.check(token, resource))
    }
}
