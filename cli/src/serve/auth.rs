//! Bearer-token authentication: the token comes from a file (never the command line,
//! where `ps` shows it), and is compared in constant time.

use std::path::Path;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::problem::Problem;

/// Tokens shorter than this are refused at start-up: guessable.
const MIN_TOKEN_CHARS: usize = 16;

/// The server's bearer token, kept as its SHA-256 so that comparing a presented token
/// takes the same time whatever its length or how much of it matches.
#[derive(Clone)]
pub struct Token {
    digest: [u8; 32],
}

impl Token {
    /// Reads the token from `path` (surrounding whitespace trimmed).
    pub fn from_file(path: &Path) -> Result<Token, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
        let token = text.trim();
        if token.chars().count() < MIN_TOKEN_CHARS {
            return Err(format!(
                "the token in {} is shorter than {MIN_TOKEN_CHARS} characters",
                path.display()
            ));
        }
        Ok(Token {
            digest: Sha256::digest(token.as_bytes()).into(),
        })
    }

    /// Whether `presented` is the token, in time independent of its content.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented).into();
        digest.ct_eq(&self.digest).into()
    }
}

/// Middleware: lets a request through when no token is configured or when it carries
/// `Authorization: Bearer <token>`; otherwise 401 with `WWW-Authenticate`.
pub async fn require_token(
    State(token): State<Option<Token>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = token else {
        return next.run(request).await;
    };
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "));
    if presented.is_some_and(|p| token.matches(p)) {
        return next.run(request).await;
    }
    let mut response = Problem::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "missing or wrong bearer token: send `Authorization: Bearer <token>`",
    )
    .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer realm=\"pyward\""),
    );
    response
}
