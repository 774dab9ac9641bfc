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

/// A token read from a file or an environment variable with its newline,
/// or padded with spaces, is the token without them: the request's token
/// is trimmed the same way before the two are compared.
#[tokio::test]
async fn a_configured_token_is_trimmed_as_the_request_s_is() {
    let exec = executor();
    let router = Dashboard::new()
        .executor(&exec)
        .actions(Actions::with_token("ops", "s3cret\n").token("oncall", " \tt2  \r\n"))
        .router();
    let (status, _) = call(&router, "POST", PAUSE, Some("s3cret")).await;
    assert_eq!(status, StatusCode::OK, "the token without its newline");
    assert!(exec.is_lane_paused(Priority(1)));
    let (status, _) = call(&router, "POST", RESUME, Some("t2")).await;
    assert_eq!(status, StatusCode::OK, "the token without its padding");
    assert!(!exec.is_lane_paused(Priority(1)));
    for wrong in ["s3cret\\n", "t2  x", "s3cre"] {
        let (status, _) = call(&router, "POST", PAUSE, Some(wrong)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "token {wrong:?}");
    }
}

/// The message of the panic `configure` ends in, or `None` if it returns.
fn refusal(configure: impl FnOnce() -> Actions + std::panic::UnwindSafe) -> Option<String> {
    let payload = std::panic::catch_unwind(configure).err()?;
    Some(
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default(),
    )
}

/// A blank token (empty, or only whitespace, such as an unset variable's
/// newline) could never be sent: it is refused where it is configured,
/// naming its holder, rather than answering every action with 401. So is
/// one with a character no `Authorization` header can carry.
#[test]
fn a_blank_or_unsendable_token_is_refused_naming_its_holder() {
    for blank in ["", "   ", "\n", " \t\r\n "] {
        let message = refusal(|| Actions::with_token("ops", blank))
            .unwrap_or_else(|| panic!("the blank token {blank:?} was accepted"));
        assert!(message.contains("\"ops\""), "{blank:?}: {message}");
        assert!(message.contains("blank"), "{blank:?}: {message}");
        let message = refusal(|| Actions::with_token("ops", "s3cret").token("oncall", blank))
            .unwrap_or_else(|| panic!("the blank token {blank:?} was accepted"));
        assert!(message.contains("\"oncall\""), "{blank:?}: {message}");
    }
    for unsendable in ["s3cr\u{e9}t", "s3\ncret", "s3\u{7f}cret"] {
        let message = refusal(|| Actions::with_token("ops", unsendable))
            .unwrap_or_else(|| panic!("the token {unsendable:?} was accepted"));
        assert!(message.contains("\"ops\""), "{unsendable:?}: {message}");
        assert!(
            !message.contains("s3"),
            "the token is not printed: {message}"
        );
    }
}

/// A path whose priority is not a `u32`, or whose executor name is not
/// UTF-8, is checked and logged like any action: 401 without the token,
/// 400 naming the bad value with it.
#[tokio::test]
async fn a_malformed_lane_path_is_checked_and_logged() {
    let exec = executor();
    let records = Arc::new(Mutex::new(Vec::<ActionRecord>::new()));
    let log = records.clone();
    let router = Dashboard::new()
        .executor(&exec)
        .executor_named("visa eu", &exec)
        .actions(Actions::with_token("ops", "s3cret"))
        .on_action(move |r| log.lock().unwrap().push(r.clone()))
        .router();
    let malformed = [
        ("/api/executors/visa/lanes/abc/pause", "\"abc\""),
        (
            "/api/executors/visa/lanes/4294967296/pause",
            "\"4294967296\"",
        ),
        ("/api/executors/visa/lanes/-1/resume", "\"-1\""),
        ("/api/executors/vi%FFsa/lanes/1/pause", "\"vi%FFsa\""),
    ];
    for (path, _) in malformed {
        let (status, body) = call(&router, "POST", path, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(body["outcome"], "refused: no valid bearer token", "{path}");
    }
    for (path, bad) in malformed {
        let (status, body) = call(&router, "POST", path, Some("s3cret")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}");
        let outcome = body["outcome"].as_str().unwrap();
        assert!(outcome.contains(bad), "{path}: {outcome}");
    }
    assert!(!exec.is_lane_paused(Priority(1)));
    // A well-formed escape is decoded: the name reaches its executor.
    let (status, _) = call(
        &router,
        "POST",
        "/api/executors/visa%20eu/lanes/1/pause",
        Some("s3cret"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(exec.is_lane_paused(Priority(1)));

    let records = records.lock().unwrap().clone();
    let summary: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|r| (r.who.as_str(), r.action.as_str(), r.executor.as_str()))
        .collect();
    let expected = [
        ("pause", "visa"),
        ("pause", "visa"),
        ("resume", "visa"),
        ("pause", "vi%FFsa"),
    ];
    let expected: Vec<(&str, &str, &str)> = ["anonymous", "ops"]
        .iter()
        .flat_map(|who| expected.iter().map(move |(a, e)| (*who, *a, *e)))
        .chain([("ops", "pause", "visa eu")])
        .collect();
    assert_eq!(summary, expected);
    let (refused, granted) = records.split_at(records.len() - 1);
    assert!(refused.iter().all(|r| r.outcome.starts_with("refused")));
    assert_eq!(
        (granted[0].priority, granted[0].outcome.as_str()),
        (1, "ok")
    );
    exec.shutdown();
}

/// Read-only, a malformed path is refused as any action is, and logged.
#[tokio::test]
async fn a_malformed_lane_path_is_forbidden_when_actions_are_disabled() {
    let records = Arc::new(Mutex::new(Vec::<ActionRecord>::new()));
    let log = records.clone();
    let router = Dashboard::new()
        .on_action(move |r| log.lock().unwrap().push(r.clone()))
        .router();
    let (status, _) = call(&router, "POST", "/api/executors/x/lanes/abc/pause", None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(records.lock().unwrap().len(), 1);
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

    /// A pipeline name that is not UTF-8 is checked and logged like any
    /// drain: 401 without the token, 400 naming it with one.
    #[tokio::test]
    async fn a_malformed_pipeline_name_is_checked_and_logged() {
        let stage = Stage::builder("parse", |_| Pass).spawn().unwrap();
        let records = Arc::new(Mutex::new(Vec::<ActionRecord>::new()));
        let log = records.clone();
        let router = Dashboard::new()
            .stage(&stage)
            .actions(Actions::with_token("ops", "s3cret"))
            .on_action(move |r| log.lock().unwrap().push(r.clone()))
            .router();
        let path = "/api/pipelines/pa%FFrse/drain";
        let (status, _) = call(&router, "POST", path, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, body) = call(&router, "POST", path, Some("s3cret")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let outcome = body["outcome"].as_str().unwrap();
        assert!(outcome.contains("\"pa%FFrse\""), "{outcome}");
        assert!(!stage.addr().is_shut_down(), "not drained");
        let records = records.lock().unwrap().clone();
        let summary: Vec<(&str, Option<&str>)> = records
            .iter()
            .map(|r| (r.who.as_str(), r.pipeline.as_deref()))
            .collect();
        assert_eq!(
            summary,
            [("anonymous", Some("pa%FFrse")), ("ops", Some("pa%FFrse"))]
        );
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
