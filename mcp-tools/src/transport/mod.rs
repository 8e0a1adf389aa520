//! Transports: they frame bytes into messages for a session and write its answers back, and
//! know no tools. [`stdio`]: newline-delimited JSON-RPC on any reader and writer; [`memory`]: an
//! in-process connection (the test client and the command line's `call`); `http`: Streamable
//! HTTP. Each adds its own `impl Server` block with its `serve_*` methods.

#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod memory;
pub(crate) mod stdio;

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM: the start of a graceful shutdown.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = terminate => {}
    }
}
