//! [`StaticTokens`]: a fixed table of bearer tokens, for internal deployments.

use std::collections::HashMap;
use std::path::Path;

use futures_util::future::BoxFuture;
use sha2::{Digest, Sha256};

use super::token::{AuthConfigError, AuthError, TokenVerifier};
use crate::context::auth::AuthInfo;

/// A fixed table of bearer tokens, each with the identity it stands for: for internal
/// deployments where a proxy or a secret store hands each client its own long random token.
/// Tokens are kept only as SHA-256 digests and looked up by digest, so the comparison takes the
/// same time whatever the token; each must be at least 32 characters.
///
/// ```
/// use mcp_tools::AuthInfo;
/// use mcp_tools::auth::StaticTokens;
///
/// let tokens = StaticTokens::new()
///     .token("4f1c0b1e9a7d43c2b8e6f0a5d3c2b1a0", AuthInfo::new("build-bot").scopes(["notes:read"]))
///     .unwrap();
/// ```
#[derive(Clone, Default)]
pub struct StaticTokens {
    by_digest: HashMap<[u8; 32], AuthInfo>,
}

impl std::fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticTokens").field("tokens", &self.by_digest.len()).finish()
    }
}

/// The shortest token accepted.
const MIN_LENGTH: usize = 32;

impl StaticTokens {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `token`, standing for `identity`.
    pub fn token(mut self, token: &str, identity: AuthInfo) -> Result<Self, AuthConfigError> {
        if token.len() < MIN_LENGTH || !token.chars().all(|c| c.is_ascii_graphic()) {
            return Err(AuthConfigError(format!(
                "a static token must be at least {MIN_LENGTH} printable characters without spaces (e.g. `openssl rand -hex 32`)"
            )));
        }
        self.by_digest.insert(Sha256::digest(token.as_bytes()).into(), identity);
        Ok(self)
    }

    /// Reads a table from a file: one token a line, `TOKEN SUBJECT [SCOPE …]`; blank lines and
    /// lines starting with `#` are skipped.
    pub fn from_file(path: &Path) -> Result<Self, AuthConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| AuthConfigError(format!("cannot read the token file {}: {e}", path.display())))?;
        let mut tokens = StaticTokens::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_ascii_whitespace();
            let (Some(token), Some(subject)) = (words.next(), words.next()) else {
                return Err(AuthConfigError(format!(
                    "{}:{}: expected `TOKEN SUBJECT [SCOPE …]`",
                    path.display(),
                    number + 1
                )));
            };
            tokens = tokens
                .token(token, AuthInfo::new(subject).scopes(words))
                .map_err(|e| AuthConfigError(format!("{}:{}: {e}", path.display(), number + 1)))?;
        }
        Ok(tokens)
    }

    /// How many tokens the table has.
    pub fn len(&self) -> usize {
        self.by_digest.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }
}

impl TokenVerifier for StaticTokens {
    fn verify<'a>(
        &'a self,
        token: &'a str,
        _resource: &'a str,
    ) -> BoxFuture<'a, Result<AuthInfo, AuthError>> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let found = self.by_digest.get(&digest).cloned();
        Box::pin(async move { found.ok_or_else(|| AuthError::Invalid("unknown token".into())) })
    }
}
