//! Calling an operation: the HTTP request built from a tool call's arguments, and the response
//! turned into a tool result.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, COOKIE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::operation::{BodyKind, Location, Operation};
use crate::model::resource::ResourceContents;
use crate::model::result::ToolResult;

/// The HTTP side every generated tool of a document shares.
pub(super) struct Http {
    pub client: reqwest::Client,
    /// The API's base URL, without a trailing `/`.
    pub base: String,
    /// Sent with every request (authorization, an API key…).
    pub headers: HeaderMap,
    pub max_bytes: usize,
}

impl Http {
    pub fn new(base: String, headers: HeaderMap, timeout: Duration, max_bytes: usize) -> Http {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10).min(timeout))
            .timeout(timeout)
            .user_agent(concat!("mcp-tools/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("a reqwest client with rustls builds");
        Http { client, base: base.trim_end_matches('/').to_owned(), headers, max_bytes }
    }
}

/// Calls `operation` with a tool call's arguments.
pub(super) async fn call(http: &Http, operation: &Operation, arguments: Value) -> ToolResult {
    let Value::Object(arguments) = arguments else {
        return ToolResult::error("the arguments must be a JSON object");
    };
    let request = match build(http, operation, &arguments) {
        Ok(request) => request,
        Err(why) => return ToolResult::error(why),
    };
    let label = format!("{} {}", operation.method, request.url());
    let response = match http.client.execute(request).await {
        Ok(response) => response,
        Err(e) if e.is_timeout() => return ToolResult::error(format!("{label} did not answer in time")),
        Err(e) => return ToolResult::error(format!("{label} failed: {}", describe(&e))),
    };
    let status = response.status();
    let url = response.url().to_string();
    let media = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let body = match read(response, http.max_bytes).await {
        Ok(body) => body,
        Err(why) => return ToolResult::error(format!("{label}: {why}")),
    };
    if !status.is_success() {
        let excerpt = String::from_utf8_lossy(&body[..body.len().min(2048)]).into_owned();
        let more = if body.len() > 2048 { " …" } else { "" };
        return ToolResult::error(format!("{label} answered HTTP {status}: {excerpt}{more}"));
    }
    result(status, &url, media.as_deref(), body)
}

/// The request for these arguments; what is wrong with them otherwise.
fn build(
    http: &Http,
    operation: &Operation,
    arguments: &Map<String, Value>,
) -> Result<reqwest::Request, String> {
    let mut path = operation.path.clone();
    let mut query: Vec<(String, String)> = Vec::new();
    let mut headers = http.headers.clone();
    let mut cookies: Vec<String> = Vec::new();
    for param in &operation.params {
        let value = arguments.get(&param.argument).filter(|v| !v.is_null());
        match (param.location, value) {
            (Location::Path, None) => {
                return Err(format!("the path parameter `{}` is required", param.argument));
            }
            (Location::Path, Some(value)) => {
                let text = flat(value).join(",");
                path = path.replace(&format!("{{{}}}", param.name), &encode_segment(&text));
            }
            (_, None) => {}
            (Location::Query, Some(Value::Object(fields))) if param.deep_object => {
                for (key, v) in fields {
                    query.extend(flat(v).into_iter().map(|t| (format!("{}[{key}]", param.name), t)));
                }
            }
            (Location::Query, Some(Value::Object(fields))) if param.explode => {
                for (key, v) in fields {
                    query.extend(flat(v).into_iter().map(|t| (key.clone(), t)));
                }
            }
            (Location::Query, Some(value @ Value::Array(_))) if param.explode => {
                query.extend(flat(value).into_iter().map(|t| (param.name.clone(), t)));
            }
            (Location::Query, Some(value)) => query.push((param.name.clone(), flat(value).join(","))),
            (Location::Header, Some(value)) => {
                let name = HeaderName::from_bytes(param.name.as_bytes())
                    .map_err(|_| format!("`{}` is not a header name", param.name))?;
                let value = HeaderValue::from_str(&flat(value).join(",")).map_err(|_| {
                    format!("the header parameter `{}` is not valid header text", param.argument)
                })?;
                headers.insert(name, value);
            }
            (Location::Cookie, Some(value)) => {
                cookies.push(format!("{}={}", param.name, flat(value).join(",")))
            }
        }
    }
    let mut url = reqwest::Url::parse(&format!("{}{path}", http.base))
        .map_err(|e| format!("the URL is invalid: {e}"))?;
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(&query);
    }
    if !cookies.is_empty() {
        let value = HeaderValue::from_str(&cookies.join("; "))
            .map_err(|_| "a cookie parameter is not valid header text")?;
        headers.insert(COOKIE, value);
    }
    let mut request = http.client.request(operation.method.clone(), url).headers(headers);
    match (operation.body, arguments.get("body").filter(|v| !v.is_null())) {
        (Some((_, true)), None) => return Err("the request `body` is required".into()),
        (Some((BodyKind::Json, _)), Some(body)) => {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .body(serde_json::to_vec(body).expect("JSON serializes"));
        }
        (Some((BodyKind::Form, _)), Some(Value::Object(fields))) => {
            let pairs: Vec<(String, String)> =
                fields.iter().flat_map(|(k, v)| flat(v).into_iter().map(move |t| (k.clone(), t))).collect();
            request = request.form(&pairs);
        }
        (Some((BodyKind::Form, _)), Some(_)) => return Err("the form `body` must be an object".into()),
        (None, _) | (Some(_), None) => {}
    }
    request.build().map_err(|e| format!("the request cannot be built: {e}"))
}

/// A value as the texts it is sent as: scalars as themselves, arrays item by item.
fn flat(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().flat_map(flat).collect(),
        Value::Object(fields) => {
            fields.iter().flat_map(|(k, v)| std::iter::once(k.clone()).chain(flat(v))).collect()
        }
        other => vec![other.to_string()],
    }
}

/// Percent-encodes a path segment (RFC 3986: everything but unreserved characters).
fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Reads a response body, at most `max` bytes.
async fn read(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| describe(&e))? {
        if body.len() + chunk.len() > max {
            return Err(format!("the response is larger than {max} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A successful response as a tool result: a JSON object as structured content, other JSON
/// and text as text, anything else as an embedded resource.
fn result(status: reqwest::StatusCode, url: &str, media: Option<&str>, body: Vec<u8>) -> ToolResult {
    if body.is_empty() {
        return ToolResult::new().text(format!("HTTP {status}"));
    }
    let essence = media.map(|m| m.split(';').next().unwrap_or_default().trim().to_ascii_lowercase());
    let json = essence.as_deref().is_none_or(|m| m == "application/json" || m.ends_with("+json"));
    if json && let Ok(value) = serde_json::from_slice::<Value>(&body) {
        return match value {
            Value::Object(_) => {
                ToolResult::structured(value).unwrap_or_else(|e| ToolResult::error(e.message().to_owned()))
            }
            other => ToolResult::new().text(other.to_string()),
        };
    }
    let textual = essence
        .as_deref()
        .is_some_and(|m| m.starts_with("text/") || m.ends_with("xml") || m.contains("yaml"));
    match (textual, String::from_utf8(body)) {
        (true, Ok(text)) => ToolResult::new().text(text),
        (_, Ok(text)) if essence.is_none() => ToolResult::new().text(text),
        (_, body) => {
            let bytes = body.map_or_else(|e| e.into_bytes(), String::into_bytes);
            ToolResult::new().resource(ResourceContents::blob(url, essence.as_deref(), bytes))
        }
    }
}

fn describe(error: &reqwest::Error) -> String {
    if error.is_connect() {
        "cannot connect".to_owned()
    } else {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(inner) = source {
            text.push_str(": ");
            text.push_str(&inner.to_string());
            source = inner.source();
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_flattened_and_segments_encoded() {
        assert_eq!(flat(&serde_json::json!(["a", 1, true])), ["a", "1", "true"]);
        assert_eq!(encode_segment("a b/c?é"), "a%20b%2Fc%3F%C3%A9");
    }
}
