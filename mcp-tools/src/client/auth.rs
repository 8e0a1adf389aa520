//! What authorizes a client's HTTP requests: an [`Authenticator`] gives the `Authorization`
//! header of each request and is asked again when the server refuses it.

use futures_util::future::BoxFuture;

use super::error::ClientError;

/// Gives the `Authorization` header of a client's HTTP requests ([`BearerToken`]; OAuth flows).
/// The client asks for the header before each request, and, when the server refuses one (401,
/// or 403 with `error="insufficient_scope"`), calls [`refused`](Self::refused) with the
/// server's `WWW-Authenticate` challenge and retries the request once more if it answers
/// `true`.
pub trait Authenticator: Send + Sync + 'static {
    /// The `Authorization` header's value for a request to `url` (`None`: no header).
    fn authorization<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Option<String>, ClientError>>;

    /// The server at `url` refused a request with `status` and this `WWW-Authenticate`
    /// challenge: renew the credentials (or ask for more scopes) and answer whether to retry.
    fn refused<'a>(
        &'a self,
        url: &'a str,
        status: u16,
        challenge: Option<&'a str>,
    ) -> BoxFuture<'a, Result<bool, ClientError>> {
        let _ = url;
        let said = challenge.map(|c| format!("; {c}")).unwrap_or_default();
        Box::pin(async move {
            Err(ClientError::Unauthorized(format!(
                "the server refused the credentials (HTTP {status}{said})"
            )))
        })
    }
}

/// A fixed bearer token: `Authorization: Bearer <token>` on every request.
#[derive(Clone)]
pub struct BearerToken(String);

impl BearerToken {
    /// The token.
    pub fn new(token: impl Into<String>) -> Self {
        BearerToken(token.into())
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

impl Authenticator for BearerToken {
    fn authorization<'a>(&'a self, _url: &'a str) -> BoxFuture<'a, Result<Option<String>, ClientError>> {
        Box::pin(async move { Ok(Some(format!("Bearer {}", self.0))) })
    }
}
