//! Resources: data a client can read by URI. A [`Resource`] has a fixed URI; a
//! [`ResourceTemplate`] has a URI template such as `notes://{id}` whose variables the handler
//! receives. Both can be defined with [`#[resource(...)]`](macro@crate::resource) on a function
//! or built at run time.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::context::Context;
use crate::model::error::ToolError;

/// One item of a resource's contents: text or a binary blob.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceContents {
    /// The URI these contents are of.
    pub uri: String,
    /// MIME type, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents (exclusive with `blob`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 contents (exclusive with `text`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// `_meta` of these contents.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: Some(text.into()),
            blob: None,
            meta: None,
        }
    }
    /// Binary contents (base64-encoded here).
    pub fn blob(uri: impl Into<String>, mime_type: Option<&str>, bytes: impl AsRef<[u8]>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: None,
            blob: Some(base64_encode(bytes.as_ref())),
            meta: None,
        }
    }
    /// Adds a `_meta` entry.
    pub fn with_meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta.get_or_insert_with(Map::new).insert(key.into(), value.into());
        self
    }
}

pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// What a resource read was asked for: the URI, and the template's variables.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceRequest {
    /// The URI being read.
    pub uri: String,
    /// The values of the template's variables (empty for a fixed resource).
    pub params: HashMap<String, String>,
}

impl ResourceRequest {
    /// The value of template variable `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }
}

/// What a resource handler returns, converted to contents.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a #[resource] function",
    label = "this return type",
    note = "return `String` (text), `Vec<u8>` (binary), `ResourceContents`, `Vec<ResourceContents>`, or a `Result` of one of these"
)]
pub trait IntoContents {
    /// The contents for `uri`; `mime_type` is the resource's declared type.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents>;
}

impl IntoContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        vec![ResourceContents::text(uri, Some(mime_type.unwrap_or("text/plain")), self)]
    }
}

impl IntoContents for &'static str {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoContents for Vec<u8> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        vec![ResourceContents::blob(uri, Some(mime_type.unwrap_or("application/octet-stream")), self)]
    }
}

impl IntoContents for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        self
    }
}

/// Completes one argument of one prompt or resource template (a mounted upstream's, which
/// completes its own): gets the argument's name, what was typed, the other arguments.
pub(crate) type ItemCompleter = Arc<
    dyn Fn(String, String, HashMap<String, String>, Context) -> BoxFuture<'static, Vec<String>> + Send + Sync,
>;

pub(crate) type ResourceHandler = Arc<
    dyn Fn(ResourceRequest, Context) -> BoxFuture<'static, Result<Vec<ResourceContents>, ToolError>>
        + Send
        + Sync,
>;

/// What a resource or template says about itself on `resources/list`.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourceInfo {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

macro_rules! describe_setters {
    () => {
        /// Sets the display title.
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.info.title = Some(title.into());
            self
        }
        /// Sets the description.
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.info.description = Some(description.into());
            self
        }
        /// Sets the MIME type.
        pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
            self.info.mime_type = Some(mime_type.into());
            self
        }
        /// Adds a `_meta` entry, sent on `resources/list`.
        pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
            self.info.meta.get_or_insert_with(Map::new).insert(key.into(), value.into());
            self
        }
        /// The OAuth scopes a caller needs (over HTTP with authorization): a caller without
        /// them does not see it listed, and reading it gets the 403 step-up answer.
        pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
            self.scopes = scopes.into_iter().map(Into::into).collect();
            self
        }
    };
}

/// A resource with a fixed URI, built at run time.
///
/// ```
/// use mcp_tools::{Resource, ResourceContents};
/// let readme = Resource::new("docs://readme", "readme", |request, _ctx| async move {
///     Ok(vec![ResourceContents::text(request.uri, Some("text/markdown"), "# Hello")])
/// })
/// .mime_type("text/markdown")
/// .description("The project's README.");
/// ```
#[derive(Clone)]
pub struct Resource {
    pub(crate) uri: String,
    pub(crate) info: ResourceInfo,
    pub(crate) scopes: Arc<[String]>,
    pub(crate) handler: ResourceHandler,
}

impl Resource {
    /// A resource at `uri` named `name`, read by `handler`.
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(ResourceRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        Resource {
            uri: uri.into(),
            info: ResourceInfo { name: name.into(), ..ResourceInfo::default() },
            scopes: Arc::from([]),
            handler: Arc::new(move |request, ctx| Box::pin(handler(request, ctx))),
        }
    }
    /// A resource whose contents never change.
    pub fn fixed(uri: impl Into<String>, name: impl Into<String>, contents: ResourceContents) -> Self {
        Self::new(uri, name, move |_, _| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        })
    }
    /// The URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }
    /// Sets the size in bytes, if known.
    pub fn size(mut self, bytes: u64) -> Self {
        self.info.size = Some(bytes);
        self
    }
    describe_setters!();
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource").field("uri", &self.uri).field("info", &self.info).finish_non_exhaustive()
    }
}

/// A family of resources under a URI template such as `users://{id}/profile`, built at run
/// time. The handler gets each variable's value, as written in the URI (not percent-decoded).
/// A `{name}` variable (RFC 6570 simple expansion) is one path segment: it never contains `/`.
/// A `{+name}` variable (reserved expansion), as in `files://{+path}`, spans segments. Neither
/// ever matches an empty segment or a `.`/`..` one (nor their percent-encoded forms), so a
/// handler that maps a value to a file cannot be led outside its directory by the URI alone.
///
/// ```
/// use mcp_tools::{ResourceContents, ResourceTemplate};
/// let user = ResourceTemplate::new("users://{id}/profile", "user-profile", |request, _ctx| async move {
///     let id = request.param("id").unwrap_or_default().to_owned();
///     Ok(vec![ResourceContents::text(request.uri, Some("application/json"), format!("{{\"id\":\"{id}\"}}"))])
/// });
/// ```
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) template: UriTemplate,
    pub(crate) info: ResourceInfo,
    pub(crate) scopes: Arc<[String]>,
    pub(crate) handler: ResourceHandler,
    /// Completes this template's variables instead of the server's completer.
    pub(crate) completer: Option<ItemCompleter>,
}

impl ResourceTemplate {
    /// A template (e.g. `notes://{id}`) named `name`, read by `handler`.
    pub fn new<F, Fut>(uri_template: impl Into<String>, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(ResourceRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        ResourceTemplate {
            template: UriTemplate::parse(&uri_template.into()),
            info: ResourceInfo { name: name.into(), ..ResourceInfo::default() },
            scopes: Arc::from([]),
            handler: Arc::new(move |request, ctx| Box::pin(handler(request, ctx))),
            completer: None,
        }
    }
    /// The URI template.
    pub fn uri_template(&self) -> &str {
        &self.template.source
    }
    describe_setters!();
}

impl std::fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("uri_template", &self.template.source)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// A URI template of literal text, `{name}` and `{+name}` variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UriTemplate {
    pub source: String,
    parts: Vec<Part>,
    /// Set for a mounted upstream's template: every URI starting with this text matches (with
    /// no variables: the upstream reads its own template).
    under: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A variable; `reserved` (`{+name}`) values may span `/`-separated segments.
    Var {
        name: String,
        reserved: bool,
    },
}

impl UriTemplate {
    pub fn parse(source: &str) -> Self {
        let mut parts = Vec::new();
        let mut rest = source;
        while let Some(start) = rest.find('{') {
            let Some(len) = rest[start..].find('}') else { break };
            if start > 0 {
                parts.push(Part::Literal(rest[..start].to_owned()));
            }
            let written = rest[start + 1..start + len].trim();
            let (name, reserved) = match written.strip_prefix('+') {
                Some(name) => (name, true),
                None => (written, false),
            };
            parts.push(Part::Var { name: name.to_owned(), reserved });
            rest = &rest[start + len + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        UriTemplate { source: source.to_owned(), parts, under: None }
    }

    /// A template shown as `source` that matches every URI starting with `prefix`.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub fn under(source: &str, prefix: String) -> Self {
        UriTemplate { under: Some(prefix), ..UriTemplate::parse(source) }
    }

    /// The variables' names, in order.
    #[cfg(test)]
    pub fn variables(&self) -> Vec<&str> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Var { name, .. } => Some(name.as_str()),
                Part::Literal(_) => None,
            })
            .collect()
    }

    /// The variables' values if `uri` matches. A `{name}` variable matches one segment (no
    /// `/`); a `{+name}` one, segments separated by `/`. A value never has an empty, `.` or `..`
    /// segment.
    pub fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        if let Some(prefix) = &self.under {
            return uri.starts_with(prefix.as_str()).then(HashMap::new);
        }
        let mut values = HashMap::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(text) => rest = rest.strip_prefix(text.as_str())?,
                Part::Var { name, reserved } => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) if *reserved => rest.rfind(next.as_str())?,
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        Some(Part::Var { .. }) => return None,
                        None => rest.len(),
                    };
                    let value = &rest[..end];
                    if (!reserved && value.contains('/')) || !value.split('/').all(safe_segment) {
                        return None;
                    }
                    values.insert(name.clone(), value.to_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(values)
    }
}

/// A segment a variable may match: not empty, not `.` or `..`, written plainly or
/// percent-encoded (`%2e%2E`).
fn safe_segment(segment: &str) -> bool {
    let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
    !segment.is_empty() && decoded != "." && decoded != ".."
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_and_extract_variables() {
        let t = UriTemplate::parse("test://template/{id}/data");
        assert_eq!(t.variables(), ["id"]);
        let m = t.matches("test://template/42/data").unwrap();
        assert_eq!(m["id"], "42");
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/a/b/data").is_none());
        assert!(t.matches("test://template/42/datax").is_none());
        // A simple variable is one segment; a reserved one spans segments.
        let t = UriTemplate::parse("files://{path}");
        assert!(t.matches("files://a/b/c.txt").is_none());
        assert_eq!(t.matches("files://c.txt").unwrap()["path"], "c.txt");
        let t = UriTemplate::parse("files://{+path}");
        assert_eq!(t.variables(), ["path"]);
        assert_eq!(t.matches("files://a/b/c.txt").unwrap()["path"], "a/b/c.txt");
        let t = UriTemplate::parse("files://{+path}/meta");
        assert_eq!(t.matches("files://a/meta/b/meta").unwrap()["path"], "a/meta/b");
        let t = UriTemplate::parse("db://{table}/{row}");
        let m = t.matches("db://users/7").unwrap();
        assert_eq!((m["table"].as_str(), m["row"].as_str()), ("users", "7"));
    }

    #[test]
    fn variables_never_match_dot_segments_or_empty_ones() {
        let simple = UriTemplate::parse("notes://{id}");
        let reserved = UriTemplate::parse("files://{+path}");
        for bad in ["..", ".", "%2e%2e", "%2E.", ""] {
            assert!(simple.matches(&format!("notes://{bad}")).is_none(), "{bad}");
        }
        for bad in ["../etc/passwd", "a/../../b", "/etc/passwd", "a//b", "a/%2e%2e/b", "a/.", "a/"] {
            assert!(reserved.matches(&format!("files://{bad}")).is_none(), "{bad}");
        }
        assert_eq!(reserved.matches("files://a..b/.hidden").unwrap()["path"], "a..b/.hidden");
    }
}
