//! The client's OAuth (feature `client`): `OAuth` (authorization code + PKCE) and
//! `ClientCredentials`, as `Authenticator`s driven directly (`authorization`, `refused`) against
//! a mock authorization server and protected resource served here with axum, modelled on the
//! MCP conformance suite's client scenarios (`auth/*`): discovery order and fallbacks, PKCE,
//! client registration (dynamic, Client ID Metadata Document, pre-registered), scope choice,
//! step-up and its limit, token endpoint authentication, refresh, issuer checks (metadata and
//! RFC 9207 `iss`), resource mismatch, authorization server migration, client credentials.
//! (The suite itself runs examples/conformance_client.rs: scripts/interop.sh, section 1.)

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Response, StatusCode, Uri, header};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use mcp_tools::client::{
    Authenticator, ClientAuthMethod, ClientCredentials, ClientError, DEFAULT_REDIRECT_URI, Headless,
    Loopback, OAuth, UserAgent,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

// ---------------------------------------------------------------------------------------------
// Form encoding (no URL crate here).

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

fn pairs(s: &str) -> HashMap<String, String> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// What the mock servers saw.

#[derive(Clone, Debug, Default)]
struct Hit {
    method: String,
    path: String,
    query: HashMap<String, String>,
    form: HashMap<String, String>,
    json: Value,
    authorization: Option<String>,
}

type Log = Arc<Mutex<Vec<Hit>>>;

fn hits(log: &Log) -> Vec<Hit> {
    log.lock().unwrap().clone()
}

fn hits_at(log: &Log, path_end: &str) -> Vec<Hit> {
    hits(log).into_iter().filter(|h| h.path.ends_with(path_end)).collect()
}

fn paths(log: &Log) -> Vec<String> {
    hits(log).into_iter().map(|h| format!("{} {}", h.method, h.path)).collect()
}

async fn listen() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://localhost:{}", listener.local_addr().unwrap().port());
    (listener, url)
}

fn json_response(status: StatusCode, value: Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(value.to_string()))
        .unwrap()
}

fn not_found() -> Response<Body> {
    json_response(StatusCode::NOT_FOUND, json!({"error": "not_found"}))
}

/// Serves `handle` for every request, recording each in `log`.
fn serve<F>(listener: tokio::net::TcpListener, log: Log, handle: F)
where
    F: Fn(&Hit) -> Response<Body> + Send + Sync + 'static,
{
    let handle = Arc::new(handle);
    let app = Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
        let (handle, log) = (handle.clone(), log.clone());
        async move {
            let text = String::from_utf8_lossy(&body).into_owned();
            let hit = Hit {
                method: method.to_string(),
                path: uri.path().to_owned(),
                query: pairs(uri.query().unwrap_or_default()),
                form: if text.starts_with('{') { HashMap::new() } else { pairs(&text) },
                json: serde_json::from_str(&text).unwrap_or(Value::Null),
                authorization: headers.get(header::AUTHORIZATION).map(|v| v.to_str().unwrap().to_owned()),
            };
            log.lock().unwrap().push(hit.clone());
            handle(&hit)
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
}

// ---------------------------------------------------------------------------------------------
// A mock authorization server, after the conformance suite's.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Iss {
    Correct,
    Wrong,
    Omit,
    TrailingSlash,
}

#[derive(Clone)]
struct AsConfig {
    /// The endpoints' path prefix (and the issuer's path).
    prefix: &'static str,
    /// Where the metadata is served (default: the RFC 8414 URL of the issuer).
    metadata_paths: Vec<String>,
    /// The metadata's `issuer` (default: the server's URL and prefix).
    issuer: Option<String>,
    auth_methods: Vec<&'static str>,
    registration: bool,
    cimd: Option<bool>,
    pkce: Option<Vec<&'static str>>,
    iss_supported: Option<bool>,
    iss: Iss,
    scopes_supported: Option<Vec<&'static str>>,
    grant_types: Vec<&'static str>,
    refresh_tokens: bool,
    expires_in: u64,
    /// The registration's answer: the method it names (default: the one asked for).
    registered_method: Option<&'static str>,
    client_prefix: &'static str,
    /// Shows a page instead of redirecting (a user is needed).
    interactive: bool,
    /// Client credentials: the accepted id and secret.
    credentials: Option<(&'static str, &'static str)>,
    refuse_registration: bool,
    /// Access tokens are JWTs (RFC 9068) signed with the test key `rsa-1`, for the `resource`
    /// asked; the key set is served at `/jwks`.
    jwt: bool,
}

impl Default for AsConfig {
    fn default() -> Self {
        AsConfig {
            prefix: "",
            metadata_paths: Vec::new(),
            issuer: None,
            auth_methods: vec!["none"],
            registration: true,
            cimd: None,
            pkce: Some(vec!["S256"]),
            iss_supported: Some(true),
            iss: Iss::Correct,
            scopes_supported: None,
            grant_types: vec!["authorization_code", "refresh_token"],
            refresh_tokens: false,
            expires_in: 3600,
            registered_method: None,
            client_prefix: "dcr-client",
            interactive: false,
            credentials: None,
            refuse_registration: false,
            jwt: false,
        }
    }
}

/// A client assertion signed with the test key `ec-1`, from `id`, for `audience`.
fn assertion_is_valid(assertion: &str, id: &str, audience: &str) -> bool {
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_slice(&test_key("ec-1.jwk.json")).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&[audience]);
    validation.set_issuer(&[id]);
    validation.sub = Some(id.to_owned());
    validation.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
    let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
    jsonwebtoken::decode::<Value>(assertion, &key, &validation).is_ok_and(|t| t.claims["jti"].is_string())
}

fn test_key(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/auth/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

struct Grant {
    challenge: String,
    scope: Option<String>,
    redirect_uri: String,
    client_id: String,
}

struct MockAs {
    /// The issuer (URL and prefix).
    issuer: String,
    log: Log,
    /// Refresh tokens are refused.
    refuse_refresh: Arc<std::sync::atomic::AtomicBool>,
}

async fn mock_as(config: AsConfig) -> MockAs {
    let (listener, base) = listen().await;
    let log = Log::default();
    let issuer = format!("{base}{}", config.prefix);
    let refuse_refresh = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let metadata_paths = if config.metadata_paths.is_empty() {
        let path = config.prefix;
        vec![format!("/.well-known/oauth-authorization-server{path}")]
    } else {
        config.metadata_paths.clone()
    };
    let grants: Arc<Mutex<HashMap<String, Grant>>> = Arc::default();
    let refresh: Arc<Mutex<HashMap<String, Option<String>>>> = Arc::default();
    let counter = Arc::new(AtomicUsize::new(0));
    let (me, refusing) = (issuer.clone(), refuse_refresh.clone());
    serve(listener, log.clone(), move |hit| {
        let c = &config;
        let prefix = c.prefix;
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        let issuer = c.issuer.clone().unwrap_or_else(|| me.clone());
        if hit.method == "GET" && metadata_paths.contains(&hit.path) {
            let mut m = json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{base}{prefix}/authorize"),
                "token_endpoint": format!("{base}{prefix}/token"),
                "response_types_supported": ["code"],
                "grant_types_supported": c.grant_types,
                "token_endpoint_auth_methods_supported": c.auth_methods,
            });
            if c.registration {
                m["registration_endpoint"] = json!(format!("{base}{prefix}/register"));
            }
            if let Some(p) = &c.pkce {
                m["code_challenge_methods_supported"] = json!(p);
            }
            if let Some(s) = c.iss_supported {
                m["authorization_response_iss_parameter_supported"] = json!(s);
            }
            if let Some(s) = &c.scopes_supported {
                m["scopes_supported"] = json!(s);
            }
            if let Some(s) = c.cimd {
                m["client_id_metadata_document_supported"] = json!(s);
            }
            if c.jwt {
                m["jwks_uri"] = json!(format!("{base}/jwks"));
            }
            return json_response(StatusCode::OK, m);
        }
        if hit.method == "GET" && hit.path == "/jwks" {
            let key: Value = serde_json::from_slice(&test_key("rsa-1.jwk.json")).unwrap();
            return json_response(StatusCode::OK, json!({"keys": [key]}));
        }
        if hit.method == "GET" && hit.path == format!("{prefix}/authorize") {
            if c.interactive {
                return Response::new(Body::from("<form>log in</form>"));
            }
            let q = &hit.query;
            let code = format!("code-{n}");
            grants.lock().unwrap().insert(
                code.clone(),
                Grant {
                    challenge: q["code_challenge"].clone(),
                    scope: q.get("scope").cloned(),
                    redirect_uri: q["redirect_uri"].clone(),
                    client_id: q["client_id"].clone(),
                },
            );
            let mut location = format!("{}?code={code}", q["redirect_uri"]);
            if let Some(state) = q.get("state") {
                location.push_str(&format!("&state={}", encode(state)));
            }
            match c.iss {
                Iss::Correct => location.push_str(&format!("&iss={}", encode(&issuer))),
                Iss::Wrong => location.push_str("&iss=https%3A%2F%2Fevil.example.com"),
                Iss::TrailingSlash => location.push_str(&format!("&iss={}", encode(&format!("{issuer}/")))),
                Iss::Omit => {}
            }
            return Response::builder()
                .status(302)
                .header(header::LOCATION, location)
                .body(Body::empty())
                .unwrap();
        }
        if hit.method == "POST" && hit.path == format!("{prefix}/register") && c.registration {
            if c.refuse_registration {
                return json_response(
                    StatusCode::BAD_REQUEST,
                    json!({"error": "invalid_redirect_uri", "error_description": "no"}),
                );
            }
            let asked = hit.json["token_endpoint_auth_method"].as_str().unwrap_or("client_secret_basic");
            let method = c.registered_method.unwrap_or(asked);
            let mut answer = json!({
                "client_id": format!("{}-{n}", c.client_prefix),
                "client_name": hit.json["client_name"],
                "redirect_uris": hit.json["redirect_uris"],
                "token_endpoint_auth_method": method,
            });
            if method != "none" {
                answer["client_secret"] = json!(format!("secret-{n}"));
            }
            return json_response(StatusCode::CREATED, answer);
        }
        if hit.method == "POST" && hit.path == format!("{prefix}/token") {
            let f = &hit.form;
            let error = |e: &str| json_response(StatusCode::BAD_REQUEST, json!({"error": e}));
            let scope = match f.get("grant_type").map(String::as_str) {
                Some("authorization_code") => {
                    let Some(grant) = grants.lock().unwrap().remove(&f["code"]) else {
                        return error("invalid_grant");
                    };
                    let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(f["code_verifier"].as_bytes()));
                    if computed != grant.challenge || f.get("redirect_uri") != Some(&grant.redirect_uri) {
                        return error("invalid_grant");
                    }
                    let _ = grant.client_id;
                    grant.scope
                }
                Some("refresh_token") => {
                    if refusing.load(Ordering::SeqCst) {
                        return error("invalid_grant");
                    }
                    match refresh.lock().unwrap().remove(&f["refresh_token"]) {
                        Some(scope) => scope,
                        None => return error("invalid_grant"),
                    }
                }
                Some("client_credentials") => {
                    let (id, secret) = c.credentials.unwrap();
                    let basic = format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")));
                    let ok = if let Some(assertion) = f.get("client_assertion") {
                        f["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
                            && assertion_is_valid(assertion, id, &issuer)
                    } else {
                        hit.authorization.as_deref() == Some(basic.as_str())
                            || (f.get("client_id").map(String::as_str) == Some(id)
                                && f.get("client_secret").map(String::as_str) == Some(secret))
                    };
                    if !ok {
                        return json_response(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
                    }
                    f.get("scope").cloned()
                }
                _ => return error("unsupported_grant_type"),
            };
            let access = if c.jwt {
                let key = jsonwebtoken::EncodingKey::from_rsa_pem(&test_key("rsa-1.pem")).unwrap();
                let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
                header.kid = Some("rsa-1".into());
                header.typ = Some("at+jwt".into());
                let now =
                    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
                let claims = json!({"iss": issuer, "aud": f["resource"], "sub": "user-1", "client_id": "c",
                    "exp": now + c.expires_in, "iat": now, "scope": scope.clone().unwrap_or_default()});
                jsonwebtoken::encode(&header, &claims, &key).unwrap()
            } else {
                format!("at-{n}")
            };
            let mut answer =
                json!({"access_token": access, "token_type": "Bearer", "expires_in": c.expires_in});
            if let Some(scope) = &scope {
                answer["scope"] = json!(scope);
            }
            if c.refresh_tokens {
                let token = format!("rt-{n}");
                refresh.lock().unwrap().insert(token.clone(), scope);
                answer["refresh_token"] = json!(token);
            }
            return json_response(StatusCode::OK, answer);
        }
        not_found()
    });
    MockAs { issuer, log, refuse_refresh }
}

// ---------------------------------------------------------------------------------------------
// A mock protected resource: its metadata documents, which can change.

struct MockRs {
    base: String,
    log: Log,
    documents: Arc<Mutex<HashMap<String, Value>>>,
}

impl MockRs {
    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn set(&self, path: &str, document: Value) {
        self.documents.lock().unwrap().insert(path.to_owned(), document);
    }

    fn metadata_url(&self) -> String {
        format!("{}{PRM_PATH}", self.base)
    }

    /// A 401 challenge naming the metadata (and `extra` parameters).
    fn challenge(&self, extra: &str) -> String {
        let sep = if extra.is_empty() { "" } else { ", " };
        format!(r#"Bearer resource_metadata="{}"{sep}{extra}"#, self.metadata_url())
    }
}

const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

async fn mock_rs() -> MockRs {
    let (listener, base) = listen().await;
    let log = Log::default();
    let documents: Arc<Mutex<HashMap<String, Value>>> = Arc::default();
    let d = documents.clone();
    serve(listener, log.clone(), move |hit| match d.lock().unwrap().get(&hit.path) {
        Some(document) if hit.method == "GET" => json_response(StatusCode::OK, document.clone()),
        _ => not_found(),
    });
    MockRs { base, log, documents }
}

/// A resource at `/mcp` with its metadata at the path-aware well-known URL, naming `issuer`.
async fn resource_for(issuer: &str, scopes: Option<&[&str]>) -> MockRs {
    let rs = mock_rs().await;
    let mut document = json!({"resource": rs.url(), "authorization_servers": [issuer]});
    if let Some(scopes) = scopes {
        document["scopes_supported"] = json!(scopes);
    }
    rs.set(PRM_PATH, document);
    rs
}

async fn header(auth: &impl Authenticator, url: &str) -> Option<String> {
    auth.authorization(url).await.unwrap()
}

fn auth_error(result: Result<bool, ClientError>) -> String {
    match result {
        Err(ClientError::Unauthorized(message)) => message,
        other => panic!("expected an authorization error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Discovery (auth/metadata-default, var1, var2, var3).

/// auth/metadata-default (and token-endpoint-auth-none, scope-omitted-when-undefined,
/// iss-supported, the resource parameter): the metadata URL from the challenge; RFC 8414 at the
/// root; dynamic registration of a native public client asking for refresh tokens; PKCE S256,
/// state and resource in the authorization request; the code exchanged with its verifier and
/// the same resource.
#[tokio::test]
async fn metadata_default_full_flow() {
    let auth_server = mock_as(AsConfig::default()).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new().client_name("oauth-test");
    let url = rs.url();

    // No token before the server asks for one.
    assert_eq!(header(&oauth, &url).await, None);
    assert!(oauth.refused(&url, 401, Some(&rs.challenge(""))).await.unwrap());
    assert_eq!(header(&oauth, &url).await.as_deref(), Some("Bearer at-4"));
    // The token is cached.
    assert_eq!(header(&oauth, &url).await.as_deref(), Some("Bearer at-4"));

    // Only the challenge's metadata URL was read (never the root one).
    assert_eq!(paths(&rs.log), [format!("GET {PRM_PATH}")]);
    assert_eq!(
        paths(&auth_server.log),
        ["GET /.well-known/oauth-authorization-server", "POST /register", "GET /authorize", "POST /token"]
    );
    let register = &hits_at(&auth_server.log, "/register")[0].json;
    assert_eq!(register["client_name"], "oauth-test");
    assert_eq!(register["redirect_uris"], json!([DEFAULT_REDIRECT_URI]));
    assert_eq!(register["application_type"], "native");
    assert_eq!(register["token_endpoint_auth_method"], "none");
    assert!(register["grant_types"].as_array().unwrap().contains(&json!("refresh_token")));

    let authorize = &hits_at(&auth_server.log, "/authorize")[0].query;
    assert_eq!(authorize["response_type"], "code");
    assert_eq!(authorize["client_id"], "dcr-client-2");
    assert_eq!(authorize["redirect_uri"], DEFAULT_REDIRECT_URI);
    assert_eq!(authorize["code_challenge_method"], "S256");
    assert_eq!(authorize["code_challenge"].len(), 43);
    assert!(authorize["state"].len() >= 32);
    assert_eq!(authorize["resource"], url);
    assert!(!authorize.contains_key("scope"), "no scope is asked when none is defined");

    let token = &hits_at(&auth_server.log, "/token")[0];
    assert_eq!(token.form["grant_type"], "authorization_code");
    assert_eq!(token.form["code"], "code-3");
    assert_eq!(token.form["resource"], url);
    assert_eq!(token.form["client_id"], "dcr-client-2");
    assert_eq!(token.form["redirect_uri"], DEFAULT_REDIRECT_URI);
    assert!(!token.form.contains_key("client_secret"));
    assert_eq!(token.authorization, None);
    // The verifier matches the challenge (checked by the mock: it issued the token).
    let verifier = &token.form["code_verifier"];
    assert_eq!(URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())), authorize["code_challenge"]);
}

/// auth/metadata-var1: no metadata URL in the challenge: the path-aware well-known URL; the
/// authorization server only has OpenID Connect Discovery, tried after RFC 8414.
#[tokio::test]
async fn metadata_var1_well_known_and_openid_configuration() {
    let auth_server = mock_as(AsConfig {
        metadata_paths: vec!["/.well-known/openid-configuration".into()],
        ..AsConfig::default()
    })
    .await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new();
    assert!(oauth.refused(&rs.url(), 401, Some("Bearer")).await.unwrap());
    assert!(header(&oauth, &rs.url()).await.is_some());
    assert_eq!(paths(&rs.log), [format!("GET {PRM_PATH}")]);
    assert_eq!(
        paths(&auth_server.log)[..3],
        [
            "GET /.well-known/oauth-authorization-server",
            "GET /.well-known/openid-configuration",
            "POST /register"
        ]
    );
}

/// auth/metadata-var2: the metadata only at the root well-known URL (tried after the
/// path-aware one), naming the origin as the resource; an issuer with a path: RFC 8414 path
/// insertion, never the root metadata.
#[tokio::test]
async fn metadata_var2_root_resource_metadata_and_issuer_path() {
    let auth_server = mock_as(AsConfig { prefix: "/tenant1", ..AsConfig::default() }).await;
    let rs = mock_rs().await;
    rs.set(
        "/.well-known/oauth-protected-resource",
        json!({"resource": rs.base, "authorization_servers": [auth_server.issuer]}),
    );
    let oauth = OAuth::new();
    assert!(oauth.refused(&rs.url(), 401, None).await.unwrap());
    assert!(header(&oauth, &rs.url()).await.is_some());
    assert_eq!(
        paths(&rs.log),
        [format!("GET {PRM_PATH}"), "GET /.well-known/oauth-protected-resource".into()]
    );
    assert_eq!(
        paths(&auth_server.log),
        [
            "GET /.well-known/oauth-authorization-server/tenant1",
            "POST /tenant1/register",
            "GET /tenant1/authorize",
            "POST /tenant1/token"
        ]
    );
    // The resource asked for is the one the metadata names.
    assert_eq!(hits_at(&auth_server.log, "/authorize")[0].query["resource"], rs.base);
    assert_eq!(hits_at(&auth_server.log, "/token")[0].form["resource"], rs.base);
}

/// auth/metadata-var3: a custom metadata URL from the challenge; an issuer with a path whose
/// metadata is OpenID Connect's, appended: the three URLs in the specification's order.
#[tokio::test]
async fn metadata_var3_custom_location_and_appended_openid_configuration() {
    let auth_server = mock_as(AsConfig {
        prefix: "/tenant1",
        metadata_paths: vec!["/tenant1/.well-known/openid-configuration".into()],
        ..AsConfig::default()
    })
    .await;
    let rs = mock_rs().await;
    rs.set(
        "/custom/metadata/location.json",
        json!({"resource": rs.url(), "authorization_servers": [auth_server.issuer]}),
    );
    let challenge = format!(r#"Bearer resource_metadata="{}/custom/metadata/location.json""#, rs.base);
    let oauth = OAuth::new();
    assert!(oauth.refused(&rs.url(), 401, Some(&challenge)).await.unwrap());
    assert!(header(&oauth, &rs.url()).await.is_some());
    assert_eq!(paths(&rs.log), ["GET /custom/metadata/location.json"]);
    assert_eq!(
        paths(&auth_server.log)[..4],
        [
            "GET /.well-known/oauth-authorization-server/tenant1",
            "GET /.well-known/openid-configuration/tenant1",
            "GET /tenant1/.well-known/openid-configuration",
            "POST /tenant1/register",
        ]
    );
}

/// Without any protected resource metadata, the 2025-03-26 fallback: the server's origin is the
/// authorization server.
#[tokio::test]
async fn no_resource_metadata_falls_back_to_the_origin() {
    let auth_server = mock_as(AsConfig::default()).await;
    let oauth = OAuth::new();
    let url = format!("{}/mcp", auth_server.issuer);
    assert!(oauth.refused(&url, 401, None).await.unwrap());
    assert!(header(&oauth, &url).await.is_some());
    assert_eq!(hits_at(&auth_server.log, "/authorize")[0].query["resource"], url);
}

// ---------------------------------------------------------------------------------------------
// PKCE.

/// PKCE is required with S256: an authorization server without
/// `code_challenge_methods_supported`, or without S256 in it, is refused before anything.
#[tokio::test]
async fn pkce_s256_is_required() {
    for pkce in [None, Some(vec!["plain"])] {
        let auth_server = mock_as(AsConfig { pkce: pkce.clone(), ..AsConfig::default() }).await;
        let rs = resource_for(&auth_server.issuer, None).await;
        let oauth = OAuth::new();
        let message = auth_error(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await);
        assert!(message.contains("S256"), "{message}");
        assert_eq!(paths(&auth_server.log), ["GET /.well-known/oauth-authorization-server"], "{pkce:?}");
        assert_eq!(header(&oauth, &rs.url()).await, None);
    }
}

// ---------------------------------------------------------------------------------------------
// Client registration (auth/basic-cimd, auth/pre-registration, dynamic registration).

const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// auth/basic-cimd: an authorization server that takes Client ID Metadata Documents gets the
/// document's URL as client id (a public client), no registration; one that does not gets a
/// dynamic registration.
#[tokio::test]
async fn client_id_metadata_document() {
    let auth_server = mock_as(AsConfig { cimd: Some(true), ..AsConfig::default() }).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new().client_metadata_url(CIMD_URL);
    assert!(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await.unwrap());
    assert!(header(&oauth, &rs.url()).await.is_some());
    assert!(hits_at(&auth_server.log, "/register").is_empty());
    assert_eq!(hits_at(&auth_server.log, "/authorize")[0].query["client_id"], CIMD_URL);
    let token = &hits_at(&auth_server.log, "/token")[0];
    assert_eq!(token.form["client_id"], CIMD_URL);
    assert_eq!(token.authorization, None);

    // Not advertised: dynamic registration.
    let auth_server = mock_as(AsConfig { cimd: Some(false), ..AsConfig::default() }).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new().client_metadata_url(CIMD_URL);
    assert!(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await.unwrap());
    assert_eq!(hits_at(&auth_server.log, "/register").len(), 1);
    assert_ne!(hits_at(&auth_server.log, "/authorize")[0].query["client_id"], CIMD_URL);
}

/// auth/pre-registration: no registration endpoint, `client_secret_basic` only: the
/// pre-registered id and secret in HTTP Basic; they come before a Client ID Metadata Document.
#[tokio::test]
async fn pre_registered_client() {
    let auth_server = mock_as(AsConfig {
        registration: false,
        auth_methods: vec!["client_secret_basic"],
        cimd: Some(true),
        ..AsConfig::default()
    })
    .await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new()
        .client_id("pre-registered-client")
        .client_secret("pre-registered-secret")
        .client_metadata_url(CIMD_URL);
    assert!(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await.unwrap());
    assert!(header(&oauth, &rs.url()).await.is_some());
    assert_eq!(hits_at(&auth_server.log, "/authorize")[0].query["client_id"], "pre-registered-client");
    let token = &hits_at(&auth_server.log, "/token")[0];
    let expected = format!("Basic {}", STANDARD.encode("pre-registered-client:pre-registered-secret"));
    assert_eq!(token.authorization.as_deref(), Some(expected.as_str()));
    assert!(!token.form.contains_key("client_secret"));

    // Registered with another authorization server, and no other way to get a client id.
    let auth_server = mock_as(AsConfig { registration: false, ..AsConfig::default() }).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new().client_id("pre").client_secret("s").client_issuer("https://other.example.com");
    let message = auth_error(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await);
    assert!(message.contains("no client id"), "{message}");
    assert!(hits_at(&auth_server.log, "/authorize").is_empty());
}

/// A registration the authorization server refuses fails the flow with its error.
#[tokio::test]
async fn refused_registration() {
    let auth_server = mock_as(AsConfig { refuse_registration: true, ..AsConfig::default() }).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let message = auth_error(OAuth::new().refused(&rs.url(), 401, Some(&rs.challenge(""))).await);
    assert!(message.contains("invalid_redirect_uri (no)"), "{message}");
    assert!(hits_at(&auth_server.log, "/authorize").is_empty());
}

// ---------------------------------------------------------------------------------------------
// Token endpoint authentication (auth/token-endpoint-auth-basic, -post, -none).

#[tokio::test]
async fn token_endpoint_auth_methods() {
    for method in ["client_secret_basic", "client_secret_post", "none"] {
        let auth_server = mock_as(AsConfig { auth_methods: vec![method], ..AsConfig::default() }).await;
        let rs = resource_for(&auth_server.issuer, None).await;
        let oauth = OAuth::new();
        assert!(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await.unwrap(), "{method}");
        assert_eq!(hits_at(&auth_server.log, "/register")[0].json["token_endpoint_auth_method"], method);
        let token = &hits_at(&auth_server.log, "/token")[0];
        let (id, secret) = ("dcr-client-2", "secret-2");
        match method {
            "client_secret_basic" => {
                let expected = format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")));
                assert_eq!(token.authorization.as_deref(), Some(expected.as_str()));
                assert!(!token.form.contains_key("client_secret"));
            }
            "client_secret_post" => {
                assert_eq!(token.authorization, None);
                assert_eq!(token.form["client_id"], id);
                assert_eq!(token.form["client_secret"], secret);
            }
            _ => {
                assert_eq!(token.authorization, None);
                assert_eq!(token.form["client_id"], id);
                assert!(!token.form.contains_key("client_secret"));
            }
        }
        assert_eq!(token.form["resource"], rs.url());
    }
}

/// The method the registration's answer names is the one used, whatever was asked.
#[tokio::test]
async fn registration_answer_names_the_method() {
    let auth_server =
        mock_as(AsConfig { registered_method: Some("client_secret_post"), ..AsConfig::default() }).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new();
    assert!(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await.unwrap());
    assert_eq!(hits_at(&auth_server.log, "/token")[0].form["client_secret"], "secret-2");
}

// ---------------------------------------------------------------------------------------------
// Scopes (auth/scope-from-www-authenticate, scope-from-scopes-supported,
// scope-omitted-when-undefined, offline-access-scope, offline-access-not-supported).

async fn asked_scope(
    config: AsConfig,
    resource_scopes: Option<&[&str]>,
    challenge: &str,
    oauth: OAuth,
) -> Option<String> {
    let auth_server = mock_as(config).await;
    let rs = resource_for(&auth_server.issuer, resource_scopes).await;
    assert!(oauth.refused(&rs.url(), 401, Some(&rs.challenge(challenge))).await.unwrap());
    hits_at(&auth_server.log, "/authorize")[0].query.get("scope").cloned()
}

#[tokio::test]
async fn scope_selection() {
    // The challenge's scope first.
    let scope =
        asked_scope(AsConfig::default(), Some(&["mcp:profile"]), r#"scope="mcp:basic""#, OAuth::new()).await;
    assert_eq!(scope.as_deref(), Some("mcp:basic"));
    // Else every scope of scopes_supported.
    let all = ["mcp:basic", "mcp:read", "mcp:write"];
    let scope = asked_scope(AsConfig::default(), Some(&all), "", OAuth::new()).await;
    assert_eq!(scope.as_deref(), Some("mcp:basic mcp:read mcp:write"));
    // Else none: the parameter is left out.
    assert_eq!(asked_scope(AsConfig::default(), None, "", OAuth::new()).await, None);
}

#[tokio::test]
async fn offline_access_only_when_offered() {
    let offering =
        || AsConfig { scopes_supported: Some(vec!["mcp:basic", "offline_access"]), ..AsConfig::default() };
    let scope = asked_scope(offering(), Some(&["mcp:basic"]), "", OAuth::new()).await;
    assert_eq!(scope.as_deref(), Some("mcp:basic offline_access"));
    // Not wanted.
    let scope = asked_scope(offering(), Some(&["mcp:basic"]), "", OAuth::new().offline_access(false)).await;
    assert_eq!(scope.as_deref(), Some("mcp:basic"));
    // Nothing else asked for: not asked alone.
    assert_eq!(asked_scope(offering(), None, "", OAuth::new()).await, None);
    // Not offered: never asked, even when the challenge names it.
    let not_offering =
        AsConfig { scopes_supported: Some(vec!["mcp:basic", "mcp:read"]), ..AsConfig::default() };
    let scope = asked_scope(
        not_offering,
        Some(&["mcp:basic", "mcp:read"]),
        r#"scope="mcp:basic offline_access""#,
        OAuth::new(),
    )
    .await;
    assert_eq!(scope.as_deref(), Some("mcp:basic"));
}

// ---------------------------------------------------------------------------------------------
// Step-up (auth/scope-step-up, auth/scope-retry-limit).

/// A 403 `insufficient_scope` re-authorizes with the union of the scopes asked before and the
/// challenged ones; the new token replaces the old.
#[tokio::test]
async fn step_up_asks_for_the_union() {
    let auth_server = mock_as(AsConfig::default()).await;
    let rs = resource_for(&auth_server.issuer, Some(&["mcp:profile"])).await;
    let oauth = OAuth::new();
    let url = rs.url();
    assert!(oauth.refused(&url, 401, Some(&rs.challenge(r#"scope="mcp:basic""#))).await.unwrap());
    let first = header(&oauth, &url).await.unwrap();
    let challenge = rs.challenge(r#"error="insufficient_scope", scope="mcp:write""#);
    assert!(oauth.refused(&url, 403, Some(&challenge)).await.unwrap());
    let second = header(&oauth, &url).await.unwrap();
    assert_ne!(first, second);
    let scopes: Vec<_> =
        hits_at(&auth_server.log, "/authorize").iter().map(|h| h.query["scope"].clone()).collect();
    assert_eq!(scopes, ["mcp:basic", "mcp:basic mcp:write"]);
    // The client is registered once.
    assert_eq!(hits_at(&auth_server.log, "/register").len(), 1);
    // A 403 that is not about scopes is final.
    let message = auth_error(oauth.refused(&url, 403, Some(r#"Bearer error="invalid_token""#)).await);
    assert!(message.contains("403"), "{message}");
}

/// Repeated 403s for scopes already asked for re-authorize at most `max_step_ups` times
/// (default 2: three authorizations in all), then the refusal is final.
#[tokio::test]
async fn step_up_retry_limit() {
    let auth_server = mock_as(AsConfig::default()).await;
    let rs = resource_for(&auth_server.issuer, Some(&["mcp:admin"])).await;
    let oauth = OAuth::new();
    let url = rs.url();
    assert!(oauth.refused(&url, 401, Some(&rs.challenge(r#"scope="mcp:admin""#))).await.unwrap());
    let forbidden =
        rs.challenge(r#"error="insufficient_scope", scope="mcp:admin", error_description="never""#);
    assert!(oauth.refused(&url, 403, Some(&forbidden)).await.unwrap());
    assert!(oauth.refused(&url, 403, Some(&forbidden)).await.unwrap());
    let message = auth_error(oauth.refused(&url, 403, Some(&forbidden)).await);
    assert!(message.contains("never"), "{message}");
    assert_eq!(hits_at(&auth_server.log, "/authorize").len(), 3);

    // max_step_ups(0): no step-up at all.
    let oauth = OAuth::new().max_step_ups(0);
    assert!(oauth.refused(&url, 401, Some(&rs.challenge(r#"scope="mcp:admin""#))).await.unwrap());
    assert!(oauth.refused(&url, 403, Some(&forbidden)).await.is_err());
}

/// A server that refuses every new token with a 401 does not make the client authorize for
/// ever.
#[tokio::test]
async fn repeated_401s_end() {
    let auth_server = mock_as(AsConfig::default()).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new();
    let url = rs.url();
    let mut outcomes = Vec::new();
    for _ in 0..5 {
        let outcome = oauth.refused(&url, 401, Some(&rs.challenge(""))).await;
        let _ = header(&oauth, &url).await;
        outcomes.push(outcome.is_ok());
    }
    assert_eq!(outcomes, [true, true, true, false, true]);
}

// ---------------------------------------------------------------------------------------------
// Refresh tokens.

/// A token about to expire is refreshed before a request; a refused one is refreshed once
/// before the user is asked again; a refresh the authorization server refuses leaves the
/// client without a token (the next challenge re-authorizes).
#[tokio::test]
async fn refresh_before_reauthorizing() {
    let auth_server = mock_as(AsConfig { refresh_tokens: true, expires_in: 1, ..AsConfig::default() }).await;
    let rs = resource_for(&auth_server.issuer, Some(&["mcp:basic"])).await;
    let oauth = OAuth::new();
    let url = rs.url();
    assert!(oauth.refused(&url, 401, Some(&rs.challenge(""))).await.unwrap());
    let first = header(&oauth, &url).await.unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    let second = header(&oauth, &url).await.unwrap();
    assert_ne!(first, second);
    let tokens = hits_at(&auth_server.log, "/token");
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[1].form["grant_type"], "refresh_token");
    assert_eq!(tokens[1].form["refresh_token"], "rt-4");
    assert_eq!(tokens[1].form["resource"], url);
    assert_eq!(tokens[1].form["client_id"], "dcr-client-2");

    // Refused: refreshed, not re-authorized.
    assert!(oauth.refused(&url, 401, Some(&rs.challenge(""))).await.unwrap());
    assert_eq!(hits_at(&auth_server.log, "/token").last().unwrap().form["grant_type"], "refresh_token");
    assert_eq!(hits_at(&auth_server.log, "/authorize").len(), 1);
    // Refused again: the refreshed token did not help, the user is asked.
    let _ = header(&oauth, &url).await;
    assert!(oauth.refused(&url, 401, Some(&rs.challenge(""))).await.unwrap());
    assert_eq!(hits_at(&auth_server.log, "/authorize").len(), 2);
    // The refresh is refused: no token, no error.
    auth_server.refuse_refresh.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(header(&oauth, &url).await, None);
}

// ---------------------------------------------------------------------------------------------
// Issuer checks (auth/metadata-issuer-mismatch, iss-*).

/// auth/metadata-issuer-mismatch: metadata whose issuer is not the one it was looked up by is
/// not used: no registration, no authorization.
#[tokio::test]
async fn metadata_issuer_mismatch() {
    let auth_server =
        mock_as(AsConfig { issuer: Some("https://attacker.example.com".into()), ..AsConfig::default() })
            .await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let message = auth_error(OAuth::new().refused(&rs.url(), 401, Some(&rs.challenge(""))).await);
    assert!(message.contains("attacker.example.com"), "{message}");
    assert_eq!(paths(&auth_server.log), ["GET /.well-known/oauth-authorization-server"]);
}

/// RFC 9207 (auth/iss-supported, iss-not-advertised, iss-supported-missing, iss-wrong-issuer,
/// iss-unexpected, iss-normalized): the authorization response's `iss` must be the recorded
/// issuer, character for character, whenever present; absent, only if not advertised.
#[tokio::test]
async fn authorization_response_issuer() {
    let cases = [
        (Some(true), Iss::Correct, true),
        (None, Iss::Omit, true),
        (Some(false), Iss::Omit, true),
        (Some(false), Iss::Correct, true),
        (Some(true), Iss::Omit, false),
        (Some(true), Iss::Wrong, false),
        (None, Iss::Wrong, false),
        (Some(true), Iss::TrailingSlash, false),
    ];
    for (supported, iss, accepted) in cases {
        let auth_server = mock_as(AsConfig { iss_supported: supported, iss, ..AsConfig::default() }).await;
        let rs = resource_for(&auth_server.issuer, None).await;
        let oauth = OAuth::new();
        let outcome = oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await;
        assert_eq!(outcome.is_ok(), accepted, "{supported:?} {iss:?}: {outcome:?}");
        assert_eq!(hits_at(&auth_server.log, "/authorize").len(), 1, "{supported:?} {iss:?}");
        assert_eq!(hits_at(&auth_server.log, "/token").len(), usize::from(accepted), "{supported:?} {iss:?}");
        assert_eq!(header(&oauth, &rs.url()).await.is_some(), accepted);
    }
}

/// `state` is checked: a response with another one is ignored (no token request).
#[tokio::test]
async fn state_is_validated() {
    let auth_server = mock_as(AsConfig::default()).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new().user_agent(|url: String| async move {
        let back = Headless::new().authorize(&url, DEFAULT_REDIRECT_URI).await?;
        Ok::<_, ClientError>(back.replace("state=", "state=forged"))
    });
    let message = auth_error(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await);
    assert!(message.contains("state"), "{message}");
    assert!(hits_at(&auth_server.log, "/token").is_empty());

    // A user agent may return the query alone.
    let oauth = OAuth::new().user_agent(|url: String| async move {
        let back = Headless::new().authorize(&url, DEFAULT_REDIRECT_URI).await?;
        Ok::<_, ClientError>(back.split_once('?').unwrap().1.to_owned())
    });
    assert!(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await.unwrap());
}

/// An authorization server that shows a page fails the headless flow.
#[tokio::test]
async fn headless_needs_an_immediate_redirect() {
    let auth_server = mock_as(AsConfig { interactive: true, ..AsConfig::default() }).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let message = auth_error(OAuth::new().refused(&rs.url(), 401, Some(&rs.challenge(""))).await);
    assert!(message.contains("HTTP 200"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// The resource (auth/resource-mismatch), the token's reach.

/// auth/resource-mismatch: metadata for another resource is refused before any request to the
/// authorization server.
#[tokio::test]
async fn resource_mismatch() {
    let auth_server = mock_as(AsConfig::default()).await;
    let rs = mock_rs().await;
    rs.set(
        PRM_PATH,
        json!({"resource": "https://evil.example.com/mcp", "authorization_servers": [auth_server.issuer]}),
    );
    let message = auth_error(OAuth::new().refused(&rs.url(), 401, Some(&rs.challenge(""))).await);
    assert!(message.contains("evil.example.com"), "{message}");
    assert!(hits(&auth_server.log).is_empty());

    // The same for client credentials.
    let message = auth_error(
        ClientCredentials::new("id", "secret").refused(&rs.url(), 401, Some(&rs.challenge(""))).await,
    );
    assert!(message.contains("evil.example.com"), "{message}");
    assert!(hits(&auth_server.log).is_empty());
}

/// The token goes to the server's resource only.
#[tokio::test]
async fn token_stays_with_its_resource() {
    let auth_server = mock_as(AsConfig::default()).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new();
    assert!(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await.unwrap());
    assert!(header(&oauth, &rs.url()).await.is_some());
    assert!(header(&oauth, &format!("{}/sub", rs.url())).await.is_some());
    assert_eq!(header(&oauth, &format!("{}/other", rs.base)).await, None);
    assert_eq!(header(&oauth, "https://elsewhere.example.com/mcp").await, None);
}

/// Refusals at the same time: one authorization; the others retry with its token.
#[tokio::test]
async fn concurrent_refusals_authorize_once() {
    let auth_server = mock_as(AsConfig::default()).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let oauth = OAuth::new();
    let challenge = rs.challenge("");
    let url = rs.url();
    let (a, b, c) = tokio::join!(
        oauth.refused(&url, 401, Some(&challenge)),
        oauth.refused(&url, 401, Some(&challenge)),
        oauth.refused(&url, 401, Some(&challenge))
    );
    assert!(a.unwrap() && b.unwrap() && c.unwrap());
    assert_eq!(hits_at(&auth_server.log, "/authorize").len(), 1);
}

// ---------------------------------------------------------------------------------------------
// auth/authorization-server-migration.

/// The resource's metadata names another authorization server: the old token and client id
/// are not used there; the client registers again and authorizes there.
#[tokio::test]
async fn authorization_server_migration() {
    let as1 =
        mock_as(AsConfig { client_prefix: "as1-client", refresh_tokens: true, ..AsConfig::default() }).await;
    let as2 = mock_as(AsConfig { client_prefix: "as2-client", ..AsConfig::default() }).await;
    let rs = resource_for(&as1.issuer, None).await;
    let oauth = OAuth::new();
    let url = rs.url();
    assert!(oauth.refused(&url, 401, Some(&rs.challenge(""))).await.unwrap());
    assert!(header(&oauth, &url).await.is_some());

    rs.set(PRM_PATH, json!({"resource": url, "authorization_servers": [as2.issuer]}));
    assert!(oauth.refused(&url, 401, Some(&rs.challenge(""))).await.unwrap());
    assert!(header(&oauth, &url).await.is_some());
    // The new token comes from the new server; no refresh at the old one, nothing of it at the
    // new one.
    assert_eq!(hits_at(&as2.log, "/token").len(), 1);
    assert_eq!(hits_at(&as1.log, "/token").len(), 1);
    assert_eq!(hits_at(&as2.log, "/register").len(), 1);
    for hit in hits(&as2.log) {
        let seen = format!("{:?} {:?} {:?}", hit.query, hit.form, hit.authorization);
        assert!(!seen.contains("as1-client"), "{seen}");
    }
    assert!(hits_at(&as2.log, "/authorize")[0].query["client_id"].starts_with("as2-client"));
}

// ---------------------------------------------------------------------------------------------
// The Loopback user agent.

/// GET `url` over a plain TCP connection; the response's status line and `Location`.
async fn raw_get(url: &str) -> (String, Option<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = tokio::net::TcpStream::connect(host.replace("localhost", "127.0.0.1")).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer.lines().next().unwrap_or_default().to_owned();
    let location = answer
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("location:"))
        .map(|l| l["location:".len()..].trim().to_owned());
    (status, location)
}

/// The Loopback user agent listens on the redirect URI and takes the browser's return; other
/// requests to it are answered 404.
#[tokio::test]
async fn loopback_user_agent() {
    let auth_server = mock_as(AsConfig::default()).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let shown = Arc::new(Mutex::new(Vec::new()));
    let record = shown.clone();
    let browser = Loopback::new(move |url| {
        record.lock().unwrap().push(url.to_owned());
        let url = url.to_owned();
        tokio::spawn(async move {
            let (_, location) = raw_get(&url).await;
            let back = location.unwrap();
            let (status, _) = raw_get(&back.replace("/callback", "/favicon.ico")).await;
            assert!(status.contains("404"), "{status}");
            let (status, _) = raw_get(&back).await;
            assert!(status.contains("200"), "{status}");
        });
    })
    .timeout(Duration::from_secs(10));
    let oauth = OAuth::new().redirect_uri(&redirect).user_agent(browser);
    assert!(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await.unwrap());
    assert!(header(&oauth, &rs.url()).await.is_some());
    assert_eq!(shown.lock().unwrap().len(), 1);
    assert_eq!(hits_at(&auth_server.log, "/token")[0].form["redirect_uri"], redirect);

    // Nobody comes back: the wait ends.
    let oauth = OAuth::new()
        .redirect_uri(&redirect)
        .user_agent(Loopback::new(|_| {}).timeout(Duration::from_millis(200)));
    let message = auth_error(oauth.refused(&rs.url(), 401, Some(&rs.challenge(""))).await);
    assert!(message.contains("did not come back"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// Client credentials (auth/client-credentials-basic).

fn credentials_as(methods: Vec<&'static str>) -> AsConfig {
    AsConfig {
        auth_methods: methods,
        grant_types: vec!["client_credentials"],
        credentials: Some(("cc-client", "cc-secret")),
        registration: false,
        ..AsConfig::default()
    }
}

/// Discovered token endpoint, HTTP Basic, the resource, the resource's scopes; the token is
/// kept; a 401 buys another; a 403 adds the challenged scopes, a few times at most.
#[tokio::test]
async fn client_credentials_basic() {
    let auth_server = mock_as(credentials_as(vec!["client_secret_basic"])).await;
    let rs = resource_for(&auth_server.issuer, Some(&["mcp:read"])).await;
    let cc = ClientCredentials::new("cc-client", "cc-secret");
    let url = rs.url();
    let first = header(&cc, &url).await.unwrap();
    assert_eq!(header(&cc, &url).await.unwrap(), first);
    let tokens = hits_at(&auth_server.log, "/token");
    assert_eq!(tokens.len(), 1);
    let expected = format!("Basic {}", STANDARD.encode("cc-client:cc-secret"));
    assert_eq!(tokens[0].authorization.as_deref(), Some(expected.as_str()));
    assert_eq!(tokens[0].form["grant_type"], "client_credentials");
    assert_eq!(tokens[0].form["resource"], url);
    assert_eq!(tokens[0].form["scope"], "mcp:read");
    assert!(!tokens[0].form.contains_key("client_secret"));

    assert!(cc.refused(&url, 401, Some(&rs.challenge(""))).await.unwrap());
    assert_ne!(header(&cc, &url).await.unwrap(), first);
    assert_eq!(hits_at(&auth_server.log, "/token").len(), 2);

    let forbidden = rs.challenge(r#"error="insufficient_scope", scope="mcp:write""#);
    assert!(cc.refused(&url, 403, Some(&forbidden)).await.unwrap());
    assert_eq!(hits_at(&auth_server.log, "/token").last().unwrap().form["scope"], "mcp:read mcp:write");
    let _ = header(&cc, &url).await;
    assert!(cc.refused(&url, 403, Some(&forbidden)).await.unwrap());
    let _ = header(&cc, &url).await;
    assert!(cc.refused(&url, 403, Some(&forbidden)).await.is_err());
}

#[tokio::test]
async fn client_credentials_post_and_expiry() {
    let auth_server = mock_as(AsConfig { expires_in: 1, ..credentials_as(vec!["client_secret_post"]) }).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let cc = ClientCredentials::new("cc-client", "cc-secret").scopes(["a", "b"]);
    let url = rs.url();
    let first = header(&cc, &url).await.unwrap();
    let token = &hits_at(&auth_server.log, "/token")[0];
    assert_eq!(token.authorization, None);
    assert_eq!(token.form["client_id"], "cc-client");
    assert_eq!(token.form["client_secret"], "cc-secret");
    assert_eq!(token.form["scope"], "a b");
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_ne!(header(&cc, &url).await.unwrap(), first);
    assert_eq!(hits_at(&auth_server.log, "/token").len(), 2);
}

/// `private_key_jwt`: an assertion signed by the application's function, for the issuer; a
/// new one (another `jti`) for each token.
#[tokio::test]
async fn client_credentials_private_key_jwt() {
    let auth_server = mock_as(credentials_as(vec!["private_key_jwt"])).await;
    let rs = resource_for(&auth_server.issuer, None).await;
    let key = jsonwebtoken::EncodingKey::from_ec_pem(&test_key("ec-1.pem")).unwrap();
    let cc = ClientCredentials::private_key_jwt("cc-client", move |claims| {
        jsonwebtoken::encode(&jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256), claims, &key)
            .map_err(|e| ClientError::Unauthorized(e.to_string()))
    });
    let url = rs.url();
    assert!(header(&cc, &url).await.is_some());
    assert!(cc.refused(&url, 401, Some(&rs.challenge(""))).await.unwrap());
    assert!(header(&cc, &url).await.is_some());
    let tokens = hits_at(&auth_server.log, "/token");
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[0].authorization, None);
    assert_eq!(tokens[0].form["client_id"], "cc-client");
    assert!(!tokens[0].form.contains_key("client_secret"));
    assert_ne!(tokens[0].form["client_assertion"], tokens[1].form["client_assertion"]);
}

/// A given token endpoint: no discovery; the resource is the server's URL; wrong credentials
/// fail with the authorization server's error.
#[tokio::test]
async fn client_credentials_given_endpoint() {
    let auth_server = mock_as(credentials_as(vec!["client_secret_basic"])).await;
    let url = "http://localhost:9/mcp";
    let cc = ClientCredentials::new("cc-client", "cc-secret")
        .token_endpoint(format!("{}/token", auth_server.issuer))
        .auth_method(ClientAuthMethod::ClientSecretPost);
    assert!(header(&cc, url).await.is_some());
    let token = &hits_at(&auth_server.log, "/token")[0];
    assert_eq!(token.form["resource"], url);
    assert_eq!(token.form["client_secret"], "cc-secret");
    assert!(!token.form.contains_key("scope"));
    assert_eq!(paths(&auth_server.log), ["POST /token"]);

    let cc =
        ClientCredentials::new("cc-client", "wrong").token_endpoint(format!("{}/token", auth_server.issuer));
    match cc.authorization(url).await {
        Err(ClientError::Unauthorized(message)) => assert!(message.contains("invalid_client"), "{message}"),
        other => panic!("{other:?}"),
    }
}

/// Plain http is refused to hosts other than loopback ones unless allowed.
#[tokio::test]
async fn plain_http_only_on_loopback() {
    let cc = ClientCredentials::new("a", "b").token_endpoint("http://auth.example.com/token");
    match cc.authorization("https://mcp.example.com/mcp").await {
        Err(ClientError::Unauthorized(message)) => assert!(message.contains("https"), "{message}"),
        other => panic!("{other:?}"),
    }
    let message = auth_error(OAuth::new().refused("http://mcp.example.com/mcp", 401, None).await);
    assert!(message.contains("https"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// End to end: this crate's client and its own protected server (a JWT resource server).

/// Read the notes (needs `notes:read`, the server's scope for everything).
#[mcp_tools::tool]
async fn read_notes() -> String {
    "no notes".to_owned()
}

/// Write a note (needs `notes:write`).
#[mcp_tools::tool(scopes = ["notes:write"])]
async fn write_note(text: String) -> String {
    format!("written: {text}")
}

/// `Client::connect_http` with `OAuth` against `Server::http_router` with a JWT `Authorization`:
/// the 401 starts the flow (the server's metadata, dynamic registration, PKCE, a JWT for the
/// server's resource), the calls go through, and a tool needing another scope steps up (403
/// `insufficient_scope`); in both eras.
#[tokio::test]
async fn end_to_end_with_the_protected_server() {
    use mcp_tools::auth::Authorization;
    use mcp_tools::client::{Client, EraChoice};
    use mcp_tools::{HttpOptions, Server};

    for era in [EraChoice::Handshake, EraChoice::Stateless] {
        let auth_server = mock_as(AsConfig { jwt: true, ..AsConfig::default() }).await;
        let (listener, base) = listen().await;
        let url = format!("{base}/mcp");
        let authorization =
            Authorization::jwt(&auth_server.issuer, &url).unwrap().require_scopes(["notes:read"]);
        let server = Server::builder().name("notes").build().unwrap();
        let app = server.http_router(HttpOptions::new().authorization(authorization));
        tokio::spawn(async move { axum::serve(listener, app).await });

        let client = Client::builder().era(era).auth(OAuth::new()).connect_http(&url).await.unwrap();
        let tools = client.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t["name"] == "read_notes"), "{era:?}: {tools:?}");
        assert_eq!(client.call_tool("read_notes", json!({})).await.unwrap().text(), "no notes");
        let written = client.call_tool("write_note", json!({"text": "hi"})).await.unwrap();
        assert_eq!(written.text(), "written: hi", "{era:?}");

        let scopes: Vec<_> =
            hits_at(&auth_server.log, "/authorize").iter().map(|h| h.query.get("scope").cloned()).collect();
        assert_eq!(scopes.len(), 2, "{era:?}: {scopes:?}");
        assert_eq!(scopes[0].as_deref(), Some("notes:read"), "{era:?}");
        let second = scopes[1].clone().unwrap();
        assert!(second.contains("notes:read") && second.contains("notes:write"), "{era:?}: {second}");
        assert!(hits_at(&auth_server.log, "/authorize").iter().all(|h| h.query["resource"] == url));
    }
}
