//! Authorization (feature `auth`): token verification with tokens signed here (JWT with a key
//! set served by a test issuer, introspection against a test endpoint, static tokens), and the
//! HTTP endpoint as an OAuth resource server: 401 and its challenge, the metadata document, 403
//! step-up for scoped tools, resources and prompts, hidden tools, sessions bound to their
//! caller, both protocol eras; and what a hostile caller cannot do: forge log lines or swell
//! answers through a token's header, make every guess a request to the authorization server,
//! pass another JWT for an access token, or reach handlers' sight with its token.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response, StatusCode, header};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_tools::auth::{AuthError, Authorization, Introspection, JwtVerifier, StaticTokens, TokenVerifier};
use mcp_tools::deferred::DeferredTools;
use mcp_tools::{
    Auth, AuthInfo, Context, HttpOptions, Prompt, PromptMessage, PromptResult, Resource, ResourceContents,
    Server, ToolError, tool,
};
use serde_json::{Value, json};
use tower::ServiceExt as _;

const RESOURCE: &str = "http://localhost/mcp";

// ---------------------------------------------------------------------------------------------
// A test issuer: RFC 8414 metadata and a key set that can change, counting fetches.

fn key_file(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/auth/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn jwk(kid: &str) -> Value {
    serde_json::from_slice(&key_file(&format!("{kid}.jwk.json"))).unwrap()
}

struct Issuer {
    url: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
}

async fn issuer(kids: &[&str]) -> Issuer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let keys = Arc::new(Mutex::new(kids.iter().map(|k| jwk(k)).collect::<Vec<_>>()));
    let fetches = Arc::new(AtomicUsize::new(0));
    let metadata =
        json!({"issuer": url, "jwks_uri": format!("{url}/jwks"), "token_endpoint": format!("{url}/token")});
    let (k, f) = (keys.clone(), fetches.clone());
    let app = Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || async move { metadata.to_string() }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || {
                let (k, f) = (k.clone(), f.clone());
                async move {
                    f.fetch_add(1, Ordering::SeqCst);
                    json!({"keys": *k.lock().unwrap()}).to_string()
                }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Issuer { url, keys, fetches }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A token signed with the key `kid`, with these claims over sensible defaults: an RFC 9068
/// access token (`typ: at+jwt`).
fn token(issuer: &str, kid: &str, claims: Value) -> String {
    typed_token(issuer, kid, Some("at+jwt"), claims)
}

/// A token as [`token`] makes it, with this `typ` in its header (`None`: without one).
fn typed_token(issuer: &str, kid: &str, typ: Option<&str>, claims: Value) -> String {
    let (alg, key) = match kid {
        k if k.starts_with("rsa") => {
            (Algorithm::RS256, EncodingKey::from_rsa_pem(&key_file(&format!("{k}.pem"))).unwrap())
        }
        k if k.starts_with("ec") => {
            (Algorithm::ES256, EncodingKey::from_ec_pem(&key_file(&format!("{k}.pem"))).unwrap())
        }
        k => (Algorithm::EdDSA, EncodingKey::from_ed_pem(&key_file(&format!("{k}.pem"))).unwrap()),
    };
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_owned());
    header.typ = typ.map(str::to_owned);
    let mut body = json!({"iss": issuer, "aud": RESOURCE, "sub": "user-1", "client_id": "test-client",
        "exp": now() + 600, "iat": now(), "scope": "notes:read"});
    for (k, v) in claims.as_object().unwrap() {
        if v.is_null() {
            body.as_object_mut().unwrap().remove(k);
        } else {
            body[k] = v.clone();
        }
    }
    jsonwebtoken::encode(&header, &body, &key).unwrap()
}

fn b64(value: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

async fn verify(verifier: &JwtVerifier, token: &str) -> Result<AuthInfo, AuthError> {
    verifier.verify(token, RESOURCE).await
}

fn invalid(result: Result<AuthInfo, AuthError>, why: &str) {
    match result {
        Err(AuthError::Invalid(reason)) => assert!(reason.contains(why), "{reason:?} should say {why:?}"),
        other => panic!("expected an invalid token ({why}), got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// JWT verification.

#[tokio::test]
async fn jwts_are_checked_for_signature_time_issuer_and_audience() {
    let issuer = issuer(&["rsa-1", "ec-1", "ed-1"]).await;
    let verifier = JwtVerifier::new(&issuer.url).unwrap().leeway(Duration::from_secs(5));
    let url = issuer.url.as_str();
    for kid in ["rsa-1", "ec-1", "ed-1"] {
        let info = verify(&verifier, &token(url, kid, json!({"scope": "a b"}))).await.unwrap();
        assert_eq!(info.subject.as_deref(), Some("user-1"), "{kid}");
        assert_eq!(info.client_id.as_deref(), Some("test-client"));
        assert!(info.has_scopes(&["a", "b"]), "{kid}: {:?}", info.scopes);
        assert!(info.expires_at.is_some());
    }
    invalid(verify(&verifier, &token(url, "rsa-1", json!({"exp": now() - 60}))).await, "expired");
    invalid(verify(&verifier, &token(url, "rsa-1", json!({"nbf": now() + 3600}))).await, "not valid yet");
    invalid(verify(&verifier, &token("https://other.example", "rsa-1", json!({}))).await, "not issued by");
    invalid(
        verify(&verifier, &token(url, "rsa-1", json!({"aud": "https://elsewhere.example/mcp"}))).await,
        "not issued for this resource",
    );
    invalid(verify(&verifier, &token(url, "rsa-1", json!({"aud": null}))).await, "no `aud` claim");
    invalid(verify(&verifier, &token(url, "rsa-1", json!({"exp": null}))).await, "no `exp` claim");
    // An audience naming this resource in another spelling, or among others, is fine.
    let info = verify(
        &verifier,
        &token(url, "rsa-1", json!({"aud": ["https://x.example", "HTTP://LOCALHOST/mcp/"]})),
    )
    .await;
    assert!(info.is_ok(), "{info:?}");

    // Signed by another key than the one it names.
    let forged = token(url, "rsa-2", json!({}));
    let mut parts: Vec<&str> = forged.split('.').collect();
    let header = b64(&json!({"alg": "RS256", "typ": "at+jwt", "kid": "rsa-1"}));
    parts[0] = &header;
    invalid(verify(&verifier, &parts.join(".")).await, "bad signature");
    // `alg: none`, and a symmetric algorithm keyed with a public key.
    let payload = b64(&json!({"iss": url, "aud": RESOURCE, "sub": "x", "exp": now() + 600}));
    let none = format!("{}.{payload}.", b64(&json!({"alg": "none", "typ": "JWT"})));
    invalid(verify(&verifier, &none).await, "not a JWT signed with an accepted algorithm");
    let hs = jsonwebtoken::encode(
        &Header { kid: Some("rsa-1".into()), ..Header::new(Algorithm::HS256) },
        &json!({"iss": url, "aud": RESOURCE, "sub": "x", "exp": now() + 600}),
        &EncodingKey::from_secret(b"the public key is no secret").unwrap(),
    )
    .unwrap();
    invalid(verify(&verifier, &hs).await, "HS256");
    invalid(verify(&verifier, "not-a-token").await, "not a JWT signed with an accepted algorithm");
}

#[tokio::test]
async fn jwts_must_be_typed_as_access_tokens() {
    let issuer = issuer(&["rsa-1"]).await;
    let verifier = JwtVerifier::new(&issuer.url).unwrap();
    let url = issuer.url.as_str();
    for typ in ["at+jwt", "application/at+jwt", "AT+JWT"] {
        let info = verify(&verifier, &typed_token(url, "rsa-1", Some(typ), json!({}))).await;
        assert!(info.is_ok(), "{typ}: {info:?}");
    }
    // RFC 9068 §4: an ID token, or any other JWT the issuer signed, is not an access token.
    for typ in [Some("JWT"), None, Some("id+jwt")] {
        invalid(verify(&verifier, &typed_token(url, "rsa-1", typ, json!({}))).await, "at+jwt");
    }
    // For issuers that type their access tokens `JWT` (or not at all), when asked.
    let lenient = JwtVerifier::new(&issuer.url).unwrap().allow_jwt_typ();
    for typ in [Some("JWT"), Some("application/jwt"), None, Some("at+jwt")] {
        let info = verify(&lenient, &typed_token(url, "rsa-1", typ, json!({}))).await;
        assert!(info.is_ok(), "{typ:?}: {info:?}");
    }
    invalid(verify(&lenient, &typed_token(url, "rsa-1", Some("id+jwt"), json!({}))).await, "at+jwt");

    // Over HTTP, the refusal says why.
    let app = protected_server().http_router(HttpOptions::new().authorization(authorization(&issuer)));
    let untyped = typed_token(url, "rsa-1", Some("JWT"), json!({}));
    let (status, challenge, _, _) = send(&app, post(&initialize(), Some(&untyped), None)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let challenge = challenge.unwrap();
    assert!(challenge.starts_with(r#"Bearer error="invalid_token""#), "{challenge}");
    assert!(
        challenge.contains(r#"error_description="not an access token: its `typ` is \"JWT\", not \"at+jwt\""#),
        "{challenge}"
    );
}

#[tokio::test]
async fn rotated_keys_are_fetched_again_at_a_bounded_rate() {
    let issuer = issuer(&["rsa-1"]).await;
    let verifier = JwtVerifier::new(&issuer.url).unwrap().min_refetch_interval(Duration::from_millis(300));
    let url = issuer.url.as_str();
    assert!(verify(&verifier, &token(url, "rsa-1", json!({}))).await.is_ok());
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1, "fetched once, then kept");
    assert!(verify(&verifier, &token(url, "rsa-1", json!({}))).await.is_ok());
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
    // A token of a key the set does not have yet: one fetch, still unknown.
    tokio::time::sleep(Duration::from_millis(350)).await;
    invalid(verify(&verifier, &token(url, "rsa-2", json!({}))).await, "unknown key (rsa-2)");
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2);
    // The issuer rotates the key in; within the interval the set is not fetched again …
    issuer.keys.lock().unwrap().push(jwk("rsa-2"));
    for _ in 0..5 {
        invalid(verify(&verifier, &token(url, "rsa-2", json!({}))).await, "unknown key");
    }
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2, "a flood of unknown keys is not a flood of fetches");
    // … after it, the new key is picked up.
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert!(verify(&verifier, &token(url, "rsa-2", json!({}))).await.is_ok());
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn an_unreachable_issuer_makes_tokens_unverifiable_not_invalid() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);
    let verifier = JwtVerifier::new(&url).unwrap();
    match verify(&verifier, &token(&url, "rsa-1", json!({}))).await {
        Err(AuthError::Unavailable(why)) => {
            assert!(why.contains("cannot fetch the issuer's signing keys"), "{why}")
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(JwtVerifier::new("http://login.example.com").is_err(), "plain http only on loopback");
}

#[tokio::test]
async fn a_metadata_document_naming_another_issuer_is_refused() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let lying = json!({"issuer": "https://honest.example", "jwks_uri": format!("{url}/jwks")}).to_string();
    let app = Router::new()
        .route("/.well-known/oauth-authorization-server", axum::routing::get(move || async move { lying }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let verifier = JwtVerifier::new(&url).unwrap();
    match verify(&verifier, &token(&url, "rsa-1", json!({}))).await {
        Err(AuthError::Unavailable(why)) => {
            assert!(why.contains("names the issuer \"https://honest.example\""), "{why}")
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Static tokens and introspection.

const STATIC: &str = "0123456789abcdef0123456789abcdef-static";

#[tokio::test]
async fn static_tokens_are_looked_up_by_digest_and_must_be_long() {
    let tokens = StaticTokens::new().token(STATIC, AuthInfo::new("bot").scopes(["notes:read"])).unwrap();
    let info = tokens.verify(STATIC, RESOURCE).await.unwrap();
    assert_eq!(info.subject.as_deref(), Some("bot"));
    assert!(matches!(
        tokens.verify("0123456789abcdef0123456789abcdef-other", RESOURCE).await,
        Err(AuthError::Invalid(_))
    ));
    assert!(StaticTokens::new().token("short", AuthInfo::new("x")).is_err());
    let file = std::env::temp_dir().join(format!("mcp-tools-tokens-{}", std::process::id()));
    std::fs::write(&file, format!("# tokens\n\n{STATIC} ci notes:read notes:write\n")).unwrap();
    let tokens = StaticTokens::from_file(&file).unwrap();
    assert_eq!(tokens.len(), 1);
    let info = tokens.verify(STATIC, RESOURCE).await.unwrap();
    assert!(info.has_scopes(&["notes:read", "notes:write"]));
    std::fs::write(&file, "lonely-token-without-a-subject-0123456789\n").unwrap();
    let error = StaticTokens::from_file(&file).unwrap_err();
    assert!(error.to_string().contains(":1: expected `TOKEN SUBJECT"), "{error}");
    std::fs::remove_file(&file).unwrap();
}

/// An introspection endpoint (RFC 7662) for the client `rs:secret`, answering `answers` (any
/// other token: inactive); and how many requests it got.
async fn introspection_endpoint(answers: HashMap<&'static str, Value>) -> (String, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://127.0.0.1:{}/introspect", listener.local_addr().unwrap().port());
    let counted = calls.clone();
    let app = Router::new().route(
        "/introspect",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let (answers, counted) = (answers.clone(), counted.clone());
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                let expected =
                    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("rs:secret"));
                if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
                    return (StatusCode::UNAUTHORIZED, String::new());
                }
                let token =
                    body.split('&').find_map(|p| p.strip_prefix("token=")).unwrap_or_default().to_owned();
                (
                    StatusCode::OK,
                    answers.get(token.as_str()).cloned().unwrap_or(json!({"active": false})).to_string(),
                )
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (endpoint, calls)
}

#[tokio::test]
async fn opaque_tokens_are_introspected_checked_and_cached() {
    let answers: HashMap<&str, Value> = HashMap::from([
        (
            "good",
            json!({"active": true, "sub": "u", "client_id": "c", "scope": "notes:read", "aud": RESOURCE, "exp": now() + 600}),
        ),
        ("inactive", json!({"active": false})),
        ("other-audience", json!({"active": true, "aud": "https://elsewhere.example", "exp": now() + 600})),
        ("no-audience", json!({"active": true, "sub": "u"})),
        ("expired", json!({"active": true, "aud": RESOURCE, "exp": now() - 5})),
    ]);
    let (endpoint, calls) = introspection_endpoint(answers).await;
    let introspection = Introspection::new(&endpoint, "rs", "secret").unwrap();
    let info = introspection.verify("good", RESOURCE).await.unwrap();
    assert_eq!((info.subject.as_deref(), info.client_id.as_deref()), (Some("u"), Some("c")));
    assert!(introspection.verify("good", RESOURCE).await.is_ok());
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the answer is cached");
    for (token, why) in [
        ("inactive", "not active"),
        ("other-audience", "not issued for this resource"),
        ("no-audience", "not issued for this resource"),
        ("expired", "expired"),
    ] {
        match introspection.verify(token, RESOURCE).await {
            Err(AuthError::Invalid(reason)) => assert!(reason.contains(why), "{token}: {reason}"),
            other => panic!("{token}: {other:?}"),
        }
    }
    let lenient = Introspection::new(&endpoint, "rs", "secret").unwrap().allow_missing_audience();
    assert!(lenient.verify("no-audience", RESOURCE).await.is_ok());
    let wrong_secret = Introspection::new(&endpoint, "rs", "nope").unwrap();
    assert!(matches!(wrong_secret.verify("good", RESOURCE).await, Err(AuthError::Unavailable(_))));
}

#[tokio::test]
async fn a_refused_opaque_token_reaches_the_authorization_server_once() {
    let (endpoint, calls) = introspection_endpoint(HashMap::new()).await;
    let introspection = Introspection::new(&endpoint, "rs", "secret").unwrap();
    for _ in 0..5 {
        match introspection.verify("a-random-guess", RESOURCE).await {
            Err(AuthError::Invalid(reason)) => assert!(reason.contains("not active"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "a refused token is remembered");
}

/// An introspection endpoint that holds every request until the gate opens, then answers
/// inactive; how many requests it holds now, and the most it held at once.
struct HeldEndpoint {
    url: String,
    in_flight: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    gate: Arc<tokio::sync::Semaphore>,
}

async fn held_endpoint() -> HeldEndpoint {
    let (in_flight, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}/introspect", listener.local_addr().unwrap().port());
    let (i, m, g) = (in_flight.clone(), most.clone(), gate.clone());
    let app = Router::new().route(
        "/introspect",
        axum::routing::post(move || {
            let (i, m, g) = (i.clone(), m.clone(), g.clone());
            async move {
                m.fetch_max(i.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                let _open = g.acquire().await.unwrap();
                i.fetch_sub(1, Ordering::SeqCst);
                json!({"active": false}).to_string()
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    HeldEndpoint { url, in_flight, most, gate }
}

#[tokio::test]
async fn introspection_requests_are_bounded_in_number() {
    let HeldEndpoint { url: endpoint, in_flight, most, gate } = held_endpoint().await;

    // 40 different tokens at once, with the default bound (32 at once).
    let introspection = Arc::new(Introspection::new(&endpoint, "rs", "secret").unwrap());
    let refused = Arc::new(AtomicUsize::new(0));
    let checks: Vec<_> = (0..40)
        .map(|n| {
            let (introspection, refused) = (introspection.clone(), refused.clone());
            tokio::spawn(async move {
                let result = introspection.verify(&format!("guess-{n}"), RESOURCE).await;
                if matches!(result, Err(AuthError::Unavailable(_))) {
                    refused.fetch_add(1, Ordering::SeqCst);
                }
                result
            })
        })
        .collect();
    // Every check is either at the endpoint (held there) or has been turned away.
    let settled = tokio::time::timeout(Duration::from_secs(20), async {
        while in_flight.load(Ordering::SeqCst) + refused.load(Ordering::SeqCst) < 40 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let (held, turned_away) = (in_flight.load(Ordering::SeqCst), refused.load(Ordering::SeqCst));
    gate.add_permits(1000);
    assert!(settled.is_ok(), "{held} at the endpoint, {turned_away} turned away");
    assert_eq!((held, turned_away), (32, 8), "at most 32 introspection requests at once");
    let mut busy = 0;
    for check in checks {
        match check.await.unwrap() {
            Err(AuthError::Invalid(reason)) => assert!(reason.contains("not active"), "{reason}"),
            Err(AuthError::Unavailable(reason)) => {
                assert!(reason.contains("too many"), "{reason}");
                busy += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((busy, most.load(Ordering::SeqCst)), (8, 32));
}

#[tokio::test]
async fn the_introspection_bounds_are_configurable() {
    // Remembering refusals: off, or only the most recent ones.
    let (endpoint, calls) = introspection_endpoint(HashMap::new()).await;
    let forgetful = Introspection::new(&endpoint, "rs", "secret").unwrap().negative_cache(Duration::ZERO, 10);
    for _ in 0..3 {
        assert!(matches!(forgetful.verify("guess", RESOURCE).await, Err(AuthError::Invalid(_))));
    }
    assert_eq!(calls.swap(0, Ordering::SeqCst), 3);
    let small =
        Introspection::new(&endpoint, "rs", "secret").unwrap().negative_cache(Duration::from_secs(60), 2);
    for token in ["a", "b", "c", "c", "b", "a"] {
        assert!(matches!(small.verify(token, RESOURCE).await, Err(AuthError::Invalid(_))));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 4, "a, b, c, then a again (the oldest, forgotten)");

    // One request at a time, and no waiting for it.
    let held = held_endpoint().await;
    let single = Arc::new(
        Introspection::new(&held.url, "rs", "secret").unwrap().max_concurrent_requests(1, Duration::ZERO),
    );
    let first = tokio::spawn({
        let single = single.clone();
        async move { single.verify("first", RESOURCE).await }
    });
    let at_the_endpoint = tokio::time::timeout(Duration::from_secs(20), async {
        while held.in_flight.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    at_the_endpoint.await.expect("the first check reaches the endpoint");
    match single.verify("second", RESOURCE).await {
        Err(AuthError::Unavailable(why)) => assert!(why.contains("too many"), "{why}"),
        other => panic!("{other:?}"),
    }
    held.gate.add_permits(10);
    assert!(matches!(first.await.unwrap(), Err(AuthError::Invalid(_))));
    assert!(matches!(single.verify("second", RESOURCE).await, Err(AuthError::Invalid(_))));
    assert_eq!(held.most.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------------------------------------
// The protected endpoint.

/// Reads the notes.
#[tool]
async fn read_notes() -> String {
    "three notes".into()
}

/// Writes a note.
#[tool(scopes = ["notes:write"])]
async fn write_note(text: String) -> String {
    format!("saved {text}")
}

/// Deletes someone's note: the owner's own needs nothing more, anyone else's `notes:admin`.
#[tool]
async fn delete_note(owner: String, auth: Auth) -> Result<String, ToolError> {
    if auth.subject() != Some(owner.as_str()) && !auth.has_scope("notes:admin") {
        return Err(ToolError::insufficient_scope(["notes:admin"]));
    }
    Ok(format!("deleted {owner}'s note"))
}

/// Who is calling?
#[tool]
async fn whoami(auth: Auth) -> String {
    match auth.info() {
        Some(info) => format!("{} {:?}", info.principal().unwrap_or("?"), info.scopes),
        None => "anonymous".into(),
    }
}

/// What a handler sees of its HTTP request: whether it has an Authorization header, and the
/// request's facts as `Debug` prints them.
#[tool]
async fn request_facts(ctx: Context) -> String {
    let http = ctx.http().expect("called over HTTP");
    format!("authorization header: {}; {http:?}", http.headers.contains_key(header::AUTHORIZATION))
}

fn protected_server() -> Server {
    Server::builder()
        .name("protected")
        .resource(Resource::fixed(
            "notes://public",
            "public",
            ResourceContents::text("notes://public", None, "open"),
        ))
        .resource(
            Resource::fixed(
                "notes://secret",
                "secret",
                ResourceContents::text("notes://secret", None, "hidden"),
            )
            .scopes(["notes:secret"]),
        )
        .prompt(
            Prompt::new("audit", "Audit the notes.", |_, _| async {
                Ok(PromptResult::new(vec![PromptMessage::user("audit")]))
            })
            .scopes(["notes:admin"]),
        )
        .build()
        .unwrap()
}

fn authorization(issuer: &Issuer) -> Authorization {
    Authorization::jwt(&issuer.url, RESOURCE)
        .unwrap()
        .require_scopes(["notes:read"])
        .scope_implies("notes:admin", ["notes:write", "notes:secret"])
        .resource_name("Test notes")
}

fn post(body: &Value, token: Option<&str>, session: Option<&str>) -> Request<Body> {
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
    }
    request.body(Body::from(body.to_string())).unwrap()
}

async fn send(app: &Router, request: Request<Body>) -> (StatusCode, Option<String>, Value, Option<String>) {
    let response: Response<Body> = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let challenge = response.headers().get(header::WWW_AUTHENTICATE).map(|v| v.to_str().unwrap().to_owned());
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, challenge, body, session)
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

async fn open_session(app: &Router, token: &str) -> String {
    let (status, _, body, session) = send(app, post(&initialize(), Some(token), None)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    session.expect("a session")
}

#[tokio::test]
async fn requests_without_a_valid_token_get_the_challenge_and_the_metadata_is_published() {
    let issuer = issuer(&["rsa-1"]).await;
    let app = protected_server().http_router(HttpOptions::new().authorization(authorization(&issuer)));
    let metadata_url = "http://localhost/.well-known/oauth-protected-resource/mcp";

    let (status, challenge, body, _) = send(&app, post(&initialize(), None, None)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge.unwrap(),
        format!(r#"Bearer resource_metadata="{metadata_url}", scope="notes:read""#)
    );
    assert_eq!(body["error"]["code"], -32003, "{body}");

    let expired = token(&issuer.url, "rsa-1", json!({"exp": now() - 3600}));
    let (status, challenge, _, _) = send(&app, post(&initialize(), Some(&expired), None)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let challenge = challenge.unwrap();
    assert!(challenge.starts_with(r#"Bearer error="invalid_token""#), "{challenge}");
    assert!(challenge.contains(r#"error_description="expired""#), "{challenge}");

    // Tokens in the URI, or two Authorization headers: 400.
    let valid = token(&issuer.url, "rsa-1", json!({}));
    let mut in_uri = post(&initialize(), None, None);
    *in_uri.uri_mut() = format!("/mcp?access_token={valid}").parse().unwrap();
    assert_eq!(send(&app, in_uri).await.0, StatusCode::BAD_REQUEST);
    let mut twice = post(&initialize(), Some(&valid), None);
    twice.headers_mut().append(header::AUTHORIZATION, format!("Bearer {valid}").parse().unwrap());
    assert_eq!(send(&app, twice).await.0, StatusCode::BAD_REQUEST);

    // Without the server's required scope: 403.
    let no_scope = token(&issuer.url, "rsa-1", json!({"scope": "other"}));
    let (status, challenge, _, _) = send(&app, post(&initialize(), Some(&no_scope), None)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(challenge.unwrap().contains(r#"error="insufficient_scope""#));

    // The metadata, at the resource's path and at the root, needs no token.
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let request = Request::get(path).header(header::HOST, "localhost").body(Body::empty()).unwrap();
        let (status, _, metadata, _) = send(&app, request).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(metadata["resource"], RESOURCE);
        assert_eq!(metadata["authorization_servers"], json!([issuer.url]));
        assert_eq!(metadata["scopes_supported"], json!(["notes:read"]));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
        assert_eq!(metadata["resource_name"], "Test notes");
    }
}

#[tokio::test]
async fn scoped_tools_resources_and_prompts_are_hidden_and_answered_with_the_step_up() {
    let issuer = issuer(&["rsa-1"]).await;
    let app = protected_server().http_router(HttpOptions::new().authorization(authorization(&issuer)));
    let reader = token(&issuer.url, "rsa-1", json!({"scope": "notes:read"}));
    let session = open_session(&app, &reader).await;
    let ask = |body: Value| post(&body, Some(&reader), Some(&session));

    let (_, _, list, _) = send(&app, ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))).await;
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"read_notes") && !names.contains(&"write_note"), "{names:?}");

    let (status, challenge, body, _) = send(&app, ask(call(2, "write_note", json!({"text": "x"})))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let challenge = challenge.unwrap();
    assert!(challenge.starts_with(r#"Bearer error="insufficient_scope""#), "{challenge}");
    assert!(challenge.contains(r#"scope="notes:read notes:write""#), "{challenge}");
    assert!(
        challenge
            .contains(r#"resource_metadata="http://localhost/.well-known/oauth-protected-resource/mcp""#)
    );
    assert_eq!((body["id"].clone(), body["error"]["code"].clone()), (json!(2), json!(-32003)));

    // A handler's own decision: someone else's note needs notes:admin.
    let (status, challenge, _, _) = send(&app, ask(call(3, "delete_note", json!({"owner": "user-2"})))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(challenge.unwrap().contains(r#"scope="notes:read notes:admin""#));
    let (status, _, body, _) = send(&app, ask(call(4, "delete_note", json!({"owner": "user-1"})))).await;
    assert_eq!(
        (status, body["result"]["content"][0]["text"].as_str()),
        (StatusCode::OK, Some("deleted user-1's note"))
    );

    let (_, _, body, _) = send(&app, ask(call(5, "whoami", json!({})))).await;
    assert_eq!(body["result"]["content"][0]["text"], r#"user-1 {"notes:read"}"#);

    // Resources and prompts.
    let (_, _, list, _) =
        send(&app, ask(json!({"jsonrpc": "2.0", "id": 6, "method": "resources/list"}))).await;
    let uris: Vec<&str> =
        list["result"]["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["notes://public"]);
    let read =
        json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "notes://secret"}});
    let (status, challenge, _, _) = send(&app, ask(read.clone())).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(challenge.unwrap().contains(r#"scope="notes:read notes:secret""#));
    let (_, _, list, _) = send(&app, ask(json!({"jsonrpc": "2.0", "id": 8, "method": "prompts/list"}))).await;
    assert_eq!(list["result"]["prompts"], json!([]));
    let get = json!({"jsonrpc": "2.0", "id": 9, "method": "prompts/get", "params": {"name": "audit"}});
    assert_eq!(send(&app, ask(get.clone())).await.0, StatusCode::FORBIDDEN);

    // Step up: a token with notes:admin (which implies notes:write and notes:secret).
    let admin = token(&issuer.url, "rsa-1", json!({"scope": "notes:read notes:admin"}));
    let session = open_session(&app, &admin).await;
    let ask = |body: Value| post(&body, Some(&admin), Some(&session));
    let (status, _, body, _) = send(&app, ask(call(10, "write_note", json!({"text": "x"})))).await;
    assert_eq!((status, body["result"]["content"][0]["text"].as_str()), (StatusCode::OK, Some("saved x")));
    let (_, _, list, _) = send(&app, ask(json!({"jsonrpc": "2.0", "id": 11, "method": "tools/list"}))).await;
    assert!(list["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "write_note"));
    let (status, _, body, _) = send(&app, ask(read)).await;
    assert_eq!((status, body["result"]["contents"][0]["text"].as_str()), (StatusCode::OK, Some("hidden")));
    assert_eq!(send(&app, ask(get)).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_session_belongs_to_the_caller_who_opened_it() {
    let issuer = issuer(&["rsa-1"]).await;
    let app = protected_server().http_router(HttpOptions::new().authorization(authorization(&issuer)));
    let alice = token(&issuer.url, "rsa-1", json!({"sub": "alice"}));
    let mallory = token(&issuer.url, "rsa-1", json!({"sub": "mallory"}));
    let session = open_session(&app, &alice).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(send(&app, post(&ping, Some(&alice), Some(&session))).await.0, StatusCode::OK);
    assert_eq!(send(&app, post(&ping, Some(&mallory), Some(&session))).await.0, StatusCode::NOT_FOUND);
    assert_eq!(send(&app, post(&ping, None, Some(&session))).await.0, StatusCode::UNAUTHORIZED);
}

/// A stateless (2026-07-28) `tools/call` of `name`, with `token` as its bearer token.
fn stateless_call(token: Option<&str>, name: &str, arguments: Value) -> Request<Body> {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments, "_meta": meta}});
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name);
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    request.body(Body::from(body.to_string())).unwrap()
}

#[tokio::test]
async fn stateless_requests_are_authorized_the_same_way() {
    let issuer = issuer(&["ed-1"]).await;
    let app = protected_server().http_router(HttpOptions::new().authorization(authorization(&issuer)));
    let request = |token: Option<&str>, name: &str| {
        let arguments = if name == "write_note" { json!({"text": "x"}) } else { json!({}) };
        stateless_call(token, name, arguments)
    };
    assert_eq!(send(&app, request(None, "read_notes")).await.0, StatusCode::UNAUTHORIZED);
    let reader = token(&issuer.url, "ed-1", json!({}));
    let (status, _, body, _) = send(&app, request(Some(&reader), "read_notes")).await;
    assert_eq!(
        (status, body["result"]["content"][0]["text"].as_str()),
        (StatusCode::OK, Some("three notes"))
    );
    let (status, challenge, _, _) = send(&app, request(Some(&reader), "write_note")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(challenge.unwrap().contains(r#"scope="notes:read notes:write""#));
}

#[tokio::test]
async fn deferred_search_shows_only_the_tools_a_caller_may_call() {
    let tokens = StaticTokens::new()
        .token(STATIC, AuthInfo::new("reader").scopes(["notes:read"]))
        .unwrap()
        .token(
            "fedcba9876543210fedcba9876543210-writer",
            AuthInfo::new("writer").scopes(["notes:read", "notes:write"]),
        )
        .unwrap();
    let server = Server::builder().name("deferred").defer_tools(DeferredTools::new()).build().unwrap();
    let app =
        server.http_router(HttpOptions::new().authorization(Authorization::new(RESOURCE, tokens).unwrap()));
    let search = |token: &'static str, query: &'static str| {
        let app = app.clone();
        async move {
            let session = open_session(&app, token).await;
            let body = call(1, "search_tools", json!({"query": query}));
            let (_, _, answer, _) = send(&app, post(&body, Some(token), Some(&session))).await;
            let found =
                answer["result"]["structuredContent"]["tools"].as_array().cloned().unwrap_or_default();
            found.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
        }
    };
    let for_reader = search(STATIC, "write a note").await;
    assert!(!for_reader.contains(&"write_note".to_owned()), "{for_reader:?}");
    let for_writer = search("fedcba9876543210fedcba9876543210-writer", "write a note").await;
    assert!(for_writer.contains(&"write_note".to_owned()), "{for_writer:?}");
    // Calling it through the meta-tool is the same step-up as calling it directly.
    let session = open_session(&app, STATIC).await;
    let body = call(2, "call_tool", json!({"name": "write_note", "arguments": {"text": "x"}}));
    let (status, challenge, _, _) = send(&app, post(&body, Some(STATIC), Some(&session))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(challenge.unwrap().contains(r#"scope="notes:write""#));
}

#[tokio::test]
async fn a_forged_kid_is_neither_echoed_in_full_nor_a_line_of_its_own() {
    let issuer = issuer(&["rsa-1"]).await;
    let app = protected_server().http_router(HttpOptions::new().authorization(authorization(&issuer)));
    let kid = format!("k\nFORGED line{}", "x".repeat(10_000));
    let header = b64(&json!({"alg": "RS256", "typ": "at+jwt", "kid": kid}));
    let payload = b64(&json!({"iss": issuer.url, "aud": RESOURCE, "sub": "x", "exp": now() + 600}));
    let forged = format!("{header}.{payload}.c2lnbmF0dXJl");
    let response = app.clone().oneshot(post(&initialize(), Some(&forged), None)).await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let challenge = response.headers()[header::WWW_AUTHENTICATE].to_str().unwrap().to_owned();
    assert!(challenge.len() < 1024, "a {}-byte challenge", challenge.len());
    assert!(challenge.contains("unknown key"), "{challenge}");
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    assert!(bytes.len() < 1024, "a {}-byte answer", bytes.len());
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(!message.contains('\n'), "{message:?}");
    assert!(message.contains(r"unknown key (k\nFORGED line"), "{message}");
}

#[tokio::test]
async fn handlers_never_see_the_bearer_token() {
    let issuer = issuer(&["rsa-1"]).await;
    let app = protected_server().http_router(HttpOptions::new().authorization(authorization(&issuer)));
    let reader = token(&issuer.url, "rsa-1", json!({}));
    let session = open_session(&app, &reader).await;
    let (status, _, body, _) =
        send(&app, post(&call(1, "request_facts", json!({})), Some(&reader), Some(&session))).await;
    let text = body["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(text.starts_with("authorization header: false;"), "{text}");
    assert!(!text.contains(&reader), "{text}");
    assert!(text.contains("user-1"), "the verified identity is there: {text}");
    let (status, _, body, _) = send(&app, stateless_call(Some(&reader), "request_facts", json!({}))).await;
    let text = body["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(text.starts_with("authorization header: false;"), "{text}");
    assert!(!text.contains(&reader), "{text}");
}

#[tokio::test]
async fn http_parts_debug_redacts_credentials() {
    // Without authorization nothing is verified or removed: Debug must not show them anyway.
    let app = protected_server().http_router(HttpOptions::new());
    let mut request = stateless_call(Some("s3cret-bearer-token"), "request_facts", json!({}));
    let headers = request.headers_mut();
    headers.insert(header::PROXY_AUTHORIZATION, "Basic cHJveHktc2VjcmV0".parse().unwrap());
    headers.insert(header::COOKIE, "sid=c00kie-secret".parse().unwrap());
    headers.insert("x-tenant", "acme".parse().unwrap());
    let (status, _, body, _) = send(&app, request).await;
    let text = body["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(text.starts_with("authorization header: true;"), "{text}");
    for secret in ["s3cret-bearer-token", "cHJveHktc2VjcmV0", "c00kie-secret"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    for shown in ["authorization", "proxy-authorization", "cookie", "acme"] {
        assert!(text.contains(shown), "{shown} not in {text}");
    }
}

#[tokio::test]
async fn other_authorization_schemes_get_the_plain_challenge() {
    let issuer = issuer(&["rsa-1"]).await;
    let app = protected_server().http_router(HttpOptions::new().authorization(authorization(&issuer)));
    let plain = r#"Bearer resource_metadata="http://localhost/.well-known/oauth-protected-resource/mcp", scope="notes:read""#;
    for credentials in ["Basic dXNlcjpwYXNzd29yZA==", "Digest username=\"u\", realm=\"r\"", "ApiKey"] {
        let mut request = post(&initialize(), None, None);
        request.headers_mut().insert(header::AUTHORIZATION, credentials.parse().unwrap());
        let (status, challenge, body, _) = send(&app, request).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{credentials}: {body}");
        assert_eq!(challenge.as_deref(), Some(plain), "{credentials}");
    }
    // A Bearer header that is not `Bearer <token>` is a malformed request (RFC 6750 §3.1).
    for malformed in ["Bearer", "Bearer a b", "bearer  abc"] {
        let mut request = post(&initialize(), None, None);
        request.headers_mut().insert(header::AUTHORIZATION, malformed.parse().unwrap());
        let (status, challenge, _, _) = send(&app, request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{malformed}");
        assert!(challenge.unwrap().starts_with(r#"Bearer error="invalid_request""#), "{malformed}");
    }
}

#[tokio::test]
async fn without_authorization_scopes_are_not_enforced() {
    // Over stdio (the process owner) and HTTP without authorization, every tool is callable.
    let client = mcp_tools::testing::TestClient::connect(&protected_server()).await;
    let result = client.call("write_note", json!({"text": "x"})).await.unwrap();
    assert_eq!(result.text(), "saved x");
    assert_eq!(client.call("whoami", json!({})).await.unwrap().text(), "anonymous");
}
