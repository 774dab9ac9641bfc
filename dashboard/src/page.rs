//! The page: one HTML file, its script and its style sheet, compiled into
//! the crate (no CDN, no build step; it works with no internet).

use axum::extract::OriginalUri;
use axum::http::header;
use axum::response::IntoResponse;

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/style.css");

/// No page of the dashboard may be framed or load anything from
/// elsewhere.
const POLICY: &str = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The page, with its `<base>` set to where it is mounted: nested at
/// `/ops/dashboard`, the page is at `/ops/dashboard` (no slash: axum's
/// nesting) and its script at `/ops/dashboard/app.js`.
pub(crate) async fn index(OriginalUri(uri): OriginalUri) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        INDEX.replacen("{base}", &escape(&base_of(uri.path())), 1),
    )
}

/// The page's own path as a directory.
fn base_of(path: &str) -> String {
    if path.ends_with('/') {
        path.to_owned()
    } else {
        format!("{path}/")
    }
}

/// `text` safe inside a double-quoted HTML attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

pub(crate) async fn script() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        SCRIPT,
    )
}

pub(crate) async fn style() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        STYLE,
    )
}
