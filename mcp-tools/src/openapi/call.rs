//! Calling an operation: the HTTP request built from a tool call's arguments, and the response
//! turned into a tool result.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, COOKIE, HeaderMap, HeaderName, HeaderValue, LOCATION};
use reqwest::redirect::Policy;
use reqwest::{StatusCode, Url};
use serde_json::{Map, Value};

use super::operation::{BodyKind, Location, Operation, Param};
use crate::model::resource::ResourceContents;
use crate::model::result::ToolResult;

/// The most redirects a call follows in a row (reqwest's own default).
const MAX_REDIRECTS: usize = 10;

/// Which redirects a call follows; see [`OpenApi::follow_redirects`](super::OpenApi::follow_redirects).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Redirects {
    /// None (the default): a redirect is an `isError` result naming where it points.
    #[default]
    None,
    /// Those to the base URL's origin (same scheme, host and port), at most 10 in a row. One to
    /// another origin is not requested: it is an `isError` result naming that origin.
    SameOrigin,
}

/// The HTTP side every generated tool of a document shares.
pub(super) struct Http {
    pub client: reqwest::Client,
    /// The API's base URL, without a trailing `/`.
    pub base: String,
    /// The base URL's path, without a trailing `/`: every path called is under it.
    base_path: String,
    /// The base URL's origin (`scheme://host:port`): the only one redirects are followed to,
    /// if any are.
    origin: String,
    redirects: Redirects,
    /// Sent with every request (authorization, an API key…).
    pub headers: HeaderMap,
    pub max_bytes: usize,
}

impl Http {
    pub fn new(
        base: &Url,
        headers: HeaderMap,
        timeout: Duration,
        max_bytes: usize,
        redirects: Redirects,
    ) -> Http {
        let origin = origin_of(base);
        // reqwest's default follows redirects anywhere, and strips only `Authorization` and
        // `Cookie` on the way to another origin: the configured headers (an API key) would go
        // along. A redirect not followed is answered as an error naming where it points.
        let policy = match redirects {
            Redirects::None => Policy::none(),
            Redirects::SameOrigin => {
                let origin = origin.clone();
                Policy::custom(move |attempt| {
                    // `previous` holds the first URL too: 10 redirects followed, the 11th not.
                    if origin_of(attempt.url()) == origin && attempt.previous().len() <= MAX_REDIRECTS {
                        attempt.follow()
                    } else {
                        attempt.stop()
                    }
                })
            }
        };
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10).min(timeout))
            .timeout(timeout)
            .redirect(policy)
            .user_agent(concat!("mcp-tools/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("a reqwest client with rustls builds");
        Http {
            client,
            base: base.as_str().trim_end_matches('/').to_owned(),
            base_path: base.path().trim_end_matches('/').to_owned(),
            origin,
            redirects,
            headers,
            max_bytes,
        }
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
    let first = request.url().clone();
    let label = format!("{} {first}", operation.method);
    let response = match http.client.execute(request).await {
        Ok(response) => response,
        Err(e) if e.is_timeout() => return ToolResult::error(format!("{label} did not answer in time")),
        Err(e) => return ToolResult::error(format!("{label} failed: {}", describe(&e))),
    };
    let status = response.status();
    let label =
        if response.url() == &first { label } else { format!("{label} (redirected to {})", response.url()) };
    // The statuses reqwest follows: others (300, 304) are answered as any other non-2xx.
    let redirect = matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308);
    if redirect && let Some(location) = response.headers().get(LOCATION) {
        return redirected(http, &label, status, response.url(), location);
    }
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
    let mut path_values: Vec<(&Param, String)> = Vec::new();
    let mut query: Vec<(String, String)> = Vec::new();
    let mut headers = HeaderMap::new();
    let mut cookies: Vec<String> = Vec::new();
    for param in &operation.params {
        let value = arguments.get(&param.argument).filter(|v| !v.is_null());
        match (param.location, value) {
            (Location::Path, None) => {
                return Err(format!("the path parameter `{}` is required", param.argument));
            }
            (Location::Path, Some(value)) => {
                let text = flat(value).join(",");
                if text.is_empty() {
                    return Err(format!(
                        "the path parameter `{}` is empty: an empty path segment would call another path",
                        param.argument
                    ));
                }
                path_values.push((param, encode_segment(&text)));
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
                // `from_str` refuses control characters: CR and LF could end the header and
                // start another.
                let value = HeaderValue::from_str(&flat(value).join(",")).map_err(|_| {
                    format!(
                        "the header parameter `{}` holds a character a header cannot carry (CR, LF, NUL \
                         or another control character)",
                        param.argument
                    )
                })?;
                headers.insert(name, value);
            }
            (Location::Cookie, Some(value)) => {
                cookies.push(format!("{}={}", param.name, encode_cookie(&flat(value).join(","))))
            }
        }
    }
    // The operator's headers (an API key…) win over a header parameter of the same name: a
    // caller never replaces the credentials the bridge was configured with.
    headers.extend(http.headers.clone());
    let path = fill_path(&operation.path, &path_values)?;
    let mut url =
        Url::parse(&format!("{}{path}", http.base)).map_err(|e| format!("the URL is invalid: {e}"))?;
    // Values cannot make a dot segment or an empty one (above) nor hold a `/` (encoded): the path
    // parsed is still the operation's, under the base URL, segment for segment. Checked again
    // here so that no value the checks above miss can call another path.
    let under_base =
        url.path().strip_prefix(http.base_path.as_str()).is_some_and(|rest| rest.starts_with('/'));
    if !under_base
        || url.path().matches('/').count() != http.base_path.matches('/').count() + path.matches('/').count()
    {
        return Err(format!(
            "the path called would be {}, not {} under the base URL: not sent",
            url.path(),
            operation.path
        ));
    }
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

/// The operation's path with its parameters' values. A segment that values make `.` or `..`
/// is refused: the URL parser resolves it (written `%2E` too, as the URL standard says), which
/// would call another path, above the operation's or the base URL's.
fn fill_path(template: &str, values: &[(&Param, String)]) -> Result<String, String> {
    let mut path = String::with_capacity(template.len());
    for (i, segment) in template.split('/').enumerate() {
        if i > 0 {
            path.push('/');
        }
        let mut filled = segment.to_owned();
        let mut from = Vec::new();
        for (param, value) in values {
            let placeholder = format!("{{{}}}", param.name);
            if filled.contains(&placeholder) {
                filled = filled.replace(&placeholder, value);
                from.push(format!("`{}`", param.argument));
            }
        }
        if !from.is_empty() && matches!(filled.as_str(), "." | "..") {
            let what = match from.as_slice() {
                [one] => format!("the path parameter {one} cannot be `{filled}`"),
                many => format!("the path parameters {} cannot make the segment `{filled}`", many.join(", ")),
            };
            return Err(format!(
                "{what}: a `.` or `..` path segment (even percent-encoded) is resolved by the URL and \
                 would call another path"
            ));
        }
        path.push_str(&filled);
    }
    Ok(path)
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

/// Percent-encodes a cookie value: every byte outside RFC 6265's `cookie-octet` (`;`, `,`,
/// whitespace, `"`, `\`, controls, non-ASCII) and `%` itself, so that a value can neither end
/// its cookie and add another nor be read as one already encoded.
fn encode_cookie(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if matches!(byte, 0x21 | 0x23..=0x2B | 0x2D..=0x3A | 0x3C..=0x5B | 0x5D..=0x7E) && byte != b'%' {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A redirect not followed, as an error naming where it points and why it was not followed.
fn redirected(
    http: &Http,
    label: &str,
    status: StatusCode,
    from: &Url,
    location: &HeaderValue,
) -> ToolResult {
    let raw = String::from_utf8_lossy(location.as_bytes());
    let target = from.join(&raw).ok();
    let shown = target.as_ref().map_or_else(|| raw.clone().into_owned(), Url::to_string);
    let answered = format!("{label} answered a redirect (HTTP {status}) to {shown}");
    let origin = target.as_ref().map(origin_of);
    ToolResult::error(match http.redirects {
        Redirects::None => format!(
            "{answered}: the bridge does not follow redirects \
             (`OpenApi::follow_redirects(Redirects::SameOrigin)` follows those within the API's origin)"
        ),
        Redirects::SameOrigin if origin.as_ref() == Some(&http.origin) => {
            format!("{answered}: still redirected after {MAX_REDIRECTS} redirects")
        }
        Redirects::SameOrigin => format!(
            "{answered}, another origin ({}) than the API's ({}): the bridge follows redirects only \
             within the API's origin, so that the configured headers never leave it",
            origin.as_deref().unwrap_or("an invalid URL"),
            http.origin
        ),
    })
}

/// A URL's origin as text: `scheme://host[:port]` (the base URL's is one, being HTTP), `null`
/// for a URL of another scheme.
fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
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
fn result(status: StatusCode, url: &str, media: Option<&str>, body: Vec<u8>) -> ToolResult {
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

    #[test]
    fn dot_segments_are_resolved_even_percent_encoded() {
        // Why `.` and `..` values are refused rather than sent as `%2E`: the URL parser (hence
        // the request line reqwest writes) resolves those too.
        for dots in ["..", "%2E%2E", "%2e.", ".%2E"] {
            let url = Url::parse(&format!("http://h/api/users/42/sessions/{dots}")).unwrap();
            assert_eq!(url.path(), "/api/users/42/", "{dots}");
        }
        assert_eq!(Url::parse("http://h/api/x/%2E").unwrap().path(), "/api/x/");
    }

    #[test]
    fn path_values_cannot_make_a_dot_segment() {
        let param = |name: &str| Param {
            argument: name.to_owned(),
            name: name.to_owned(),
            location: Location::Path,
            explode: false,
            deep_object: false,
        };
        let (a, b) = (param("a"), param("b"));
        let fill = |template: &str, va: &str, vb: &str| {
            fill_path(template, &[(&a, encode_segment(va)), (&b, encode_segment(vb))])
        };
        assert_eq!(fill("/x/{a}/{b}", "...", ".b").unwrap(), "/x/.../.b");
        assert_eq!(fill("/x/{a}{b}.json", ".", ".").unwrap(), "/x/...json");
        assert!(fill("/x/{a}/{b}", "1", "..").unwrap_err().contains("the path parameter `b` cannot be `..`"));
        assert!(fill("/x/{a}/{b}", ".", "1").unwrap_err().contains("`a` cannot be `.`"));
        assert!(fill("/x/{a}{b}", ".", ".").unwrap_err().contains("parameters `a`, `b` cannot make"));
        assert!(fill("/x/{a}.", ".", "").unwrap_err().contains("`a`"));
    }

    #[test]
    fn cookie_values_are_encoded_outside_cookie_octets() {
        assert_eq!(encode_cookie("dark; admin=1"), "dark%3B%20admin=1");
        assert_eq!(encode_cookie("a,b\"c\\d%e\té\r\n\0\x7f"), "a%2Cb%22c%5Cd%25e%09%C3%A9%0D%0A%00%7F");
        let octets: String = (0x21u8..=0x7E).map(char::from).filter(|c| !"\",;\\%".contains(*c)).collect();
        assert_eq!(encode_cookie(&octets), octets, "cookie-octets are kept");
    }
}
