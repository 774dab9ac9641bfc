//! Mounted under a path, the page finds its script, style and data below
//! that path.

mod support;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use priority_executor_dashboard::Dashboard;
use support::call;
use tower::ServiceExt;

async fn page(app: &axum::Router, path: &str) -> String {
    let response = app
        .clone()
        .oneshot(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

#[tokio::test]
async fn the_page_works_nested_under_a_path() {
    let app = axum::Router::new().nest("/ops/dashboard", Dashboard::new().router());
    let html = page(&app, "/ops/dashboard").await;
    assert!(html.contains(r#"<base href="/ops/dashboard/">"#), "{html}");
    for path in [
        "/ops/dashboard/app.js",
        "/ops/dashboard/style.css",
        "/ops/dashboard/api/snapshot",
    ] {
        let (status, _) = call(&app, "GET", path, None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
    }
}

#[tokio::test]
async fn at_the_root_the_base_is_the_root() {
    let html = page(&Dashboard::new().router(), "/").await;
    assert!(html.contains(r#"<base href="/">"#), "{html}");
}
