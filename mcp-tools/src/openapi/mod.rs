//! Serve an HTTP API described by OpenAPI 3.0 or 3.1 as MCP tools (feature `openapi`): one
//! runtime [`Tool`] per operation, calling the API.
//!
//! ```no_run
//! use mcp_tools::{openapi::OpenApi, Server};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let api = OpenApi::from_path("petstore.yaml")?
//!     .base_url("https://petstore.example.com/v1")
//!     .header("X-Api-Key", std::env::var("PETSTORE_KEY")?)
//!     .exclude_tags(["admin"])            // also include_tags, include/exclude_paths, methods
//!     .scopes(["pets:read"]);             // OAuth scopes a caller needs (HTTP with `auth`)
//! Server::builder().name("petstore").tools(api.tools()?).run();
//! # Ok(())
//! # }
//! ```
//!
//! Each operation becomes a tool:
//!
//! * **name**: its `operationId`, with characters outside `A-Z a-z 0-9 _ . -` made `_` (so
//!   GitHub's `issues/create-comment` is `issues_create-comment`); without one, the method and
//!   path (`get_pets_petId`); a name taken already gets `_2`, `_3`…;
//! * **title, description, tags**: its `summary`, `summary` and `description`, `tags`;
//! * **input schema**: one property per path, query, header and cookie parameter, named like it
//!   (when two locations share a name, each is prefixed: `path_id`, `query_id`), and `body` for
//!   the request body (JSON, or a form sent `application/x-www-form-urlencoded`; operations
//!   whose only body is another type are skipped, see [`OpenApi::skipped`]); local `$ref`s
//!   inlined, recursive ones in `$defs`; OpenAPI 3.0's `nullable` and boolean
//!   `exclusiveMinimum` translated to JSON Schema;
//! * **annotations**: GET, HEAD, OPTIONS and TRACE read-only and idempotent; PUT and DELETE
//!   idempotent; DELETE destructive; every one open-world;
//! * **output schema**: the first 2xx response's JSON schema, when it describes an object
//!   ([`OpenApi::output_schemas`] to leave them out).
//!
//! A call sends the request (the configured headers added: credentials for the API, never the
//! MCP client's own token) and answers with the response: a JSON object as structured content
//! (and text), other JSON and text as text, anything else as an embedded resource; a non-2xx
//! status, a timeout or a refused connection as an `isError` result naming them. Cancelling
//! the call aborts the request. Arguments are not checked against the schema by default
//! (documents are often stricter than their APIs): [`OpenApi::validate_arguments`] turns it on.
//!
//! Nothing a caller passes changes which URL is called or adds a header, a cookie or a query
//! pair. A path parameter's value is one percent-encoded segment, refused (`isError`, naming
//! it) when empty or when it would make a `.` or `..` segment, which URLs resolve even
//! percent-encoded; the path called is checked to be the operation's under the base URL's.
//! A header parameter holding CR, LF, NUL or another control character is refused; cookie
//! values are percent-encoded outside RFC 6265's cookie octets (`;`, `,`, whitespace, `"`, `\`,
//! controls, non-ASCII) and `%`; query names and values are form-encoded.
//!
//! Redirects are not followed by default: a 301, 302, 303, 307 or 308 is an `isError` result
//! naming where it points. [`OpenApi::follow_redirects`]`(`[`Redirects::SameOrigin`]`)`
//! follows those to the base URL's origin (scheme, host and port; at most 10 in a row) and
//! still refuses one to another origin without requesting it, so the configured headers never
//! leave the API's origin (reqwest's default policy would send them along: it strips only
//! `Authorization` and `Cookie`).

mod call;
mod operation;
mod schema;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::model::tool::{Annotations, Tool};
use call::Http;
pub use call::Redirects;
use operation::METHODS;
use schema::Resolver;

/// Why a document cannot be served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenApiError(pub String);

impl fmt::Display for OpenApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OpenApiError {}

/// An OpenAPI document and how to serve it. See the [module documentation](self).
#[derive(Clone)]
pub struct OpenApi {
    doc: Arc<Value>,
    base_url: Option<String>,
    headers: Vec<(String, String)>,
    include_tags: Vec<String>,
    exclude_tags: Vec<String>,
    include_paths: Vec<String>,
    exclude_paths: Vec<String>,
    methods: Vec<String>,
    validate_arguments: bool,
    output_schemas: bool,
    timeout: Duration,
    max_response_bytes: usize,
    scopes: Vec<String>,
    redirects: Redirects,
}

impl fmt::Debug for OpenApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenApi")
            .field("title", &self.doc["info"]["title"])
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl OpenApi {
    /// A document from its text, JSON or YAML.
    pub fn parse(text: &str) -> Result<Self, OpenApiError> {
        let doc: Value = match serde_json::from_str(text) {
            Ok(doc) => doc,
            Err(json) if text.trim_start().starts_with('{') => {
                return Err(OpenApiError(format!("the document is not valid JSON: {json}")));
            }
            Err(_) => serde_saphyr::from_str(text)
                .map_err(|e| OpenApiError(format!("the document is not valid YAML: {e}")))?,
        };
        Self::from_value(doc)
    }

    /// A document from a file (JSON or YAML).
    pub fn from_path(path: impl AsRef<std::path::Path>) -> Result<Self, OpenApiError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| OpenApiError(format!("cannot read {}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| OpenApiError(format!("{}: {e}", path.display())))
    }

    /// A document already parsed.
    pub fn from_value(doc: Value) -> Result<Self, OpenApiError> {
        match doc["openapi"].as_str() {
            Some(v) if v.starts_with("3.") => {}
            Some(v) => return Err(OpenApiError(format!("OpenAPI {v} is not supported (3.0 and 3.1 are)"))),
            None if doc.get("swagger").is_some() => {
                return Err(OpenApiError(
                    "Swagger 2.0 is not supported: convert the document to OpenAPI 3".into(),
                ));
            }
            None => return Err(OpenApiError("not an OpenAPI document (no `openapi` version)".into())),
        }
        if !doc["paths"].is_object() {
            return Err(OpenApiError("the document has no `paths`".into()));
        }
        Ok(OpenApi {
            doc: Arc::new(doc),
            base_url: None,
            headers: Vec::new(),
            include_tags: Vec::new(),
            exclude_tags: Vec::new(),
            include_paths: Vec::new(),
            exclude_paths: Vec::new(),
            methods: Vec::new(),
            validate_arguments: false,
            output_schemas: true,
            timeout: Duration::from_secs(30),
            max_response_bytes: 10 * 1024 * 1024,
            scopes: Vec::new(),
            redirects: Redirects::None,
        })
    }

    /// The API's base URL (default: the document's first `servers` URL, when absolute).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }
    /// A header sent with every request (an API key, `Authorization`…).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
    /// Serves only the operations with one of these tags.
    pub fn include_tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.include_tags.extend(tags.into_iter().map(Into::into));
        self
    }
    /// Leaves out the operations with one of these tags.
    pub fn exclude_tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.exclude_tags.extend(tags.into_iter().map(Into::into));
        self
    }
    /// Serves only the operations whose path starts with one of these.
    pub fn include_paths<I: IntoIterator<Item = S>, S: Into<String>>(mut self, prefixes: I) -> Self {
        self.include_paths.extend(prefixes.into_iter().map(Into::into));
        self
    }
    /// Leaves out the operations whose path starts with one of these.
    pub fn exclude_paths<I: IntoIterator<Item = S>, S: Into<String>>(mut self, prefixes: I) -> Self {
        self.exclude_paths.extend(prefixes.into_iter().map(Into::into));
        self
    }
    /// Serves only the operations of these methods (`"get"`, `"POST"`…).
    pub fn methods<I: IntoIterator<Item = S>, S: Into<String>>(mut self, methods: I) -> Self {
        self.methods.extend(methods.into_iter().map(|m| m.into().to_ascii_lowercase()));
        self
    }
    /// Checks arguments against the generated input schemas before calling (default: false:
    /// documents are often stricter than the APIs they describe).
    pub fn validate_arguments(mut self, validate: bool) -> Self {
        self.validate_arguments = validate;
        self
    }
    /// Declares output schemas from the 2xx JSON responses (default: true). Results are then
    /// checked against them; turn this off for a document whose response schemas are wrong.
    pub fn output_schemas(mut self, declare: bool) -> Self {
        self.output_schemas = declare;
        self
    }
    /// How long a request may take (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
    /// The largest response read (default 10 MiB).
    pub fn max_response_size(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }
    /// Which redirects a call follows (default [`Redirects::None`]). Configured headers go with
    /// every request, redirected ones too: [`Redirects::SameOrigin`] follows only those that
    /// stay on the base URL's origin, so an API key is never sent to another host or port.
    pub fn follow_redirects(mut self, redirects: Redirects) -> Self {
        self.redirects = redirects;
        self
    }
    /// OAuth scopes every generated tool needs (see `#[tool(scopes)]`).
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// The document's title, if it has one.
    pub fn title(&self) -> Option<&str> {
        self.doc["info"]["title"].as_str()
    }

    /// The operations left out and why (a body type that cannot be sent, a malformed parameter).
    pub fn skipped(&self) -> Vec<(String, String)> {
        operation::describe(&Resolver::shallow(&self.doc), &self.doc, |m, p, t| self.keeps(m, p, t), false).1
    }

    /// One tool per operation kept.
    pub fn tools(&self) -> Result<Vec<Tool>, OpenApiError> {
        let base = self.resolved_base_url()?;
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| OpenApiError(format!("{name:?} is not a header name")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| OpenApiError(format!("the value of {name} is not valid header text")))?;
            headers.append(name, value);
        }
        let http = Arc::new(Http::new(&base, headers, self.timeout, self.max_response_bytes, self.redirects));
        let resolver = Resolver::new(&self.doc);
        let (described, skipped) =
            operation::describe(&resolver, &self.doc, |m, p, t| self.keeps(m, p, t), self.output_schemas);
        for (operation, why) in &skipped {
            tracing::warn!(operation, "not served: {why}");
        }
        Ok(described
            .into_iter()
            .map(|d| {
                let operation = Arc::new(d.operation);
                let http = http.clone();
                let handler = move |arguments: Value, _ctx| {
                    let (http, operation) = (http.clone(), operation.clone());
                    async move { Ok(call::call(&http, &operation, arguments).await) }
                };
                let mut annotations = Annotations::new().open_world(true);
                if d.read_only {
                    annotations = annotations.read_only(true);
                } else {
                    annotations = annotations.destructive(d.destructive);
                }
                if d.idempotent {
                    annotations = annotations.idempotent(true);
                }
                let mut tool = Tool::new(d.name, d.description, d.input_schema, handler)
                    .annotations(annotations)
                    .tags(d.tags)
                    .validate_arguments(self.validate_arguments);
                if let Some(title) = d.title {
                    tool = tool.title(title);
                }
                if let Some(output) = d.output_schema {
                    tool = tool.output_schema(output);
                }
                if !self.scopes.is_empty() {
                    tool = tool.scopes(self.scopes.clone());
                }
                tool
            })
            .collect())
    }

    fn keeps(&self, method: &str, path: &str, tags: &[String]) -> bool {
        let tagged =
            |wanted: &[String]| tags.iter().any(|t| wanted.iter().any(|w| w.eq_ignore_ascii_case(t)));
        (self.include_tags.is_empty() || tagged(&self.include_tags))
            && !tagged(&self.exclude_tags)
            && (self.include_paths.is_empty()
                || self.include_paths.iter().any(|p| path.starts_with(p.as_str())))
            && !self.exclude_paths.iter().any(|p| path.starts_with(p.as_str()))
            && (self.methods.is_empty() || self.methods.iter().any(|m| m == method))
    }

    fn resolved_base_url(&self) -> Result<reqwest::Url, OpenApiError> {
        let base = match &self.base_url {
            Some(url) => url.clone(),
            None => {
                let server = self.doc["servers"][0]["url"].as_str().unwrap_or_default();
                if !(server.starts_with("http://") || server.starts_with("https://")) {
                    return Err(OpenApiError(format!(
                        "the document names no absolute server URL{}: give the API's base URL (`base_url`, `--base-url`)",
                        if server.is_empty() { String::new() } else { format!(" ({server:?})") }
                    )));
                }
                server.to_owned()
            }
        };
        let url = reqwest::Url::parse(&base)
            .map_err(|e| OpenApiError(format!("the base URL {base:?} is not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(OpenApiError(format!("the base URL {base:?} is not an http or https URL")));
        }
        Ok(url)
    }

    /// How many operations the document has (before filtering).
    pub fn operation_count(&self) -> usize {
        self.doc["paths"].as_object().map_or(0, |paths| {
            paths.values().map(|item| METHODS.iter().filter(|m| item.get(**m).is_some()).count()).sum()
        })
    }
}
