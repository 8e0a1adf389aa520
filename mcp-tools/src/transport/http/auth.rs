//! Authorization on the endpoint (feature `auth`): each request's bearer token verified before
//! anything else reads it, the identity handed to the call, the 401/403 challenges, the step-up
//! answer to a call that needs more scopes, and the RFC 9728 metadata document.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::sessions::HttpState;
use super::wire::rpc_error_response;
use crate::auth::authorization::Challenge;
use crate::auth::token::{REASON_LIMIT, untrusted};
use crate::protocol::UNAUTHORIZED;

/// Whether the endpoint requires a token.
pub(super) fn required(state: &HttpState) -> bool {
    state.options.authorization.is_some()
}

/// Verifies the request's token when the endpoint requires one, and attaches the identity to
/// the request; a request that fails is answered here.
pub(super) async fn authenticate(state: &HttpState, request: &mut Request) -> Result<(), Response> {
    let Some(authorization) = &state.options.authorization else { return Ok(()) };
    // Tokens travel in the Authorization header only, never in the URI.
    if request.uri().query().is_some_and(|q| q.split('&').any(|p| p.starts_with("access_token="))) {
        let challenge = authorization.malformed();
        return Err(challenge_response(&challenge, None));
    }
    let mut headers = request.headers().get_all(header::AUTHORIZATION).iter();
    let (value, extra) = (headers.next(), headers.next());
    let value = match (value.map(HeaderValue::to_str), extra) {
        (None, _) => None,
        (Some(Ok(value)), None) => Some(value),
        _ => return Err(challenge_response(&authorization.malformed(), None)),
    };
    match authorization.authenticate(value).await {
        Ok(info) => {
            // The token stays here: handlers get the identity it carries, never the token
            // itself (to log, or to pass on to another service as if they were the caller).
            request.headers_mut().remove(header::AUTHORIZATION);
            request.extensions_mut().insert(Arc::new(info));
            Ok(())
        }
        Err(challenge) => Err(challenge_response(&challenge, None)),
    }
}

/// The step-up answer (403 with the challenge) when `answer` is the error of a call the caller
/// lacks scopes for.
pub(super) fn step_up(state: &HttpState, answer: &[u8]) -> Option<Response> {
    let authorization = state.options.authorization.as_ref()?;
    let scopes = required_scopes(answer)?;
    let id = answer_id(answer);
    let named = untrusted(&scopes.join(" "), REASON_LIMIT);
    tracing::info!(scopes = %named, "a call needs more scopes: step-up challenge");
    Some(challenge_response(&authorization.insufficient_scope(&scopes), id))
}

/// The routes of the protected-resource metadata, when the endpoint requires authorization.
pub(super) fn metadata_routes(router: Router, state: &Arc<HttpState>) -> Router {
    let Some(authorization) = &state.options.authorization else { return router };
    let document = authorization.metadata().to_string();
    authorization.metadata_paths().into_iter().fold(router, |router, path| {
        let document = document.clone();
        let serve = move || async move { ([(header::CONTENT_TYPE, "application/json")], document) };
        router.route(&path, axum::routing::get(serve))
    })
}

fn challenge_response(challenge: &Challenge, id: Option<crate::protocol::RequestId>) -> Response {
    let status = StatusCode::from_u16(challenge.status).unwrap_or(StatusCode::UNAUTHORIZED);
    let mut response = rpc_error_response(status, id.as_ref(), UNAUTHORIZED, challenge.message.clone());
    if let Some(value) = challenge.www_authenticate.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
    response.into_response()
}

/// The scopes named by an answer's insufficient-scope error, if it is one.
fn required_scopes(answer: &[u8]) -> Option<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct Answer {
        error: Option<crate::protocol::jsonrpc::ErrorObject>,
    }
    let error = serde_json::from_slice::<Answer>(answer).ok()?.error?;
    error.required_scopes()
}

fn answer_id(answer: &[u8]) -> Option<crate::protocol::RequestId> {
    #[derive(serde::Deserialize)]
    struct Id {
        id: Option<crate::protocol::RequestId>,
    }
    serde_json::from_slice::<Id>(answer).ok().and_then(|a| a.id)
}
