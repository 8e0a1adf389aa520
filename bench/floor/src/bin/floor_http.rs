//! The HTTP floor: a bare axum handler (parse the POST, answer JSON), no framework, no session.
//! Serves `add` and `echo` like every server of the suite. `floor-http ADDR`.

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt;
use serde_json::{Value, json};

#[path = "../floor.rs"]
mod floor;

async fn mcp(body: axum::body::Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = request.get("id") else { return StatusCode::ACCEPTED.into_response() };
    let params = &request["params"];
    let result =
        floor::result(request["method"].as_str().unwrap_or_default(), params).unwrap_or_else(|| json!({}));
    let body = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

#[tokio::main]
async fn main() {
    let addr = std::env::args().nth(1).expect("usage: floor-http ADDR");
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind").tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, Router::new().route("/mcp", post(mcp))).await.expect("serve");
}
