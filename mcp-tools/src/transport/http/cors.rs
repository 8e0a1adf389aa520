//! CORS where a browser is: [`BrowserCorsLayer`].

use std::task::{Context, Poll, ready};

use axum::http::{Method, Request, Response, header};
use futures_util::future::Either;
use tower::{Layer, Service};
use tower_http::cors::{Cors, CorsLayer};

/// A [`CorsLayer`] applied only to requests that carry an `Origin` header, which browsers send
/// with every cross-origin request and preflight, and to every `OPTIONS` request. Other
/// clients' requests skip the layer's per-request work (the `Vary` header it builds and adds to
/// every response).
#[derive(Clone)]
pub(super) struct BrowserCorsLayer(pub CorsLayer);

impl<S: Clone> Layer<S> for BrowserCorsLayer {
    type Service = BrowserCors<S>;

    fn layer(&self, inner: S) -> BrowserCors<S> {
        BrowserCors { cors: self.0.layer(inner.clone()), plain: inner }
    }
}

/// See [`BrowserCorsLayer`].
#[derive(Clone)]
pub(super) struct BrowserCors<S> {
    cors: Cors<S>,
    plain: S,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for BrowserCors<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone,
    ResBody: Default,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = Either<<Cors<S> as Service<Request<ReqBody>>>::Future, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        ready!(self.cors.poll_ready(cx))?;
        self.plain.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        if request.headers().contains_key(header::ORIGIN) || request.method() == Method::OPTIONS {
            Either::Left(self.cors.call(request))
        } else {
            Either::Right(self.plain.call(request))
        }
    }
}
