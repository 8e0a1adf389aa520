//! CORS where a browser is: [`BrowserCorsLayer`].

use std::sync::Arc;
use std::task::{Context, Poll};

use axum::http::{Method, Request, Response, header};
use futures_util::future::Either;
use tower::{Layer, Service};
use tower_http::cors::{Cors, CorsLayer};

/// A [`CorsLayer`] applied only to requests that carry an `Origin` header, which browsers send
/// with every cross-origin request and preflight, and to every `OPTIONS` request. Other
/// clients' requests skip the layer's per-request work (the `Vary` header it builds and adds to
/// every response), and the service is cheap to clone (axum clones it for each request): the
/// CORS service is made only for a request that needs it.
#[derive(Clone)]
pub(super) struct BrowserCorsLayer(pub CorsLayer);

impl<S> Layer<S> for BrowserCorsLayer {
    type Service = BrowserCors<S>;

    fn layer(&self, inner: S) -> BrowserCors<S> {
        BrowserCors { cors: Arc::new(self.0.clone()), inner }
    }
}

/// See [`BrowserCorsLayer`].
#[derive(Clone)]
pub(super) struct BrowserCors<S> {
    cors: Arc<CorsLayer>,
    inner: S,
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
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        if request.headers().contains_key(header::ORIGIN) || request.method() == Method::OPTIONS {
            // The service that was made ready goes into the CORS one; a clone stays.
            let clone = self.inner.clone();
            let ready = std::mem::replace(&mut self.inner, clone);
            Either::Left(self.cors.layer(ready).call(request))
        } else {
            Either::Right(self.inner.call(request))
        }
    }
}
