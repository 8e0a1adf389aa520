//! Authorization for the HTTP transport (feature `auth`): the server is an OAuth 2.1 resource
//! server. [`Authorization`] says which resource this is (its canonical URI), which
//! authorization servers issue its tokens, and how a bearer token is verified
//! ([`TokenVerifier`]: [`JwtVerifier`] for JWTs signed with the issuer's published keys,
//! [`Introspection`] for opaque tokens, [`StaticTokens`] for internal deployments).
//!
//! Set it with [`HttpOptions::authorization`](crate::HttpOptions::authorization). Then every
//! request needs `Authorization: Bearer <token>`: without a valid one it is answered 401 with
//! `WWW-Authenticate: Bearer resource_metadata="…"` pointing at the RFC 9728 metadata this
//! server publishes at `/.well-known/oauth-protected-resource…`; a token without the scopes the
//! server requires, or a tool, resource or prompt declares (`#[tool(scopes = [...])]`), gets
//! 403 `insufficient_scope` naming them (the step-up challenge). What a caller may not use it
//! does not see listed. Handlers see the verified identity through
//! [`Context::auth`](crate::Context::auth) or an [`Auth`](crate::Auth) parameter, never the
//! token: the `Authorization` header is removed from the request once verified.
//!
//! ```no_run
//! use mcp_tools::auth::Authorization;
//! use mcp_tools::{HttpOptions, Server};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder().name("notes").build()?;
//! // Tokens are JWTs from this issuer, for this resource (their `aud`).
//! let auth = Authorization::jwt("https://login.example.com", "https://mcp.example.com/mcp")?
//!     .require_scopes(["notes:read"]);
//! let options = HttpOptions::new().allow_host("mcp.example.com").authorization(auth);
//! server.serve_http("127.0.0.1:8080".parse()?, options).await?;
//! # Ok(())
//! # }
//! ```

pub(crate) mod authorization;
mod fetch;
mod introspection;
mod jwt;
mod static_tokens;
pub(crate) mod token;

pub use authorization::Authorization;
pub use introspection::Introspection;
pub use jwt::JwtVerifier;
pub use static_tokens::StaticTokens;
pub use token::{AuthConfigError, AuthError, TokenVerifier};
