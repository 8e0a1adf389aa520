//! What a failed request to another service (an authorization server, a JWKS or introspection
//! endpoint, an MCP server's OAuth metadata) says in an error message.

/// The URL and what went wrong: no answer in time, no connection, or reqwest's own words.
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let url = error.url().map(|u| u.to_string()).unwrap_or_default();
    if error.is_timeout() {
        format!("{url} did not answer in time")
    } else if error.is_connect() {
        format!("cannot connect to {url}")
    } else {
        format!("{url}: {error}")
    }
}
