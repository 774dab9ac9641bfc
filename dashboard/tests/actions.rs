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

/// Draining a pipeline: 403 when actions are disabled, 401 without a
/// token, and with one a graceful drain behind everything queued.
#[cfg(feature = "actor")]
mod drain {
    use super::support::call;
    use super::support::stages::{HOLD, Pass, gated};
    use axum::http::StatusCode;
    use priority_executor::actor::{Pipeline, Reason, Stage};
    use priority_executor_dashboard::{ActionRecord, Actions, Dashboard};
    use std::sync::{Arc, Mutex};

    const DRAIN: &str = "/api/pipelines/parse/drain";

    #[tokio::test]
    async fn a_drain_is_refused_unless_actions_are_enabled() {
        let stage = Stage::builder("parse", |_| Pass).spawn().unwrap();
        let router = Dashboard::new().stage(&stage).on_action(|_| {}).router();
        let (status, body) = call(&router, "POST", DRAIN, Some("anything")).await;
        assert_eq!(
            (status, body["ok"].as_bool()),
            (StatusCode::FORBIDDEN, Some(false))
        );
        assert!(!stage.addr().is_shut_down(), "not drained");
        let (_, json) = call(&router, "GET", "/api/snapshot", None).await;
        let record = &json["actions"][0];
        assert_eq!(
            (record["action"].as_str(), record["pipeline"].as_str()),
            (Some("drain"), Some("parse"))
        );
        assert!(record["outcome"].as_str().unwrap().starts_with("refused"));
    }

    #[tokio::test]
    async fn a_drain_needs_a_token_and_performs_every_queued_letter() {
        let (first, gate) = gated("parse");
        let pipeline = Pipeline::builder(first)
            .then(Stage::builder("store", |_| Pass))
            .spawn()
            .unwrap();
        let records = Arc::new(Mutex::new(Vec::<ActionRecord>::new()));
        let log = records.clone();
        let router = Dashboard::new()
            .pipeline(&pipeline)
            .actions(Actions::with_token("ops", "s3cret"))
            .on_action(move |r| log.lock().unwrap().push(r.clone()))
            .router();
        let addr = pipeline.addr();
        addr.send(HOLD).unwrap();
        gate.wait_held();
        let queued: Vec<u32> = (0..20).map(|n| n * 2).collect();
        for &n in &queued {
            addr.send(n).unwrap();
        }

        for token in [None, Some("wrong")] {
            let (status, _) = call(&router, "POST", DRAIN, token).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "token {token:?}");
            assert!(!addr.is_shut_down(), "not drained");
        }
        let (status, _) = call(&router, "POST", "/api/pipelines/nope/drain", Some("s3cret")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);

        let (status, body) = call(&router, "POST", DRAIN, Some("s3cret")).await;
        assert_eq!((status, body["ok"].as_bool()), (StatusCode::OK, Some(true)));
        // The drain has begun: nothing more is accepted, what was is kept.
        assert!(addr.is_shut_down());
        assert!(addr.send(2).is_err());
        gate.release();
        let exits = pipeline.join();
        for exit in &exits {
            assert_eq!(exit.reason, Reason::Drained, "{}", exit.metrics.name);
            let m = &exit.metrics;
            // The held letter and every queued one, none dead.
            assert_eq!(
                (m.performed, m.dead_lettered),
                (queued.len() as u64 + 1, 0),
                "{}",
                m.name
            );
        }
        let (_, json) = call(&router, "GET", "/api/snapshot", None).await;
        assert_eq!(json["pipelines"][0]["ended"], true);
        assert_eq!(json["pipelines"][0]["stages"][1]["finished"], "drained");

        // Once ended, there is nothing to drain.
        let (status, _) = call(&router, "POST", DRAIN, Some("s3cret")).await;
        assert_eq!(status, StatusCode::CONFLICT);

        let records = records.lock().unwrap().clone();
        let summary: Vec<(&str, &str, Option<&str>, bool)> = records
            .iter()
            .map(|r| {
                (
                    r.who.as_str(),
                    r.action.as_str(),
                    r.pipeline.as_deref(),
                    r.outcome == "ok",
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("anonymous", "drain", Some("parse"), false),
                ("anonymous", "drain", Some("parse"), false),
                ("ops", "drain", Some("nope"), false),
                ("ops", "drain", Some("parse"), true),
                ("ops", "drain", Some("parse"), false),
            ]
        );
        assert!(
            records[3]
                .to_string()
                .contains("drain pipeline \"parse\" by ops")
        );
    }
}
