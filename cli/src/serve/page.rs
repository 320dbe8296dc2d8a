//! The page at `/`: the playground, the run browser and the pool view (`cli/web`, built
//! by Vite into `cli/web/dist` and embedded in the binary at build time, so the server
//! stays one program). The shell is static and holds no data; everything it shows comes
//! from the API with the API's token, which the page asks for when the server wants one.
//!
//! Every answer carries a Content-Security-Policy that allows no inline script and no
//! other origin: job code, stdout and feedback are put on the page as text, figures as
//! images, and a policy violation is a bug the browser reports. The one inline thing
//! allowed is the editor's generated stylesheet, by a nonce made fresh for each answer
//! for `index.html` (Vite writes a placeholder where it goes).

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use rust_embed::RustEmbed;

use super::problem::Problem;

/// The built page.
#[derive(RustEmbed)]
#[folder = "web/dist"]
struct Dist;

/// What Vite writes where the nonce goes (`html.cspNonce` in `web/vite.config.ts`).
const NONCE_PLACEHOLDER: &str = "PYWARD_CSP_NONCE";

/// What the page may load: its own scripts, styles and API; styles with the answer's
/// nonce; images from itself, `data:` and `blob:` (figures fetched with the token);
/// nothing inline otherwise, nothing framed.
fn csp(nonce: &str) -> String {
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self' 'nonce-{nonce}'; \
         img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; base-uri 'none'; \
         form-action 'none'; frame-ancestors 'none'"
    )
}

/// The page's routes: `/` and its hashed assets.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route("/assets/{*file}", get(asset))
}

async fn index() -> Response {
    let Some(page) = Dist::get("index.html") else {
        return not_found("the page was not built into this binary");
    };
    let nonce = match fresh_nonce() {
        Ok(n) => n,
        Err(e) => {
            tracing::error!("no randomness for the page's nonce: {e}");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    let html = String::from_utf8_lossy(&page.data).replace(NONCE_PLACEHOLDER, &nonce);
    answer(
        "text/html; charset=utf-8",
        "no-cache",
        &csp(&nonce),
        html.into_bytes(),
    )
}

async fn asset(Path(file): Path<String>) -> Response {
    let path = format!("assets/{file}");
    let Some(found) = Dist::get(&path) else {
        return not_found("no such file in the page");
    };
    let media_type = mime_guess::from_path(&path).first_or_octet_stream();
    // Vite names assets by their content's hash: a name never changes meaning.
    let cache = "public, max-age=31536000, immutable";
    // An asset is never a document; it gets the strictest policy.
    let policy = "default-src 'none'; frame-ancestors 'none'";
    answer(media_type.as_ref(), cache, policy, found.data.into_owned())
}

fn answer(media_type: &str, cache: &'static str, policy: &str, body: Vec<u8>) -> Response {
    let value = |v: &str| HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static(""));
    let headers = [
        (header::CONTENT_TYPE, value(media_type)),
        (header::CACHE_CONTROL, HeaderValue::from_static(cache)),
        (header::CONTENT_SECURITY_POLICY, value(policy)),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
    ];
    (StatusCode::OK, headers, body).into_response()
}

fn not_found(detail: &str) -> Response {
    Problem::new(StatusCode::NOT_FOUND, "not_found", detail).into_response()
}

/// 128 random bits, base64: a nonce no page content can guess.
fn fresh_nonce() -> Result<String, getrandom::Error> {
    use base64::Engine;
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}
