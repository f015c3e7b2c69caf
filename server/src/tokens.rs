//! Upload tokens for test rigs. A token is 32 random bytes in hex, shown once when created;
//! only `hex(sha256(token))` is stored, so a stolen database does not hand out upload rights.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::Rng;
use sha2::{Digest, Sha256};
use store::{Revoked, Store};

use crate::error::AppError;

/// Longest token name accepted.
const MAX_NAME: usize = 64;

/// A token that authenticated a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub id: i64,
    pub name: String,
    /// The machines and build labels it may write (globs); `None` means any.
    pub scopes: store::TokenScopes,
}

impl Token {
    /// 403 unless the token may write runs of `machine` for the build `build`.
    pub fn check_scope(&self, machine: &str, build: &str) -> Result<(), AppError> {
        for (what, glob, value) in [
            ("machine", &self.scopes.machines, machine),
            ("build", &self.scopes.builds, build),
        ] {
            if let Some(g) = glob
                && !glob_matches(g, value)
            {
                return Err(AppError::Forbidden(format!(
                    "token {:?} may upload only for {what}s matching {g:?}, not {value:?}",
                    self.name
                )));
            }
        }
        Ok(())
    }
}

/// Whether `value` matches the shell-style glob `pattern` (`*`, `?`, `[...]`).
pub fn glob_matches(pattern: &str, value: &str) -> bool {
    glob::Pattern::new(pattern).is_ok_and(|p| p.matches(value))
}

/// Checks a scope glob given to `token create`.
pub fn check_glob(what: &str, pattern: &str) -> Result<(), TokenError> {
    if pattern.trim().is_empty() {
        return Err(TokenError::Invalid(format!("--{what} must not be empty")));
    }
    glob::Pattern::new(pattern)
        .map(|_| ())
        .map_err(|e| TokenError::Invalid(format!("--{what} {pattern:?} is not a valid glob: {e}")))
}

/// A stored token, as `quiescent token list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TokenInfo {
    pub id: i64,
    pub name: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    /// Runs uploaded with it.
    pub runs: i64,
}

/// Why a token cannot be created or revoked.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("{0}")]
    Invalid(String),
    #[error("a token named {0:?} already exists")]
    Exists(String),
    #[error("no token named {0:?}")]
    NotFound(String),
    #[error("token {0:?} is already revoked")]
    AlreadyRevoked(String),
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A new random token: 32 bytes from the thread's CSPRNG (seeded by the OS), in hex.
pub fn generate() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// What the database keeps of a token.
pub fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Equality whose time does not depend on where the inputs differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    // black_box keeps the optimiser from turning the fold into an early-exit comparison.
    std::hint::black_box(diff) == 0
}

fn check_name(name: &str) -> Result<(), TokenError> {
    if name.trim().is_empty() {
        return Err(TokenError::Invalid("a token name must not be empty".into()));
    }
    if name.len() > MAX_NAME {
        return Err(TokenError::Invalid(format!(
            "a token name is at most {MAX_NAME} bytes"
        )));
    }
    if name.chars().any(|c| c.is_control()) {
        return Err(TokenError::Invalid(
            "a token name must not contain control characters".into(),
        ));
    }
    Ok(())
}

/// Creates a token named `name` and returns it: the only time it is visible.
pub async fn create(store: &Store, name: &str) -> Result<String, TokenError> {
    create_scoped(store, name, &store::TokenScopes::default()).await
}

/// Creates a token named `name` that may write only the machines and builds of `scopes`.
pub async fn create_scoped(
    store: &Store,
    name: &str,
    scopes: &store::TokenScopes,
) -> Result<String, TokenError> {
    check_name(name)?;
    if let Some(g) = &scopes.machines {
        check_glob("machines", g)?;
    }
    if let Some(g) = &scopes.builds {
        check_glob("builds", g)?;
    }
    let token = generate();
    if !store.insert_token(name, &hash(&token)).await? {
        return Err(TokenError::Exists(name.to_string()));
    }
    if scopes != &store::TokenScopes::default() {
        store.set_token_scopes(name, scopes).await?;
    }
    Ok(token)
}

/// Every token, oldest first, with the number of runs it uploaded.
pub async fn list(store: &Store) -> Result<Vec<TokenInfo>, TokenError> {
    let rows = store.tokens().await?;
    Ok(rows
        .into_iter()
        .map(|r| TokenInfo {
            id: r.id,
            name: r.name,
            created_at: r.created_at,
            revoked_at: r.revoked_at,
            runs: r.runs,
        })
        .collect())
}

/// Revokes the token named `name`: its uploads are refused from now on (403); the runs it
/// uploaded stay.
pub async fn revoke(store: &Store, name: &str) -> Result<(), TokenError> {
    match store.revoke_token(name).await? {
        Revoked::Now => Ok(()),
        Revoked::NotFound => Err(TokenError::NotFound(name.to_string())),
        Revoked::Already => Err(TokenError::AlreadyRevoked(name.to_string())),
    }
}

/// The token presented in an `Authorization: Bearer TOKEN` header: 401 when it is missing or
/// unknown, 403 when it was revoked. The token itself never appears in an error or a log.
pub async fn authenticate(store: &Store, authorization: Option<&str>) -> Result<Token, AppError> {
    look_up(store, &hash(bearer(authorization)?)).await
}

/// [`authenticate`] for uploads, taking a token looked up in the last [`FRESH`] from `cache`
/// rather than from the database: the lookup is a hand-off to a database connection's thread
/// and back, about a sixth of a small upload's CPU time. Nothing is given up by it: the
/// transaction that stores an upload's runs checks that its token is not revoked (the store's
/// group commit), so an upload of a token revoked meanwhile stores nothing and is answered
/// 403 as it would have been here, only after its body is read (a request repeating an
/// idempotency key already answered gets that answer again).
pub async fn authenticate_upload(
    cache: &TokenCache,
    store: &Store,
    authorization: Option<&str>,
) -> Result<Token, AppError> {
    let given = hash(bearer(authorization)?);
    let now = Instant::now();
    if let Some(token) = cache.get(&given, now) {
        return Ok(token);
    }
    let token = look_up(store, &given).await?;
    cache.put(given, token.clone(), now);
    Ok(token)
}

/// The token of an `Authorization: Bearer TOKEN` header (401 without one).
fn bearer(authorization: Option<&str>) -> Result<&str, AppError> {
    let Some(value) = authorization else {
        return Err(AppError::Unauthorized(
            "missing Authorization header; send `Authorization: Bearer TOKEN` with a token from `quiescent token create`".into(),
        ));
    };
    let token = match value.split_once(' ') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim(),
        _ => {
            return Err(AppError::Unauthorized(
                "the Authorization header must be `Bearer TOKEN`".into(),
            ));
        }
    };
    if token.is_empty() {
        return Err(AppError::Unauthorized(
            "the Authorization header holds no token".into(),
        ));
    }
    Ok(token)
}

/// The stored token whose hash is `given`: 401 when there is none, 403 when it was revoked.
async fn look_up(store: &Store, given: &str) -> Result<Token, AppError> {
    // The lookup is by hash, so its timing tells nothing about stored tokens; the final check
    // compares the hashes in constant time all the same.
    let row = store.token_by_hash(given).await?;
    let Some(row) = row else {
        return Err(AppError::Unauthorized("unknown token".into()));
    };
    if !constant_time_eq(row.hash.as_bytes(), given.as_bytes()) {
        return Err(AppError::Unauthorized("unknown token".into()));
    }
    if row.revoked_at.is_some() {
        return Err(store::Error::Revoked { token: row.name }.into());
    }
    Ok(Token {
        id: row.id,
        name: row.name,
        scopes: row.scopes,
    })
}

/// How long a token looked up for an upload is taken without asking the database again. Its
/// scopes are set when it is created; a revocation within this time is caught when the
/// upload's runs would be stored.
pub const FRESH: Duration = Duration::from_secs(5);

/// The most tokens [`TokenCache`] holds: a lab has tens of rigs. Past it, the cache starts
/// again empty.
const MAX_CACHED: usize = 1024;

/// Upload tokens looked up lately, by hash: only tokens that were found and not revoked.
#[derive(Debug, Default)]
pub struct TokenCache {
    tokens: Mutex<HashMap<String, (Token, Instant)>>,
}

impl TokenCache {
    /// The token hashed `given`, if it was looked up less than [`FRESH`] before `now`.
    fn get(&self, given: &str, now: Instant) -> Option<Token> {
        let tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        let (token, at) = tokens.get(given)?;
        (now.saturating_duration_since(*at) < FRESH).then(|| token.clone())
    }

    fn put(&self, given: String, token: Token, now: Instant) {
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        if tokens.len() >= MAX_CACHED && !tokens.contains_key(&given) {
            tokens.clear();
        }
        tokens.insert(given, (token, now));
    }
}

/// The name of the token (the rig) that uploaded run `run_id`, if it was uploaded.
pub async fn uploader_name(store: &Store, run_id: i64) -> Option<String> {
    store.uploader_name(run_id).await.ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rig(id: i64) -> Token {
        Token {
            id,
            name: format!("rig-{id}"),
            scopes: store::TokenScopes::default(),
        }
    }

    #[test]
    fn cached_tokens_are_taken_only_while_fresh() {
        let cache = TokenCache::default();
        let t0 = Instant::now();
        assert_eq!(cache.get("h1", t0), None, "nothing looked up yet");
        cache.put("h1".into(), rig(1), t0);
        assert_eq!(cache.get("h1", t0 + FRESH / 2), Some(rig(1)));
        assert_eq!(cache.get("h2", t0), None, "another hash");
        assert_eq!(cache.get("h1", t0 + FRESH), None, "stale: looked up again");
        // Looked up again, it is fresh from then on.
        cache.put("h1".into(), rig(1), t0 + FRESH);
        assert_eq!(cache.get("h1", t0 + FRESH + FRESH / 2), Some(rig(1)));
    }

    #[test]
    fn the_cache_holds_a_bounded_number_of_tokens() {
        let cache = TokenCache::default();
        let now = Instant::now();
        for i in 0..MAX_CACHED as i64 + 10 {
            cache.put(format!("h{i}"), rig(i), now);
        }
        let held = cache.tokens.lock().unwrap().len();
        assert!(held <= MAX_CACHED, "{held} held");
        let last = MAX_CACHED as i64 + 9;
        assert_eq!(cache.get(&format!("h{last}"), now), Some(rig(last)));
    }

    #[test]
    fn tokens_are_64_hex_digits_and_differ() {
        let a = generate();
        let b = generate();
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn hash_is_sha256_hex() {
        // sha256("abc") from FIPS 180-2.
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn constant_time_eq_compares() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn scopes_match_globs() {
        let t = Token {
            id: 1,
            name: "rig".into(),
            scopes: store::TokenScopes {
                machines: Some("rig-*".into()),
                builds: None,
            },
        };
        assert!(t.check_scope("rig-7", "v6.9").is_ok());
        assert!(t.check_scope("other", "v6.9").is_err());
        assert!(check_glob("builds", "[").is_err());
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("rig-1").is_ok());
        assert!(check_name(" ").is_err());
        assert!(check_name("a\nb").is_err());
        assert!(check_name(&"x".repeat(65)).is_err());
    }
}
