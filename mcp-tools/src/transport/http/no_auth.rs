//! The endpoint without the `auth` feature: nothing to verify, no metadata to serve.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;

use super::sessions::HttpState;

pub(super) fn required(_: &HttpState) -> bool {
    false
}

pub(super) async fn authenticate(_: &HttpState, _: &mut Request) -> Result<(), Response> {
    Ok(())
}

pub(super) fn step_up(_: &HttpState, _: &[u8]) -> Option<Response> {
    None
}

pub(super) fn metadata_routes(router: Router, _: &Arc<HttpState>) -> Router {
    router
}
