//! Actions: refused when disabled (403) or without a valid token (401),
//! done with one, and every request logged with who, what and the outcome.

mod support;

use axum::http::StatusCode;
use priority_executor::{Capacity, Executor, Priority};
use priority_executor_dashboard::{ActionRecord, Actions, Dashboard};
use std::sync::{Arc, Mutex};
use support::call;

fn executor() -> Executor {
    Executor::builder()
        .name("visa")
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap()
}

const PAUSE: &str = "/api/executors/visa/lanes/1/pause";
const RESUME: &str = "/api/executors/visa/lanes/1/resume";

#[tokio::test]
async fn actions_are_refused_unless_enabled() {
    let exec = executor();
    let records = Arc::new(Mutex::new(Vec::<ActionRecord>::new()));
    let log = records.clone();
    let router = Dashboard::new()
        .executor(&exec)
        .on_action(move |r| log.lock().unwrap().push(r.clone()))
        .router();
    let (status, body) = call(&router, "POST", PAUSE, Some("anything")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body["ok"], false);
    assert!(!exec.is_lane_paused(Priority(1)));
    let records = records.lock().unwrap().clone();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].who, "anonymous");
    assert!(records[0].outcome.starts_with("refused"));
    // Read-only: the snapshot says so, for the page to hide its buttons.
    let (_, json) = call(&router, "GET", "/api/snapshot", None).await;
    assert_eq!(json["actions_enabled"], false);
}

#[tokio::test]
async fn a_token_is_needed_and_the_holder_is_logged() {
    let exec = executor();
    let records = Arc::new(Mutex::new(Vec::<ActionRecord>::new()));
    let log = records.clone();
    let router = Dashboard::new()
        .executor(&exec)
        .actions(Actions::with_token("ops", "s3cret"))
        .on_action(move |r| log.lock().unwrap().push(r.clone()))
        .router();

    for token in [None, Some("wrong"), Some("s3cre")] {
        let (status, _) = call(&router, "POST", PAUSE, token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "token {token:?}");
        assert!(!exec.is_lane_paused(Priority(1)));
    }
    let (status, body) = call(&router, "POST", PAUSE, Some("s3cret")).await;
    assert_eq!((status, body["ok"].as_bool()), (StatusCode::OK, Some(true)));
    assert!(exec.is_lane_paused(Priority(1)));
    let (_, json) = call(&router, "GET", "/api/snapshot", None).await;
    assert_eq!(json["executors"][0]["lanes"][1]["paused"], true);

    let (status, _) = call(&router, "POST", RESUME, Some("s3cret")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!exec.is_lane_paused(Priority(1)));

    let (status, _) = call(
        &router,
        "POST",
        "/api/executors/visa/lanes/7/pause",
        Some("s3cret"),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(
        &router,
        "POST",
        "/api/executors/nope/lanes/1/pause",
        Some("s3cret"),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    exec.shutdown();
    let (status, _) = call(&router, "POST", PAUSE, Some("s3cret")).await;
    assert_eq!(status, StatusCode::CONFLICT);

    let records = records.lock().unwrap().clone();
    let summary: Vec<(&str, &str, bool)> = records
        .iter()
        .map(|r| (r.who.as_str(), r.action.as_str(), r.outcome == "ok"))
        .collect();
    assert_eq!(
        summary,
        [
            ("anonymous", "pause", false),
            ("anonymous", "pause", false),
            ("anonymous", "pause", false),
            ("ops", "pause", true),
            ("ops", "resume", true),
            ("ops", "pause", false),
            ("ops", "pause", false),
            ("ops", "pause", false),
        ]
    );
    // The page's copy of the log holds the same records.
    let (_, json) = call(&router, "GET", "/api/snapshot", None).await;
    assert_eq!(json["actions"].as_array().unwrap().len(), records.len());
}

#[tokio::test]
async fn a_panicking_hook_does_not_change_the_answer() {
    let exec = executor();
    let router = Dashboard::new()
        .executor(&exec)
        .actions(Actions::with_token("ops", "s3cret"))
        .on_action(|_| panic!("dashboard test: the hook panics"))
        .router();
    let (status, _) = call(&router, "POST", PAUSE, Some("s3cret")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(exec.is_lane_paused(Priority(1)));
    // And the dashboard still answers.
    let (status, _) = call(&router, "GET", "/api/snapshot", None).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_page_and_its_assets_are_served_from_the_crate() {
    let router = Dashboard::new().router();
    for (path, needle) in [
        ("/", "<script src=\"app.js\">"),
        ("/app.js", "EventSource"),
        ("/style.css", ".executor"),
    ] {
        let response = tower::ServiceExt::oneshot(
            router.clone(),
            axum::http::Request::get(path)
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(text.contains(needle), "{path}");
        // Nothing is fetched from elsewhere (the SVG namespace is a name,
        // not a fetch).
        let text = text.replace("http://www.w3.org/2000/svg", "");
        assert!(
            !text.contains("http://") && !text.contains("https://"),
            "{path}"
        );
    }
}
