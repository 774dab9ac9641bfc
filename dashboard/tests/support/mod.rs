//! Shared by the dashboard's tests: requests through the router, without
//! a socket, and the JSON's shape (`shape.rs`).
#![allow(dead_code)]

pub mod shape;
#[cfg(feature = "actor")]
pub mod stages;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// Sends `method path` (with a bearer `token` if given) and returns the
/// status and the body as JSON (`Null` if it is not JSON).
pub async fn call(
    router: &Router,
    method: &str,
    path: &str,
    token: Option<&str>,
) -> (StatusCode, serde_json::Value) {
    let mut request = Request::builder().method(method).uri(path);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}
