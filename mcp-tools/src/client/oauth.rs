//! OAuth for the client, as the MCP authorization specification (2025-11-25 and 2026-07-28)
//! asks of one: [`OAuth`], the authorization code grant with PKCE on a user's behalf, and
//! [`ClientCredentials`], the client credentials grant of a machine acting for itself. Both are
//! [`Authenticator`]s, for [`ClientBuilder::auth`](super::ClientBuilder::auth).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use futures_util::future::BoxFuture;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION};
use reqwest::{StatusCode, Url};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::Mutex;

use super::auth::Authenticator;
use super::error::ClientError;
use crate::fetch_error::describe;

/// The largest document read from a metadata, registration or token endpoint.
const MAX_BYTES: usize = 1024 * 1024;
/// Where the authorization server sends the user back, unless configured otherwise.
pub const DEFAULT_REDIRECT_URI: &str = "http://127.0.0.1:8976/callback";
/// How many times a 403 `insufficient_scope` may re-authorize for the same scopes.
const DEFAULT_MAX_STEP_UPS: u32 = 2;
/// How many full authorizations in a row may end in a token refused at once with a 401.
const MAX_UNPROVEN: u32 = 2;
/// A token is renewed when less than this is left of its lifetime (or half of the lifetime).
const RENEW_BEFORE: Duration = Duration::from_secs(60);

fn auth_error(message: impl Into<String>) -> ClientError {
    ClientError::Unauthorized(message.into())
}

// ---------------------------------------------------------------------------------------------
// Client authentication at the token endpoint.

/// How a client authenticates at the token endpoint (`token_endpoint_auth_method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClientAuthMethod {
    /// `none`: a public client, its `client_id` in the request body.
    None,
    /// `client_secret_basic`: HTTP Basic authentication with the id and secret.
    ClientSecretBasic,
    /// `client_secret_post`: the id and secret in the request body.
    ClientSecretPost,
    /// `private_key_jwt`: a JWT the client signs (RFC 7523), as `client_assertion`
    /// ([`ClientCredentials::private_key_jwt`]).
    PrivateKeyJwt,
}

impl ClientAuthMethod {
    /// Its name in metadata (`none`, `client_secret_basic`, `client_secret_post`).
    pub fn as_str(self) -> &'static str {
        match self {
            ClientAuthMethod::None => "none",
            ClientAuthMethod::ClientSecretBasic => "client_secret_basic",
            ClientAuthMethod::ClientSecretPost => "client_secret_post",
            ClientAuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        match name {
            "none" => Some(ClientAuthMethod::None),
            "client_secret_basic" => Some(ClientAuthMethod::ClientSecretBasic),
            "client_secret_post" => Some(ClientAuthMethod::ClientSecretPost),
            "private_key_jwt" => Some(ClientAuthMethod::PrivateKeyJwt),
            _ => None,
        }
    }

    /// The method for a client with (or without) a secret at an authorization server that
    /// supports `supported` (absent: `client_secret_basic` only, RFC 8414): Basic first, then
    /// post; `none` without a secret, or when the server takes nothing else.
    fn for_secret(supported: Option<&[String]>, has_secret: bool) -> Self {
        if !has_secret {
            return ClientAuthMethod::None;
        }
        let Some(supported) = supported else { return ClientAuthMethod::ClientSecretBasic };
        let offers = |m: ClientAuthMethod| supported.iter().any(|s| s == m.as_str());
        if offers(ClientAuthMethod::ClientSecretBasic) {
            ClientAuthMethod::ClientSecretBasic
        } else if offers(ClientAuthMethod::ClientSecretPost) {
            ClientAuthMethod::ClientSecretPost
        } else if offers(ClientAuthMethod::None) {
            ClientAuthMethod::None
        } else {
            ClientAuthMethod::ClientSecretBasic
        }
    }
}

/// Signs the claims of a client assertion (`private_key_jwt`): the JWT.
type Signer = Arc<dyn Fn(&Value) -> Result<String, ClientError> + Send + Sync>;

/// A client id, its secret (or assertion signer) and how the token endpoint is told them.
#[derive(Clone)]
struct ClientId {
    id: String,
    secret: Option<String>,
    method: ClientAuthMethod,
    signer: Option<Signer>,
}

impl fmt::Debug for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientId")
            .field("id", &self.id)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .field("method", &self.method)
            .finish()
    }
}

impl ClientId {
    /// Authenticates a token request: the `Authorization` header, or fields of the form (a
    /// client assertion for `audience`).
    fn authenticate(
        &self,
        request: reqwest::RequestBuilder,
        form: &mut Vec<(&'static str, String)>,
        audience: &str,
    ) -> Result<reqwest::RequestBuilder, ClientError> {
        let secret = self.secret.clone().unwrap_or_default();
        Ok(match self.method {
            ClientAuthMethod::None => {
                form.push(("client_id", self.id.clone()));
                request
            }
            ClientAuthMethod::ClientSecretPost => {
                form.push(("client_id", self.id.clone()));
                form.push(("client_secret", secret));
                request
            }
            ClientAuthMethod::ClientSecretBasic => {
                // RFC 6749 section 2.3.1: both form-urlencoded before they are joined.
                let pair = format!("{}:{}", form_encode(&self.id), form_encode(&secret));
                request.header(AUTHORIZATION, format!("Basic {}", STANDARD.encode(pair)))
            }
            ClientAuthMethod::PrivateKeyJwt => {
                let Some(sign) = &self.signer else {
                    return Err(auth_error("private_key_jwt without a signer"));
                };
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or_default();
                let claims = json!({
                    "iss": self.id,
                    "sub": self.id,
                    "aud": audience,
                    "iat": now,
                    "exp": now + 300,
                    "jti": random_value()?,
                });
                form.push(("client_id", self.id.clone()));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
                ));
                form.push(("client_assertion", sign(&claims)?));
                request
            }
        })
    }
}

/// `application/x-www-form-urlencoded` encoding of one value.
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => out.push(byte as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// HTTP: the client's own requests to metadata, registration and token endpoints.

#[derive(Clone)]
struct Http {
    client: reqwest::Client,
    allow_http: bool,
}

impl Http {
    fn new() -> Self {
        Http { client: default_client(), allow_http: false }
    }

    /// `url` if the client may call it: `https`, or `http` to a loopback host (any host with
    /// [`OAuth::allow_http`]).
    fn check(&self, url: &str, what: &str) -> Result<Url, ClientError> {
        let parsed = Url::parse(url).map_err(|e| auth_error(format!("{what} {url:?} is not a URL: {e}")))?;
        match parsed.scheme() {
            "https" => Ok(parsed),
            "http" if self.allow_http || is_loopback(&parsed) => Ok(parsed),
            _ => {
                Err(auth_error(format!("{what} {url:?} must be an https URL (http only to a loopback host)")))
            }
        }
    }

    /// Sends `request` and reads its answer (at most [`MAX_BYTES`]).
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<(StatusCode, Vec<u8>), ClientError> {
        let mut response = request.send().await.map_err(|e| auth_error(describe(&e)))?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| auth_error(describe(&e)))? {
            if body.len() + chunk.len() > MAX_BYTES {
                return Err(auth_error(format!("{} sent more than {MAX_BYTES} bytes", response.url())));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, body))
    }

    /// The JSON document at `url`; `None` when the server answers with an error status (the
    /// caller tries the next place).
    async fn get_json(&self, url: &Url) -> Result<Option<Value>, ClientError> {
        let request = self.client.get(url.clone()).header(ACCEPT, "application/json");
        let (status, body) = self.send(request).await?;
        if !status.is_success() {
            tracing::debug!(%url, %status, "no metadata here");
            return Ok(None);
        }
        let value =
            serde_json::from_slice(&body).map_err(|e| auth_error(format!("{url} did not send JSON: {e}")))?;
        Ok(Some(value))
    }
}

fn default_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("mcp-tools/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("a reqwest client with rustls builds")
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.to_ascii_lowercase().ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A short, printable rendering of what a server said (for error messages).
fn printable(text: &str) -> String {
    let text: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
    text
}

/// What an OAuth error answer says (`error`, `error_description`), or its status.
fn oauth_error(status: StatusCode, body: &[u8]) -> String {
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    match value["error"].as_str() {
        Some(error) => match value["error_description"].as_str() {
            Some(description) => format!("{} ({})", printable(error), printable(description)),
            None => printable(error),
        },
        None => format!("HTTP {}", status.as_u16()),
    }
}

// ---------------------------------------------------------------------------------------------
// WWW-Authenticate challenges (RFC 9110 section 11.6.1).

/// One challenge of a `WWW-Authenticate` header: its scheme and parameters (names lowercase).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Challenge {
    scheme: String,
    params: Vec<(String, String)>,
}

impl Challenge {
    fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The challenges of a `WWW-Authenticate` header value.
fn parse_challenges(header: &str) -> Vec<Challenge> {
    let chars: Vec<char> = header.chars().collect();
    let mut challenges: Vec<Challenge> = Vec::new();
    let mut i = 0;
    let skip = |i: &mut usize, what: &dyn Fn(char) -> bool| {
        while *i < chars.len() && what(chars[*i]) {
            *i += 1;
        }
    };
    while i < chars.len() {
        skip(&mut i, &|c| c == ',' || c.is_whitespace());
        let start = i;
        skip(&mut i, &is_tchar);
        if i == start {
            // Not a token: skip the character (a token68's padding, or garbage).
            i += 1;
            continue;
        }
        let name: String = chars[start..i].iter().collect();
        let mut j = i;
        skip(&mut j, &|c| c == ' ' || c == '\t');
        if j < chars.len() && chars[j] == '=' && !challenges.is_empty() {
            // An auth-param of the current challenge.
            j += 1;
            skip(&mut j, &|c| c == ' ' || c == '\t');
            let mut value = String::new();
            if j < chars.len() && chars[j] == '"' {
                j += 1;
                while j < chars.len() && chars[j] != '"' {
                    if chars[j] == '\\' && j + 1 < chars.len() {
                        j += 1;
                    }
                    value.push(chars[j]);
                    j += 1;
                }
                j += 1;
            } else {
                while j < chars.len() && chars[j] != ',' && !chars[j].is_whitespace() {
                    value.push(chars[j]);
                    j += 1;
                }
            }
            if let Some(challenge) = challenges.last_mut() {
                challenge.params.push((name.to_ascii_lowercase(), value));
            }
            i = j;
        } else {
            challenges.push(Challenge { scheme: name, params: Vec::new() });
            i = j;
        }
    }
    challenges
}

/// What a refusal's challenge says to an OAuth client.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct BearerChallenge {
    resource_metadata: Option<String>,
    scope: Option<Vec<String>>,
    error: Option<String>,
    error_description: Option<String>,
}

impl BearerChallenge {
    /// The `Bearer` challenge of a header (else its first challenge).
    fn parse(header: Option<&str>) -> Self {
        let challenges = header.map(parse_challenges).unwrap_or_default();
        let Some(challenge) =
            challenges.iter().find(|c| c.scheme.eq_ignore_ascii_case("bearer")).or(challenges.first())
        else {
            return BearerChallenge::default();
        };
        let scope = challenge.param("scope").map(split_scopes).filter(|s| !s.is_empty());
        BearerChallenge {
            resource_metadata: challenge.param("resource_metadata").map(str::to_owned),
            scope,
            error: challenge.param("error").map(str::to_owned),
            error_description: challenge.param("error_description").map(str::to_owned),
        }
    }

    fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

fn split_scopes(scope: &str) -> Vec<String> {
    scope.split_ascii_whitespace().map(str::to_owned).collect()
}

/// `list` with `more` added, each scope once, in the order first seen.
fn union(list: &[String], more: &[String]) -> Vec<String> {
    let mut all = list.to_vec();
    for scope in more {
        if !all.contains(scope) {
            all.push(scope.clone());
        }
    }
    all
}

// ---------------------------------------------------------------------------------------------
// Discovery: protected resource metadata (RFC 9728), authorization server metadata (RFC 8414,
// OpenID Connect Discovery).

/// What a protected resource's metadata says.
#[derive(Clone, Debug)]
struct ResourceMetadata {
    /// Its `resource`: the identifier the tokens are asked for (RFC 8707's `resource`).
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
}

/// The well-known URIs of the protected resource metadata of `server`, in the order to try:
/// path-aware (`/.well-known/oauth-protected-resource/path`), then the root.
fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    let mut base = server.clone();
    base.set_query(None);
    base.set_fragment(None);
    let path = server.path().trim_end_matches('/');
    let mut urls = Vec::new();
    if !path.is_empty() {
        let mut url = base.clone();
        url.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
        url.set_query(server.query());
        urls.push(url);
    }
    let mut root = base;
    root.set_path("/.well-known/oauth-protected-resource");
    urls.push(root);
    urls
}

/// The metadata URLs of the authorization server `issuer`, in the MCP specification's order:
/// with a path, RFC 8414 and OpenID Connect path insertion, then OpenID Connect path appending;
/// without one, RFC 8414 then OpenID Connect.
fn issuer_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/').to_owned();
    let mut base = issuer.clone();
    base.set_query(None);
    base.set_fragment(None);
    let at = |p: String| {
        let mut url = base.clone();
        url.set_path(&p);
        url
    };
    if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// Whether the resource identifier `resource` covers the server at `server`: the same origin,
/// and the server's path is the resource's or below it.
fn resource_covers(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else { return false };
    if resource.fragment().is_some()
        || resource.scheme() != server.scheme()
        || resource.host_str() != server.host_str()
        || resource.port_or_known_default() != server.port_or_known_default()
    {
        return false;
    }
    let prefix = resource.path().trim_end_matches('/');
    let path = server.path();
    prefix.is_empty() || path == prefix || path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/'))
}

/// The server's URL as a resource identifier: no fragment, no trailing slash on an empty path.
fn canonical(server: &Url) -> String {
    let mut url = server.clone();
    url.set_fragment(None);
    let text = url.to_string();
    if url.path() == "/" && url.query().is_none() { text.trim_end_matches('/').to_owned() } else { text }
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value.as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
}

/// The protected resource metadata of `server`: from the challenge's `resource_metadata`, else
/// from the well-known URIs (`None` when none has it). Its `resource` must cover the server.
async fn discover_resource(
    http: &Http,
    server: &Url,
    metadata_url: Option<&str>,
) -> Result<Option<ResourceMetadata>, ClientError> {
    let (document, from) = match metadata_url {
        Some(url) => {
            let url = http.check(url, "the resource metadata URL")?;
            match http.get_json(&url).await? {
                Some(document) => (document, url),
                None => {
                    return Err(auth_error(format!("the protected resource metadata {url} is not there")));
                }
            }
        }
        None => {
            let mut found = None;
            for url in resource_metadata_urls(server) {
                let url = http.check(url.as_str(), "the resource metadata URL")?;
                if let Some(document) = http.get_json(&url).await? {
                    found = Some((document, url));
                    break;
                }
            }
            match found {
                Some(found) => found,
                None => return Ok(None),
            }
        }
    };
    let Some(resource) = document["resource"].as_str() else {
        return Err(auth_error(format!("the protected resource metadata {from} has no `resource`")));
    };
    if !resource_covers(resource, server) {
        return Err(auth_error(format!(
            "the protected resource metadata {from} is for {:?}, not for {server}",
            printable(resource)
        )));
    }
    let authorization_servers = strings(&document["authorization_servers"]).unwrap_or_default();
    if authorization_servers.is_empty() {
        return Err(auth_error(format!(
            "the protected resource metadata {from} names no authorization server"
        )));
    }
    tracing::debug!(%from, resource, ?authorization_servers, "protected resource metadata");
    Ok(Some(ResourceMetadata {
        resource: resource.to_owned(),
        authorization_servers,
        scopes_supported: strings(&document["scopes_supported"]),
    }))
}

/// What an authorization server's metadata says.
#[derive(Clone, Debug)]
struct IssuerMetadata {
    issuer: String,
    authorization_endpoint: Option<Url>,
    token_endpoint: Url,
    registration_endpoint: Option<Url>,
    scopes_supported: Option<Vec<String>>,
    code_challenge_methods_supported: Option<Vec<String>>,
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    iss_parameter_supported: bool,
    client_id_metadata_document_supported: bool,
}

impl IssuerMetadata {
    fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|x| x == scope))
    }
}

/// The metadata of the authorization server `issuer`, from the first of its well-known URLs
/// that has it; its `issuer` must be `issuer`, character for character.
async fn discover_issuer(http: &Http, issuer: &str) -> Result<IssuerMetadata, ClientError> {
    let issuer_url = http.check(issuer, "the authorization server")?;
    let mut found = None;
    for url in issuer_metadata_urls(&issuer_url) {
        if let Some(document) = http.get_json(&url).await? {
            found = Some((document, url));
            break;
        }
    }
    let Some((document, from)) = found else {
        return Err(auth_error(format!("the authorization server {issuer} publishes no metadata")));
    };
    // RFC 8414 section 3.3, OpenID Connect Discovery section 4.3.
    if document["issuer"].as_str() != Some(issuer) {
        return Err(auth_error(format!(
            "the authorization server metadata {from} is for the issuer {:?}, not {issuer:?}",
            printable(document["issuer"].as_str().unwrap_or("(none)"))
        )));
    }
    let endpoint = |name: &str| -> Result<Option<Url>, ClientError> {
        document[name].as_str().map(|url| http.check(url, &format!("the `{name}`"))).transpose()
    };
    let token_endpoint = endpoint("token_endpoint")?.ok_or_else(|| {
        auth_error(format!("the authorization server metadata {from} has no `token_endpoint`"))
    })?;
    tracing::debug!(%from, issuer, "authorization server metadata");
    Ok(IssuerMetadata {
        issuer: issuer.to_owned(),
        authorization_endpoint: endpoint("authorization_endpoint")?,
        token_endpoint,
        registration_endpoint: endpoint("registration_endpoint")?,
        scopes_supported: strings(&document["scopes_supported"]),
        code_challenge_methods_supported: strings(&document["code_challenge_methods_supported"]),
        token_endpoint_auth_methods_supported: strings(&document["token_endpoint_auth_methods_supported"]),
        iss_parameter_supported: document["authorization_response_iss_parameter_supported"]
            == Value::Bool(true),
        client_id_metadata_document_supported: document["client_id_metadata_document_supported"]
            == Value::Bool(true),
    })
}

// ---------------------------------------------------------------------------------------------
// Tokens.

struct Token {
    access: String,
    refresh: Option<String>,
    /// When to renew it (`None`: the server gave no lifetime).
    renew_at: Option<Instant>,
    /// The authorization server that issued it.
    issuer: Option<String>,
    /// The scopes granted (the `scope` of the answer, else those asked for).
    granted: Vec<String>,
    /// How many requests were given it.
    handouts: u32,
    /// Obtained by a refresh after the server refused its predecessor.
    refreshed_after_refusal: bool,
}

impl Token {
    fn fresh(&self) -> bool {
        self.renew_at.is_none_or(|at| Instant::now() < at)
    }

    fn header(&mut self) -> String {
        self.handouts = self.handouts.saturating_add(1);
        format!("Bearer {}", self.access)
    }
}

/// Reads a token endpoint's answer.
fn read_token(
    body: &Value,
    issuer: Option<&str>,
    asked: &[String],
    previous_refresh: Option<&str>,
) -> Result<Token, ClientError> {
    let Some(access) = body["access_token"].as_str().filter(|t| !t.is_empty()) else {
        return Err(auth_error("the token endpoint's answer has no access_token"));
    };
    match body["token_type"].as_str() {
        None => {}
        Some(kind) if kind.eq_ignore_ascii_case("bearer") => {}
        Some(kind) => {
            return Err(auth_error(format!(
                "the token endpoint issued a {:?} token, not a Bearer token",
                printable(kind)
            )));
        }
    }
    let lifetime = match &body["expires_in"] {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|s| s.is_finite() && *s >= 0.0)
    .map(|s| Duration::from_secs_f64(s.min(10.0 * 365.0 * 86_400.0)));
    let renew_at = lifetime.map(|lifetime| Instant::now() + lifetime - RENEW_BEFORE.min(lifetime / 2));
    Ok(Token {
        access: access.to_owned(),
        refresh: body["refresh_token"].as_str().or(previous_refresh).map(str::to_owned),
        renew_at,
        issuer: issuer.map(str::to_owned),
        granted: body["scope"].as_str().map(split_scopes).unwrap_or_else(|| asked.to_vec()),
        handouts: 0,
        refreshed_after_refusal: false,
    })
}

/// Posts a token request (`form`, authenticated as `client` to the authorization server
/// `issuer`, else to the endpoint itself); the answer's JSON.
async fn token_request(
    http: &Http,
    endpoint: &Url,
    issuer: Option<&str>,
    client: &ClientId,
    mut form: Vec<(&'static str, String)>,
) -> Result<Value, ClientError> {
    let request = http.client.post(endpoint.clone()).header(ACCEPT, "application/json");
    let audience = issuer.unwrap_or(endpoint.as_str());
    let request = client.authenticate(request, &mut form, audience)?.form(&form);
    let (status, body) = http.send(request).await?;
    if !status.is_success() {
        return Err(auth_error(format!(
            "the token endpoint {endpoint} refused: {}",
            oauth_error(status, &body)
        )));
    }
    serde_json::from_slice(&body)
        .map_err(|e| auth_error(format!("the token endpoint {endpoint} did not send JSON: {e}")))
}

// ---------------------------------------------------------------------------------------------
// PKCE and random values.

/// 32 random bytes, base64url: a PKCE code verifier (RFC 7636: 43 characters), a `state`.
fn random_value() -> Result<String, ClientError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| auth_error(format!("no randomness for PKCE: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// The S256 code challenge of a PKCE code verifier: base64url(SHA-256(verifier)).
fn code_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

// ---------------------------------------------------------------------------------------------
// User agents: how the user approves.

/// Takes the user to the authorization URL and returns where the authorization server sent
/// them back: the redirect URI with `code` and `state` (and `iss`) in its query, or that query
/// alone. [`Headless`] and [`Loopback`] are two; a closure
/// `Fn(String) -> impl Future<Output = Result<String, ClientError>>` (given the authorization
/// URL) is another.
pub trait UserAgent: Send + Sync + 'static {
    /// Sends the user to `authorization_url`; the authorization server sends them back to
    /// `redirect_uri`, with the answer in the query: return that URL.
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        redirect_uri: &'a str,
    ) -> BoxFuture<'a, Result<String, ClientError>>;
}

impl<F, Fut> UserAgent for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, ClientError>> + Send + 'static,
{
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        _redirect_uri: &'a str,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(self(authorization_url.to_owned()))
    }
}

/// Whether `url` is where `redirect_uri` points (scheme, host, port, path).
fn is_redirect_target(url: &Url, redirect_uri: &Url) -> bool {
    url.scheme() == redirect_uri.scheme()
        && url.host_str() == redirect_uri.host_str()
        && url.port_or_known_default() == redirect_uri.port_or_known_default()
        && url.path() == redirect_uri.path()
}

/// Approval without a user: GETs the authorization URL and follows the authorization server's
/// redirects (without cookies) until one goes to the redirect URI, which it returns without
/// calling it. For authorization servers that approve at once (test servers, the MCP
/// conformance suite's), or that know the client's user by other means; an authorization
/// server that shows a page fails the flow.
#[derive(Clone, Debug)]
pub struct Headless {
    client: reqwest::Client,
    max_redirects: usize,
}

impl Default for Headless {
    fn default() -> Self {
        Headless { client: default_client(), max_redirects: 10 }
    }
}

impl Headless {
    /// Follows at most 10 redirects.
    pub fn new() -> Self {
        Self::default()
    }
}

impl UserAgent for Headless {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        redirect_uri: &'a str,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(async move {
            let target = Url::parse(redirect_uri)
                .map_err(|e| auth_error(format!("the redirect URI {redirect_uri:?} is not a URL: {e}")))?;
            let mut url = Url::parse(authorization_url)
                .map_err(|e| auth_error(format!("the authorization URL is not a URL: {e}")))?;
            for _ in 0..=self.max_redirects {
                let response =
                    self.client.get(url.clone()).send().await.map_err(|e| auth_error(describe(&e)))?;
                let status = response.status();
                let location = response.headers().get(LOCATION).and_then(|l| l.to_str().ok());
                let Some(location) = location.filter(|_| status.is_redirection()) else {
                    return Err(auth_error(format!(
                        "the authorization server answered HTTP {} instead of sending the user back \
                         (it needs a user: use another UserAgent)",
                        status.as_u16()
                    )));
                };
                let next = url.join(location).map_err(|e| {
                    auth_error(format!("the authorization server redirected to a bad URL: {e}"))
                })?;
                if is_redirect_target(&next, &target) {
                    return Ok(next.to_string());
                }
                url = next;
            }
            Err(auth_error(format!(
                "the authorization server redirected more than {} times",
                self.max_redirects
            )))
        })
    }
}

/// Approval by the user in a browser: listens on the redirect URI's host and port (an
/// `http://127.0.0.1:PORT/…` or `http://localhost:PORT/…` redirect URI), shows the user the
/// authorization URL through the function given (print it, open a browser…), and waits (5
/// minutes by default) for the browser to come back.
#[derive(Clone)]
pub struct Loopback {
    open: Arc<dyn Fn(&str) + Send + Sync>,
    timeout: Duration,
}

impl fmt::Debug for Loopback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loopback").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl Loopback {
    /// `open` shows the user the authorization URL (prints it, opens a browser).
    pub fn new(open: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Loopback { open: Arc::new(open), timeout: Duration::from_secs(300) }
    }

    /// How long to wait for the browser to come back (default 5 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// The HTML page the browser shows once it is back.
const DONE_PAGE: &str = concat!(
    "<!doctype html><title>Authorized</title>",
    "<p>The authorization is complete: you can close this window.</p>"
);

/// Reads one HTTP request from `stream`; the query of a GET of `path`, answered with
/// [`DONE_PAGE`] (anything else is answered 404: `None`).
async fn serve_callback(mut stream: tokio::net::TcpStream, path: &str) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        let read =
            tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer)).await.ok()?.ok()?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut parts = head.lines().next().unwrap_or_default().split(' ');
    let (method, target) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
    let (target_path, query) = target.split_once('?').unwrap_or((target, ""));
    let ours = method == "GET" && target_path == path;
    let (status, body) = if ours { ("200 OK", DONE_PAGE) } else { ("404 Not Found", "Not found") };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    ours.then(|| query.to_owned())
}

impl UserAgent for Loopback {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        redirect_uri: &'a str,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(async move {
            let mut target = Url::parse(redirect_uri)
                .map_err(|e| auth_error(format!("the redirect URI {redirect_uri:?} is not a URL: {e}")))?;
            let (Some(host), Some(port)) = (target.host_str(), target.port_or_known_default()) else {
                return Err(auth_error(format!(
                    "the redirect URI {redirect_uri} has no host and port to listen on"
                )));
            };
            if target.scheme() != "http" || !is_loopback(&target) {
                return Err(auth_error(format!(
                    "Loopback needs an http://127.0.0.1:PORT/ redirect URI, not {redirect_uri}"
                )));
            }
            let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
            let listener = tokio::net::TcpListener::bind((host.as_str(), port))
                .await
                .map_err(|e| auth_error(format!("cannot listen on {host}:{port} for the redirect: {e}")))?;
            (self.open)(authorization_url);
            let path = target.path().to_owned();
            let wait = async {
                loop {
                    let (stream, _) = listener
                        .accept()
                        .await
                        .map_err(|e| auth_error(format!("the redirect listener failed: {e}")))?;
                    if let Some(query) = serve_callback(stream, &path).await {
                        return Ok::<String, ClientError>(query);
                    }
                }
            };
            let query = tokio::time::timeout(self.timeout, wait)
                .await
                .map_err(|_| auth_error(format!("the user did not come back within {:?}", self.timeout)))??;
            target.set_query(Some(&query));
            Ok(target.to_string())
        })
    }
}

/// The parameters of the authorization response (the query of the URL the user agent returned,
/// or the text as a query); a parameter given twice is refused.
fn response_params(callback: &str) -> Result<HashMap<String, String>, ClientError> {
    let query = match Url::parse(callback) {
        Ok(url) => url.query().unwrap_or_default().to_owned(),
        Err(_) => callback.trim().trim_start_matches('?').to_owned(),
    };
    let mut decoder = Url::parse("http://callback.invalid/")
        .map_err(|e| auth_error(format!("cannot parse the response: {e}")))?;
    decoder.set_query(Some(&query));
    let mut params = HashMap::new();
    for (name, value) in decoder.query_pairs() {
        if params.insert(name.to_string(), value.to_string()).is_some() {
            return Err(auth_error(format!("the authorization response has `{name}` twice")));
        }
    }
    Ok(params)
}

// ---------------------------------------------------------------------------------------------
// OAuth: the authorization code grant.

/// OAuth on behalf of a user (the authorization code grant with PKCE), as the MCP
/// authorization specification (2025-11-25 and 2026-07-28) asks of a client; an
/// [`Authenticator`] for [`ClientBuilder::auth`](super::ClientBuilder::auth).
///
/// It follows the server's lead. The first request goes without a token; the server's 401
/// challenge names its protected resource metadata (RFC 9728), else the well-known URIs built
/// from the server's URL are tried (path-aware first, then the root). The metadata's `resource`
/// must be the server (the same origin, the server's path at or below its path), and it names
/// the authorization server, whose metadata (RFC 8414, or OpenID Connect Discovery, in the MCP
/// specification's order of path insertion) must carry the `issuer` it was looked up by,
/// character for character, and offer PKCE with S256. The client then gets a client id: a
/// pre-registered one ([`client_id`](Self::client_id)); else its Client ID Metadata Document URL
/// ([`client_metadata_url`](Self::client_metadata_url)) if the authorization server takes
/// those; else dynamic registration (RFC 7591, a `native` application asking for refresh
/// tokens). It sends the user to the authorization endpoint (PKCE S256, `state`, the
/// `resource` of RFC 8707, the scopes the challenge names, else the resource's
/// `scopes_supported`, else none; `offline_access` added when the authorization server offers
/// it), checks what comes back (`state`; `iss`, RFC 9207: compared with the recorded issuer
/// whenever present, required when advertised) and exchanges the code, authenticating as the
/// authorization server supports (`none`, `client_secret_basic`, `client_secret_post`).
///
/// Afterwards, a token about to expire is refreshed before a request; a 401 refreshes it once
/// (after checking that the resource still names the same authorization server), then
/// authorizes anew; a 403 `insufficient_scope` re-authorizes with the union of the scopes asked
/// so far and the challenged ones, at most [`max_step_ups`](Self::max_step_ups) times for the
/// same scopes. When the resource names another authorization server, the tokens and client id
/// of the old one are not used with it. Client ids are kept per authorization server; tokens
/// are kept in memory, for one MCP server, and not given to requests outside its resource.
///
/// How the user approves is a [`UserAgent`]: [`Headless`] (the default) follows the
/// authorization server's redirects without a browser, for servers that approve at once;
/// [`Loopback`] shows the user the URL and waits for the browser on the redirect URI's port; a
/// closure can do anything else.
///
/// ```no_run
/// use mcp_tools::client::{Client, Loopback, OAuth};
///
/// # async fn run() -> Result<(), mcp_tools::client::ClientError> {
/// let oauth = OAuth::new()
///     .client_name("my-agent")
///     .redirect_uri("http://127.0.0.1:8976/callback")
///     .user_agent(Loopback::new(|url| eprintln!("Open this page to sign in: {url}")));
/// let client = Client::builder().auth(oauth).connect_http("https://mcp.example.com/mcp").await?;
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
pub struct OAuth {
    config: OAuthConfig,
    http: Http,
    state: Mutex<OAuthState>,
    /// Counts the tokens obtained: a refusal that finds a newer token than the one it saw
    /// retries with it.
    generation: AtomicU64,
}

struct OAuthConfig {
    user_agent: Arc<dyn UserAgent>,
    redirect_uri: String,
    client_name: String,
    client_metadata_url: Option<String>,
    pre_registered: Option<PreRegistered>,
    offline_access: bool,
    max_step_ups: u32,
}

#[derive(Clone)]
struct PreRegistered {
    id: String,
    secret: Option<String>,
    method: Option<ClientAuthMethod>,
    /// The authorization server it was registered with (`None`: the first one it is used with).
    issuer: Option<String>,
}

#[derive(Default)]
struct OAuthState {
    /// The resource the tokens are for (the resource metadata's `resource`).
    resource: Option<String>,
    /// Authorization servers' metadata, by issuer.
    issuers: HashMap<String, Arc<IssuerMetadata>>,
    /// Client ids, by issuer: never used with another authorization server.
    clients: HashMap<String, ClientId>,
    /// The authorization server a pre-registered client without one was first used with.
    pre_registered_issuer: Option<String>,
    token: Option<Token>,
    /// The scopes asked for so far (without `offline_access`): re-authorizations ask for them
    /// again.
    asked: Vec<String>,
    /// Step-ups (403 `insufficient_scope` re-authorizations) per set of scopes asked.
    step_ups: HashMap<String, u32>,
    /// Full authorizations in a row whose token the server refused at once.
    unproven: u32,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("redirect_uri", &self.config.redirect_uri)
            .field("client_name", &self.config.client_name)
            .field("client_metadata_url", &self.config.client_metadata_url)
            .field("client_id", &self.config.pre_registered.as_ref().map(|p| &p.id))
            .finish_non_exhaustive()
    }
}

impl Default for OAuth {
    fn default() -> Self {
        Self::new()
    }
}

impl OAuth {
    /// An OAuth client with the defaults: [`Headless`] approval, the redirect URI
    /// [`DEFAULT_REDIRECT_URI`], the client name `mcp-tools-client`, no pre-registered client
    /// and no Client ID Metadata Document (dynamic registration), `offline_access` asked for
    /// when the authorization server offers it, two step-ups for the same scopes.
    pub fn new() -> Self {
        OAuth {
            config: OAuthConfig {
                user_agent: Arc::new(Headless::new()),
                redirect_uri: DEFAULT_REDIRECT_URI.to_owned(),
                client_name: "mcp-tools-client".to_owned(),
                client_metadata_url: None,
                pre_registered: None,
                offline_access: true,
                max_step_ups: DEFAULT_MAX_STEP_UPS,
            },
            http: Http::new(),
            state: Mutex::new(OAuthState::default()),
            generation: AtomicU64::new(0),
        }
    }

    /// How the user approves (default [`Headless`]).
    pub fn user_agent(mut self, user_agent: impl UserAgent) -> Self {
        self.config.user_agent = Arc::new(user_agent);
        self
    }

    /// Where the authorization server sends the user back (default [`DEFAULT_REDIRECT_URI`]).
    pub fn redirect_uri(mut self, redirect_uri: impl Into<String>) -> Self {
        self.config.redirect_uri = redirect_uri.into();
        self
    }

    /// The client's name in dynamic registration (`client_name`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.config.client_name = name.into();
        self
    }

    /// The HTTPS URL of the client's Client ID Metadata Document: its client id at
    /// authorization servers that take them (`client_id_metadata_document_supported`). The
    /// document, served there by the application, names this URL as its `client_id` and the
    /// redirect URI among its `redirect_uris`.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.config.client_metadata_url = Some(url.into());
        self
    }

    /// A pre-registered client id, used before anything else with the authorization server it
    /// was registered with ([`client_issuer`](Self::client_issuer); unset: the first one it is
    /// used with, and no other).
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        let pre = self.pre_registered();
        pre.id = client_id.into();
        self
    }

    /// The pre-registered client's secret (a confidential client).
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.pre_registered().secret = Some(secret.into());
        self
    }

    /// How the pre-registered client authenticates at the token endpoint (default: from the
    /// authorization server's `token_endpoint_auth_methods_supported`: Basic, else post, with
    /// a secret; `none` without).
    pub fn client_auth_method(mut self, method: ClientAuthMethod) -> Self {
        self.pre_registered().method = Some(method);
        self
    }

    /// The issuer of the authorization server the pre-registered client was registered with.
    pub fn client_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.pre_registered().issuer = Some(issuer.into());
        self
    }

    fn pre_registered(&mut self) -> &mut PreRegistered {
        self.config.pre_registered.get_or_insert_with(|| PreRegistered {
            id: String::new(),
            secret: None,
            method: None,
            issuer: None,
        })
    }

    /// Whether to ask for `offline_access` (a refresh token, SEP-2207) when the authorization
    /// server lists it in `scopes_supported` and other scopes are asked for (default `true`).
    /// It is never asked of one that does not list it.
    pub fn offline_access(mut self, ask: bool) -> Self {
        self.config.offline_access = ask;
        self
    }

    /// How many times a 403 `insufficient_scope` may re-authorize for the same scopes before
    /// the refusal is final (default 2).
    pub fn max_step_ups(mut self, max: u32) -> Self {
        self.config.max_step_ups = max;
        self
    }

    /// Allows plain `http` metadata, authorization and token endpoints on any host (default:
    /// `https`, or `http` to a loopback host).
    pub fn allow_http(mut self, allow: bool) -> Self {
        self.http.allow_http = allow;
        self
    }

    /// The HTTP client of the discovery, registration and token requests (proxies, TLS roots).
    /// It should not follow redirects.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http.client = client;
        self
    }

    /// Authorizes now for the MCP server at `server_url`, as if it had refused a request
    /// without saying more: discovery, the user's approval, the token.
    pub async fn authorize(&self, server_url: &str) -> Result<(), ClientError> {
        let server = self.server_url(server_url)?;
        let mut state = self.state.lock().await;
        self.full_authorization(&mut state, &server, &BearerChallenge::default(), None).await
    }

    fn server_url(&self, url: &str) -> Result<Url, ClientError> {
        Url::parse(url).map_err(|e| auth_error(format!("the server URL {url:?} is not a URL: {e}")))
    }

    async fn header(&self, url: &str) -> Result<Option<String>, ClientError> {
        let server = self.server_url(url)?;
        let mut state = self.state.lock().await;
        if state.resource.as_deref().is_some_and(|resource| !resource_covers(resource, &server)) {
            return Ok(None);
        }
        let Some(token) = state.token.as_mut() else { return Ok(None) };
        if token.fresh() {
            return Ok(Some(token.header()));
        }
        let Some(token) = state.token.take() else { return Ok(None) };
        match self.refresh(&mut state, &token).await {
            Ok(mut renewed) => {
                let header = renewed.header();
                state.token = Some(renewed);
                self.generation.fetch_add(1, Ordering::SeqCst);
                Ok(Some(header))
            }
            Err(error) => {
                // Without a token, the server's challenge starts a new authorization.
                tracing::debug!(%error, "the access token expired and could not be refreshed");
                Ok(None)
            }
        }
    }

    /// Renews `token` with its refresh token at its authorization server.
    async fn refresh(&self, state: &mut OAuthState, token: &Token) -> Result<Token, ClientError> {
        let (Some(refresh), Some(issuer)) = (&token.refresh, &token.issuer) else {
            return Err(auth_error("no refresh token"));
        };
        let metadata = state.issuers.get(issuer).cloned().ok_or_else(|| auth_error("unknown issuer"))?;
        let client = state.clients.get(issuer).cloned().ok_or_else(|| auth_error("no client id"))?;
        let mut form = vec![("grant_type", "refresh_token".to_owned()), ("refresh_token", refresh.clone())];
        if let Some(resource) = &state.resource {
            form.push(("resource", resource.clone()));
        }
        let body = token_request(&self.http, &metadata.token_endpoint, Some(&metadata.issuer), &client, form)
            .await?;
        tracing::debug!(issuer, "access token refreshed");
        read_token(&body, Some(issuer), &token.granted, Some(refresh))
    }

    async fn on_refusal(&self, url: &str, status: u16, challenge: Option<&str>) -> Result<bool, ClientError> {
        let server = self.server_url(url)?;
        let seen = self.generation.load(Ordering::SeqCst);
        let mut state = self.state.lock().await;
        if self.generation.load(Ordering::SeqCst) != seen {
            // Another request renewed the token meanwhile: try that one.
            return Ok(true);
        }
        let challenge = BearerChallenge::parse(challenge);
        if status == 403 && !challenge.insufficient_scope() {
            return Err(auth_error(format!(
                "the server refused the request (HTTP 403{})",
                described(&challenge)
            )));
        }
        if status == 403 {
            self.full_authorization(&mut state, &server, &challenge, Some(status)).await?;
            return Ok(true);
        }
        // 401: the token expired, was revoked, or is not for this server (any more).
        if let Some(token) = state.token.take() {
            // A token refused before it could have served much: one more in a row.
            if token.handouts <= 2 {
                state.unproven += 1;
            } else {
                state.unproven = 0;
            }
            if token.refresh.is_some() && !token.refreshed_after_refusal {
                // The authorization server may have changed: look again before using it.
                let issuer = token.issuer.as_deref().unwrap_or_default();
                if self.still_names(&server, &challenge, issuer).await {
                    match self.refresh(&mut state, &token).await {
                        Ok(mut renewed) => {
                            renewed.refreshed_after_refusal = true;
                            state.token = Some(renewed);
                            self.generation.fetch_add(1, Ordering::SeqCst);
                            return Ok(true);
                        }
                        Err(error) => tracing::debug!(%error, "refreshing the refused token failed"),
                    }
                }
            }
        }
        if state.unproven > MAX_UNPROVEN {
            state.unproven = 0;
            return Err(auth_error(format!(
                "the server refused every new token ({} authorizations in a row{})",
                MAX_UNPROVEN + 1,
                described(&challenge)
            )));
        }
        self.full_authorization(&mut state, &server, &challenge, Some(status)).await?;
        Ok(true)
    }

    /// Whether the server's resource metadata still names the authorization server `issuer`.
    async fn still_names(&self, server: &Url, challenge: &BearerChallenge, issuer: &str) -> bool {
        match discover_resource(&self.http, server, challenge.resource_metadata.as_deref()).await {
            Ok(Some(resource)) => resource.authorization_servers.iter().any(|i| i == issuer),
            // The 2025-03-26 fallback: the server's origin.
            Ok(None) => server.origin().ascii_serialization() == issuer,
            Err(_) => false,
        }
    }

    /// Discovery, client id, the user's approval and the code's exchange: a new token.
    async fn full_authorization(
        &self,
        state: &mut OAuthState,
        server: &Url,
        challenge: &BearerChallenge,
        refused: Option<u16>,
    ) -> Result<(), ClientError> {
        let resource =
            match discover_resource(&self.http, server, challenge.resource_metadata.as_deref()).await? {
                Some(resource) => resource,
                None => {
                    // No protected resource metadata: the 2025-03-26 revision's authorization server
                    // at the server's origin.
                    tracing::debug!(%server, "no protected resource metadata; trying the server's origin");
                    ResourceMetadata {
                        resource: canonical(server),
                        authorization_servers: vec![server.origin().ascii_serialization()],
                        scopes_supported: None,
                    }
                }
            };
        // The authorization server: the one in use if still named, else the first.
        let current =
            state.token.as_ref().and_then(|t| t.issuer.clone()).or_else(|| {
                state.issuers.keys().find(|i| resource.authorization_servers.contains(i)).cloned()
            });
        let issuer = match current.filter(|i| resource.authorization_servers.contains(i)) {
            Some(issuer) => issuer,
            None => resource.authorization_servers[0].clone(),
        };
        if state.token.as_ref().is_some_and(|t| t.issuer.as_deref() != Some(issuer.as_str())) {
            // A token of another authorization server is of no use here.
            state.token = None;
        }
        let metadata = match state.issuers.get(&issuer) {
            Some(metadata) => metadata.clone(),
            None => {
                let metadata = Arc::new(discover_issuer(&self.http, &issuer).await?);
                state.issuers.insert(issuer.clone(), metadata.clone());
                metadata
            }
        };
        // PKCE is required, with S256 (2025-11-25 and 2026-07-28: refuse without it).
        let s256 =
            metadata.code_challenge_methods_supported.as_ref().is_some_and(|m| m.iter().any(|m| m == "S256"));
        if !s256 {
            return Err(auth_error(format!(
                "the authorization server {issuer} does not offer PKCE with S256 \
                 (code_challenge_methods_supported)"
            )));
        }
        let Some(authorization_endpoint) = metadata.authorization_endpoint.clone() else {
            return Err(auth_error(format!(
                "the authorization server {issuer} has no authorization_endpoint"
            )));
        };

        // The scopes: the challenge's, else the resource's `scopes_supported`, else none; with
        // those asked before on a re-authorization.
        let wanted =
            challenge.scope.clone().or_else(|| resource.scopes_supported.clone()).unwrap_or_default();
        let asked = if refused.is_some() { union(&state.asked, &wanted) } else { wanted };
        if refused == Some(403) {
            let key = {
                let mut sorted = asked.clone();
                sorted.sort();
                sorted.join(" ")
            };
            let count = state.step_ups.entry(key).or_default();
            *count += 1;
            if *count > self.config.max_step_ups {
                return Err(auth_error(format!(
                    "the server still asks for more scopes after {} re-authorizations for {:?}{}",
                    self.config.max_step_ups,
                    asked.join(" "),
                    described(challenge)
                )));
            }
        }
        let mut scopes: Vec<String> = asked.clone();
        if !metadata.supports_scope("offline_access") {
            scopes.retain(|s| s != "offline_access");
        } else if self.config.offline_access
            && !scopes.is_empty()
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".to_owned());
        }

        let client = self.client_for(state, &metadata).await?;
        state.resource = Some(resource.resource.clone());

        // The authorization request (PKCE S256, state, resource).
        let verifier = random_value()?;
        let expected_state = random_value()?;
        let mut url = authorization_endpoint;
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &client.id)
                .append_pair("redirect_uri", &self.config.redirect_uri)
                .append_pair("code_challenge", &code_challenge(&verifier))
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &expected_state);
            if !scopes.is_empty() {
                query.append_pair("scope", &scopes.join(" "));
            }
            query.append_pair("resource", &resource.resource);
        }
        tracing::debug!(%issuer, scope = scopes.join(" "), "asking the user to authorize");
        let callback = self.config.user_agent.authorize(url.as_str(), &self.config.redirect_uri).await?;

        // The authorization response: state, then iss (RFC 9207), then error or code.
        let params = response_params(&callback)?;
        if params.get("state") != Some(&expected_state) {
            return Err(auth_error("the authorization response's state is not the one sent: ignored"));
        }
        match params.get("iss") {
            Some(iss) if iss != &metadata.issuer => {
                return Err(auth_error(format!(
                    "the authorization response comes from the issuer {:?}, not {:?} (RFC 9207): ignored",
                    printable(iss),
                    metadata.issuer
                )));
            }
            None if metadata.iss_parameter_supported => {
                return Err(auth_error(format!(
                    "the authorization response has no iss though {} says it sends one (RFC 9207): ignored",
                    metadata.issuer
                )));
            }
            _ => {}
        }
        if let Some(error) = params.get("error") {
            let description =
                params.get("error_description").map(|d| format!(" ({})", printable(d))).unwrap_or_default();
            return Err(auth_error(format!(
                "the authorization was refused: {}{description}",
                printable(error)
            )));
        }
        let Some(code) = params.get("code") else {
            return Err(auth_error("the authorization response has no code"));
        };

        // The code's exchange.
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.clone()),
            ("redirect_uri", self.config.redirect_uri.clone()),
            ("code_verifier", verifier),
            ("resource", resource.resource.clone()),
        ];
        let body = token_request(&self.http, &metadata.token_endpoint, Some(&metadata.issuer), &client, form)
            .await?;
        let token = read_token(&body, Some(&issuer), &scopes, None)?;
        tracing::debug!(%issuer, refresh = token.refresh.is_some(), "authorized");
        state.token = Some(token);
        state.asked = asked.into_iter().filter(|s| s != "offline_access").collect();
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// The client id at the authorization server `metadata`: pre-registered, else the Client
    /// ID Metadata Document URL, else dynamic registration.
    async fn client_for(
        &self,
        state: &mut OAuthState,
        metadata: &IssuerMetadata,
    ) -> Result<ClientId, ClientError> {
        let issuer = &metadata.issuer;
        if let Some(client) = state.clients.get(issuer) {
            return Ok(client.clone());
        }
        let supported = metadata.token_endpoint_auth_methods_supported.as_deref();
        if let Some(pre) = self.config.pre_registered.as_ref().filter(|p| !p.id.is_empty()) {
            let bound = pre.issuer.as_ref().or(state.pre_registered_issuer.as_ref());
            match bound {
                Some(bound) if bound != issuer => {
                    tracing::debug!(%issuer, %bound, "the pre-registered client is for another server");
                }
                _ => {
                    state.pre_registered_issuer = Some(issuer.clone());
                    let method = pre
                        .method
                        .unwrap_or_else(|| ClientAuthMethod::for_secret(supported, pre.secret.is_some()));
                    let client =
                        ClientId { id: pre.id.clone(), secret: pre.secret.clone(), method, signer: None };
                    state.clients.insert(issuer.clone(), client.clone());
                    return Ok(client);
                }
            }
        }
        if let Some(url) = &self.config.client_metadata_url
            && metadata.client_id_metadata_document_supported
        {
            let parsed = Url::parse(url)
                .map_err(|e| auth_error(format!("the client metadata URL is not a URL: {e}")))?;
            if parsed.scheme() != "https" || parsed.path().len() <= 1 {
                return Err(auth_error(format!("the client metadata URL {url} must be https, with a path")));
            }
            let client =
                ClientId { id: url.clone(), secret: None, method: ClientAuthMethod::None, signer: None };
            state.clients.insert(issuer.clone(), client.clone());
            return Ok(client);
        }
        let Some(endpoint) = &metadata.registration_endpoint else {
            return Err(auth_error(format!(
                "no client id for the authorization server {issuer}: it offers no registration, \
                 and no pre-registered client (OAuth::client_id) is configured for it"
            )));
        };
        let client = self.register(metadata, endpoint).await?;
        state.clients.insert(issuer.clone(), client.clone());
        Ok(client)
    }

    /// Dynamic client registration (RFC 7591).
    async fn register(&self, metadata: &IssuerMetadata, endpoint: &Url) -> Result<ClientId, ClientError> {
        let supported = metadata.token_endpoint_auth_methods_supported.as_deref();
        let offers = |m: &str| supported.is_some_and(|s| s.iter().any(|x| x == m));
        let asked = if supported.is_none() || offers("none") {
            ClientAuthMethod::None
        } else if offers("client_secret_basic") {
            ClientAuthMethod::ClientSecretBasic
        } else if offers("client_secret_post") {
            ClientAuthMethod::ClientSecretPost
        } else {
            ClientAuthMethod::None
        };
        let native = Url::parse(&self.config.redirect_uri)
            .map(|u| u.scheme() != "https" || is_loopback(&u))
            .unwrap_or(true);
        let body = json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": asked.as_str(),
            "application_type": if native { "native" } else { "web" },
        });
        let request = self
            .http
            .client
            .post(endpoint.clone())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        let (status, answer) = self.http.send(request).await?;
        if !status.is_success() {
            return Err(auth_error(format!(
                "the registration endpoint {endpoint} refused the client: {}",
                oauth_error(status, &answer)
            )));
        }
        let answer: Value = serde_json::from_slice(&answer).map_err(|e| {
            auth_error(format!("the registration endpoint {endpoint} did not send JSON: {e}"))
        })?;
        let Some(id) = answer["client_id"].as_str().filter(|id| !id.is_empty()) else {
            return Err(auth_error(format!("the registration endpoint {endpoint} gave no client_id")));
        };
        let secret = answer["client_secret"].as_str().filter(|s| !s.is_empty()).map(str::to_owned);
        let method = answer["token_endpoint_auth_method"]
            .as_str()
            .and_then(ClientAuthMethod::parse)
            .filter(|m| *m == ClientAuthMethod::None || secret.is_some())
            .unwrap_or_else(|| ClientAuthMethod::for_secret(supported, secret.is_some()));
        tracing::debug!(client_id = id, method = method.as_str(), "registered");
        Ok(ClientId { id: id.to_owned(), secret, method, signer: None })
    }
}

/// `; error_description` of a challenge, for messages.
fn described(challenge: &BearerChallenge) -> String {
    match (&challenge.error, &challenge.error_description) {
        (_, Some(description)) => format!("; {}", printable(description)),
        (Some(error), None) => format!("; {}", printable(error)),
        (None, None) => String::new(),
    }
}

impl Authenticator for OAuth {
    fn authorization<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Option<String>, ClientError>> {
        Box::pin(self.header(url))
    }

    fn refused<'a>(
        &'a self,
        url: &'a str,
        status: u16,
        challenge: Option<&'a str>,
    ) -> BoxFuture<'a, Result<bool, ClientError>> {
        Box::pin(self.on_refusal(url, status, challenge))
    }
}

// ---------------------------------------------------------------------------------------------
// ClientCredentials: the client credentials grant.

/// The client credentials grant (OAuth 2.1 section 4.2), for a client acting on its own behalf:
/// its id and secret buy an access token at the token endpoint (given, or discovered from the
/// server's protected resource metadata and its authorization server's metadata), for the
/// server (`resource`, RFC 8707), kept until shortly before it expires; a refusal buys another
/// (with the challenged scopes added, a few times at most for the same scopes).
pub struct ClientCredentials {
    client: ClientId,
    method: Option<ClientAuthMethod>,
    token_endpoint: Option<String>,
    scopes: Vec<String>,
    resource: Option<String>,
    max_step_ups: u32,
    http: Http,
    state: Mutex<CredentialsState>,
    generation: AtomicU64,
}

#[derive(Default)]
struct CredentialsState {
    /// The token endpoint, how to authenticate there, and its issuer.
    endpoint: Option<(Url, ClientAuthMethod, Option<String>)>,
    /// The resource the tokens are for.
    resource: Option<String>,
    scopes_supported: Option<Vec<String>>,
    token: Option<Token>,
    asked: Option<Vec<String>>,
    step_ups: HashMap<String, u32>,
    unproven: u32,
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client", &self.client)
            .field("token_endpoint", &self.token_endpoint)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl ClientCredentials {
    /// A client with this id and secret; the token endpoint and how to authenticate there
    /// (`client_secret_basic`, else `client_secret_post`, as the authorization server offers)
    /// are discovered from the MCP server's metadata unless given.
    pub fn new(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        ClientCredentials {
            client: ClientId {
                id: client_id.into(),
                secret: Some(client_secret.into()),
                method: ClientAuthMethod::ClientSecretBasic,
                signer: None,
            },
            method: None,
            token_endpoint: None,
            scopes: Vec::new(),
            resource: None,
            max_step_ups: DEFAULT_MAX_STEP_UPS,
            http: Http::new(),
            state: Mutex::new(CredentialsState::default()),
            generation: AtomicU64::new(0),
        }
    }

    /// A client authenticating with a JWT it signs (`private_key_jwt`, RFC 7523) instead of a
    /// secret: `sign` gets the assertion's claims (`iss` and `sub` the client id, `aud` the
    /// authorization server's issuer, else the token endpoint, `iat`, `exp` five minutes on, a
    /// random `jti`) and returns the signed JWT (e.g. with `jsonwebtoken`, ES256 or RS256).
    pub fn private_key_jwt(
        client_id: impl Into<String>,
        sign: impl Fn(&Value) -> Result<String, ClientError> + Send + Sync + 'static,
    ) -> Self {
        let mut credentials = ClientCredentials::new(client_id, "");
        credentials.client.secret = None;
        credentials.client.signer = Some(Arc::new(sign));
        credentials.method = Some(ClientAuthMethod::PrivateKeyJwt);
        credentials
    }

    /// The token endpoint (no discovery: the `resource` is then the MCP server's URL unless
    /// [`resource`](Self::resource) says otherwise).
    pub fn token_endpoint(mut self, url: impl Into<String>) -> Self {
        self.token_endpoint = Some(url.into());
        self
    }

    /// How to authenticate at the token endpoint with the secret (`client_secret_basic` or
    /// `client_secret_post`; default: as the authorization server offers, Basic first).
    pub fn auth_method(mut self, method: ClientAuthMethod) -> Self {
        self.method = Some(method);
        self
    }

    /// The scopes to ask for (default: the protected resource's `scopes_supported`, if it was
    /// discovered, else none: the parameter is left out).
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The `resource` to ask tokens for (default: the protected resource metadata's `resource`,
    /// else the MCP server's URL).
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// How many times a 403 `insufficient_scope` may buy a token with more scopes for the same
    /// scopes before the refusal is final (default 2; 0: never).
    pub fn max_step_ups(mut self, max: u32) -> Self {
        self.max_step_ups = max;
        self
    }

    /// Allows plain `http` endpoints on any host (default: `https`, or `http` to a loopback
    /// host).
    pub fn allow_http(mut self, allow: bool) -> Self {
        self.http.allow_http = allow;
        self
    }

    /// The HTTP client of the discovery and token requests.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http.client = client;
        self
    }

    /// The token endpoint, found once (or again after a refusal naming the metadata).
    async fn endpoint(
        &self,
        state: &mut CredentialsState,
        server: &Url,
        metadata_url: Option<&str>,
    ) -> Result<(), ClientError> {
        if let Some(url) = &self.token_endpoint {
            if state.endpoint.is_none() {
                let url = self.http.check(url, "the token endpoint")?;
                let method = self.method.unwrap_or(ClientAuthMethod::ClientSecretBasic);
                state.endpoint = Some((url, method, None));
                state.resource = Some(self.resource.clone().unwrap_or_else(|| canonical(server)));
            }
            return Ok(());
        }
        if state.endpoint.is_some() && metadata_url.is_none() {
            return Ok(());
        }
        let Some(resource) = discover_resource(&self.http, server, metadata_url).await? else {
            return Err(auth_error(format!(
                "{server} publishes no protected resource metadata: give the token endpoint \
                 (ClientCredentials::token_endpoint)"
            )));
        };
        let current = state.endpoint.as_ref().and_then(|(_, _, issuer)| issuer.clone());
        let issuer = current
            .filter(|i| resource.authorization_servers.contains(i))
            .unwrap_or_else(|| resource.authorization_servers[0].clone());
        let metadata = discover_issuer(&self.http, &issuer).await?;
        let method = self.method.unwrap_or_else(|| {
            ClientAuthMethod::for_secret(metadata.token_endpoint_auth_methods_supported.as_deref(), true)
        });
        if state.endpoint.as_ref().is_some_and(|(_, _, i)| i.as_deref() != Some(issuer.as_str())) {
            state.token = None;
        }
        state.endpoint = Some((metadata.token_endpoint, method, Some(issuer)));
        state.resource = Some(self.resource.clone().unwrap_or(resource.resource));
        state.scopes_supported = resource.scopes_supported;
        Ok(())
    }

    /// Buys a token with `scopes` (`None`: the configured ones, else `scopes_supported`).
    async fn fetch(
        &self,
        state: &mut CredentialsState,
        scopes: Option<Vec<String>>,
    ) -> Result<(), ClientError> {
        let Some((endpoint, method, issuer)) = state.endpoint.clone() else {
            return Err(auth_error("no token endpoint"));
        };
        let scopes = scopes.or_else(|| state.asked.clone()).unwrap_or_else(|| {
            if self.scopes.is_empty() {
                state.scopes_supported.clone().unwrap_or_default()
            } else {
                self.scopes.clone()
            }
        });
        let mut form = vec![("grant_type", "client_credentials".to_owned())];
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        if let Some(resource) = &state.resource {
            form.push(("resource", resource.clone()));
        }
        let client = ClientId { method, ..self.client.clone() };
        let body = token_request(&self.http, &endpoint, issuer.as_deref(), &client, form).await?;
        // A refresh token is of no use here: the credentials buy another.
        let mut token = read_token(&body, issuer.as_deref(), &scopes, None)?;
        token.refresh = None;
        state.token = Some(token);
        state.asked = Some(scopes);
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    async fn header(&self, url: &str) -> Result<Option<String>, ClientError> {
        let server =
            Url::parse(url).map_err(|e| auth_error(format!("the server URL {url:?} is not a URL: {e}")))?;
        let mut state = self.state.lock().await;
        if state.resource.as_deref().is_some_and(|r| !resource_covers(r, &server))
            && self.token_endpoint.is_none()
        {
            return Ok(None);
        }
        if !state.token.as_ref().is_some_and(Token::fresh) {
            self.endpoint(&mut state, &server, None).await?;
            self.fetch(&mut state, None).await?;
        }
        Ok(state.token.as_mut().map(Token::header))
    }

    async fn on_refusal(&self, url: &str, status: u16, challenge: Option<&str>) -> Result<bool, ClientError> {
        let server =
            Url::parse(url).map_err(|e| auth_error(format!("the server URL {url:?} is not a URL: {e}")))?;
        let seen = self.generation.load(Ordering::SeqCst);
        let mut state = self.state.lock().await;
        if self.generation.load(Ordering::SeqCst) != seen {
            return Ok(true);
        }
        let challenge = BearerChallenge::parse(challenge);
        if status == 403 && !challenge.insufficient_scope() {
            return Err(auth_error(format!(
                "the server refused the request (HTTP 403{})",
                described(&challenge)
            )));
        }
        if let Some(token) = state.token.take() {
            if token.handouts <= 2 {
                state.unproven += 1;
            } else {
                state.unproven = 0;
            }
        }
        if status != 403 && state.unproven > MAX_UNPROVEN {
            state.unproven = 0;
            return Err(auth_error(format!(
                "the server refused every new token ({} in a row{})",
                MAX_UNPROVEN + 1,
                described(&challenge)
            )));
        }
        self.endpoint(&mut state, &server, challenge.resource_metadata.as_deref()).await?;
        let before = state.asked.clone().unwrap_or_else(|| self.scopes.clone());
        let scopes = union(&before, challenge.scope.as_deref().unwrap_or_default());
        if status == 403 {
            let mut sorted = scopes.clone();
            sorted.sort();
            let count = state.step_ups.entry(sorted.join(" ")).or_default();
            *count += 1;
            if *count > self.max_step_ups {
                return Err(auth_error(format!(
                    "the server still asks for more scopes after {} new tokens for {:?}{}",
                    self.max_step_ups,
                    scopes.join(" "),
                    described(&challenge)
                )));
            }
        }
        let scopes = if scopes.is_empty() { None } else { Some(scopes) };
        self.fetch(&mut state, scopes).await?;
        Ok(true)
    }
}

impl Authenticator for ClientCredentials {
    fn authorization<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Option<String>, ClientError>> {
        Box::pin(self.header(url))
    }

    fn refused<'a>(
        &'a self,
        url: &'a str,
        status: u16,
        challenge: Option<&'a str>,
    ) -> BoxFuture<'a, Result<bool, ClientError>> {
        Box::pin(self.on_refusal(url, status, challenge))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256_matches_rfc_7636_appendix_b() {
        assert_eq!(
            code_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let verifier = random_value().unwrap();
        assert_eq!(verifier.len(), 43);
        assert!(verifier.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_ne!(verifier, random_value().unwrap());
    }

    #[test]
    fn challenges_are_parsed() {
        let c = BearerChallenge::parse(Some(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/.well-known/oauth-protected-resource/mcp", error_description="needs \"a, b\"""#,
        ));
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://x/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.error_description.as_deref(), Some(r#"needs "a, b""#));
        // Several challenges: the Bearer one counts; names are case-insensitive.
        let c =
            BearerChallenge::parse(Some(r#"Basic realm="x", DPoP algs="ES256", bearer Scope=read, realm=y"#));
        assert_eq!(c.scope, Some(vec!["read".to_owned()]));
        let all = parse_challenges(r#"Basic realm="x", DPoP algs="ES256", bearer Scope=read, realm=y"#);
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].params, vec![("realm".to_owned(), "x".to_owned())]);
        assert_eq!(all[2].params.len(), 2);
        // A bare scheme, an empty scope, garbage.
        assert_eq!(BearerChallenge::parse(Some("Bearer")), BearerChallenge::default());
        assert_eq!(BearerChallenge::parse(Some(r#"Bearer scope="""#)).scope, None);
        assert_eq!(BearerChallenge::parse(Some("=,=\"")), BearerChallenge::default());
        assert_eq!(BearerChallenge::parse(None), BearerChallenge::default());
    }

    #[test]
    fn well_known_urls() {
        let urls = |s: &str| {
            resource_metadata_urls(&Url::parse(s).unwrap()).iter().map(Url::to_string).collect::<Vec<_>>()
        };
        assert_eq!(
            urls("https://example.com/public/mcp"),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            urls("https://example.com/"),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            urls("https://example.com:8443/mcp/"),
            [
                "https://example.com:8443/.well-known/oauth-protected-resource/mcp",
                "https://example.com:8443/.well-known/oauth-protected-resource"
            ]
        );
        let issuer = |s: &str| {
            issuer_metadata_urls(&Url::parse(s).unwrap()).iter().map(Url::to_string).collect::<Vec<_>>()
        };
        assert_eq!(
            issuer("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            issuer("https://auth.example.com"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn resources_cover_their_servers_only() {
        let server = Url::parse("https://mcp.example.com/api/mcp").unwrap();
        assert!(resource_covers("https://mcp.example.com/api/mcp", &server));
        assert!(resource_covers("https://mcp.example.com", &server));
        assert!(resource_covers("https://MCP.example.com:443/api/", &server));
        assert!(!resource_covers("https://mcp.example.com/ap", &server));
        assert!(!resource_covers("https://mcp.example.com/api/mcp/v2", &server));
        assert!(!resource_covers("https://evil.example.com/api/mcp", &server));
        assert!(!resource_covers("http://mcp.example.com/api/mcp", &server));
        assert!(!resource_covers("https://mcp.example.com:8443/api/mcp", &server));
        assert!(!resource_covers("https://mcp.example.com/api/mcp#x", &server));
        assert!(!resource_covers("not a url", &server));
        assert_eq!(canonical(&Url::parse("https://mcp.example.com/#x").unwrap()), "https://mcp.example.com");
        assert_eq!(
            canonical(&Url::parse("https://mcp.example.com/mcp").unwrap()),
            "https://mcp.example.com/mcp"
        );
    }

    #[test]
    fn client_authentication_methods() {
        let basic = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(ClientAuthMethod::for_secret(None, true), ClientAuthMethod::ClientSecretBasic);
        assert_eq!(ClientAuthMethod::for_secret(None, false), ClientAuthMethod::None);
        assert_eq!(
            ClientAuthMethod::for_secret(Some(&basic(&["client_secret_post"])), true),
            ClientAuthMethod::ClientSecretPost
        );
        assert_eq!(
            ClientAuthMethod::for_secret(Some(&basic(&["client_secret_post", "client_secret_basic"])), true),
            ClientAuthMethod::ClientSecretBasic
        );
        assert_eq!(ClientAuthMethod::for_secret(Some(&basic(&["none"])), true), ClientAuthMethod::None);
        assert_eq!(form_encode("a b:c/é"), "a+b%3Ac%2F%C3%A9");
    }

    #[test]
    fn authorization_responses() {
        let p = response_params(
            "http://127.0.0.1:1/callback?code=a%2Bb&state=s&iss=https%3A%2F%2Fas.example.com%2F",
        )
        .unwrap();
        assert_eq!(p["code"], "a+b");
        assert_eq!(p["iss"], "https://as.example.com/");
        let p = response_params("?code=x&state=y").unwrap();
        assert_eq!(p["state"], "y");
        assert!(response_params("http://h/cb?state=a&state=b").is_err());
    }

    #[test]
    fn token_answers() {
        let t = read_token(
            &json!({"access_token": "t", "token_type": "bearer", "expires_in": 3600}),
            None,
            &[],
            None,
        )
        .unwrap();
        assert!(t.fresh());
        assert!(t.refresh.is_none());
        let t = read_token(
            &json!({"access_token": "t", "expires_in": "0", "refresh_token": "r", "scope": "a b"}),
            None,
            &[],
            None,
        )
        .unwrap();
        assert!(!t.fresh());
        assert_eq!(t.granted, ["a", "b"]);
        assert!(read_token(&json!({"access_token": "t", "token_type": "DPoP"}), None, &[], None).is_err());
        assert!(read_token(&json!({"token_type": "Bearer"}), None, &[], None).is_err());
        let t = read_token(&json!({"access_token": "t"}), None, &["x".into()], Some("old")).unwrap();
        assert_eq!(t.refresh.as_deref(), Some("old"));
        assert_eq!(t.granted, ["x"]);
        assert!(t.renew_at.is_none());
    }
}
