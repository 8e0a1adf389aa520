//! The HTTP client of the verifiers (an issuer's metadata and keys, an introspection endpoint):
//! `https` only (plain `http` to a loopback host, for tests and sidecars), bounded in time and
//! in the size of what it reads.

use std::time::Duration;

use serde_json::Value;

use super::token::AuthConfigError;
use crate::fetch_error::describe;

/// The largest document read (metadata, a key set, an introspection answer).
const MAX_BYTES: usize = 1024 * 1024;

/// A client for the verifiers' own requests.
pub(super) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("mcp-tools/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("a reqwest client with rustls builds")
}

/// Checks that `url` is one a verifier may call: absolute, `https`, or `http` to a loopback host.
pub(super) fn check_url(url: &str) -> Result<reqwest::Url, AuthConfigError> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| AuthConfigError(format!("{url:?} is not a URL: {e}")))?;
    let loopback = matches!(parsed.host_str(), Some("localhost" | "127.0.0.1" | "[::1]" | "::1"));
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(AuthConfigError(format!("{url:?} must be an https URL (http only on a loopback host)"))),
    }
}

/// Sends `request` and reads its JSON answer (at most 1 MiB); any failure is described.
pub(super) async fn json(request: reqwest::RequestBuilder) -> Result<Value, String> {
    let mut response = request.send().await.map_err(|e| describe(&e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{} answered HTTP {status}", response.url()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| describe(&e))? {
        if body.len() + chunk.len() > MAX_BYTES {
            return Err(format!("{} sent more than {MAX_BYTES} bytes", response.url()));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("{} did not send JSON: {e}", response.url()))
}
