//! The same two tools written the way rmcp's README shows (`#[tool_router]` on an impl,
//! `#[tool_handler]` on the `ServerHandler`).
//!
//! `rmcp-bench` serves stdio with `rmcp::transport::stdio()`, `rmcp-bench --pipes` with
//! `stdio_pipes()` (its non-blocking transport), `rmcp-bench --http ADDR` its Streamable HTTP
//! service in axum.

use axum::serve::ListenerExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Clone)]
struct Bench {
    // As in rmcp's examples; `#[tool_handler]` builds the router it uses itself.
    #[allow(dead_code)]
    tool_router: ToolRouter<Bench>,
}

#[tool_router]
impl Bench {
    fn new() -> Self {
        Bench { tool_router: Self::tool_router() }
    }

    #[tool(description = "Add two numbers.")]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Echo a text back.")]
    async fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => Bench::new()
            .serve(rmcp::transport::stdio())
            .await
            .expect("serve")
            .waiting()
            .await
            .map(drop)
            .expect("run"),
        ["--pipes"] => Bench::new()
            .serve(rmcp::transport::stdio_pipes())
            .await
            .expect("serve")
            .waiting()
            .await
            .map(drop)
            .expect("run"),
        ["--http", addr] => {
            let service = StreamableHttpService::new(
                || Ok(Bench::new()),
                LocalSessionManager::default().into(),
                StreamableHttpServerConfig::default(),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            // Without TCP_NODELAY every answer waits for the client's delayed ACK (about 40 ms).
            let listener = tokio::net::TcpListener::bind(addr).await.expect("bind").tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, router).await.expect("serve");
        }
        _ => panic!("usage: rmcp-bench [--pipes | --http ADDR]"),
    }
}
