//! Actions: pausing and resuming a lane, draining a pipeline (feature
//! `actor`), allowed only when the dashboard was given [`Actions`], and
//! then only to a request carrying one of its bearer tokens. Every request
//! for an action is logged, refused or not.

use crate::board::Dashboard;
use crate::log::{ActionRecord, now_ms};
use axum::Json;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use priority_executor::{PauseError, Priority};
use serde_json::json;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::PoisonError;

/// `pause` or `resume`.
#[derive(Clone, Copy)]
pub(crate) enum Verb {
    Pause,
    Resume,
}

impl Verb {
    fn as_str(self) -> &'static str {
        match self {
            Verb::Pause => "pause",
            Verb::Resume => "resume",
        }
    }
}

/// What an action is aimed at.
enum Target<'a> {
    Lane {
        executor: &'a str,
        priority: u32,
    },
    #[cfg_attr(not(feature = "actor"), allow(dead_code))]
    Pipeline(&'a str),
}

/// `POST …/api/executors/{name}/lanes/{priority}/pause`.
pub(crate) async fn pause(State(board): State<Dashboard>, request: Request) -> Response {
    on_lane(&board, Verb::Pause, &request)
}

/// `POST …/api/executors/{name}/lanes/{priority}/resume`.
pub(crate) async fn resume(State(board): State<Dashboard>, request: Request) -> Response {
    on_lane(&board, Verb::Resume, &request)
}

/// A lane action, checked and logged. The path's executor and priority
/// are read here rather than by an extractor, so that a malformed one is
/// checked and logged as any action is: `400 Bad Request` comes only
/// after the token.
fn on_lane(board: &Dashboard, verb: Verb, request: &Request) -> Response {
    // `…/{executor}/lanes/{priority}/{verb}`.
    let executor = segment(request, 3);
    let priority = segment(request, 1).and_then(|p| p.parse::<u32>().map_err(|_| p));
    let target = Target::Lane {
        executor: executor.as_ref().unwrap_or_else(|raw| raw),
        // A priority that is not one is logged as 0; the answer names it.
        priority: *priority.as_ref().unwrap_or(&0),
    };
    act(board, verb.as_str(), target, request, || {
        match (&executor, &priority) {
            (Err(raw), _) => bad("executor name", raw, "not UTF-8 once decoded"),
            (_, Err(raw)) => bad(
                "priority",
                raw,
                &format!("not a whole number from 0 to {}", u32::MAX),
            ),
            (Ok(executor), Ok(priority)) => perform(board, verb, executor, *priority),
        }
    })
}

/// `POST …/api/pipelines/{name}/drain`: begins a graceful drain, behind
/// everything the pipeline accepted, and answers at once.
#[cfg(feature = "actor")]
pub(crate) async fn drain(State(board): State<Dashboard>, request: Request) -> Response {
    // `…/{pipeline}/drain`.
    let pipeline = segment(&request, 1);
    let target = Target::Pipeline(pipeline.as_ref().unwrap_or_else(|raw| raw));
    act(&board, "drain", target, &request, || match &pipeline {
        Err(raw) => bad("pipeline name", raw, "not UTF-8 once decoded"),
        Ok(name) => board.drain_pipeline(name),
    })
}

/// The answer to a granted request whose path holds a bad value.
fn bad(what: &str, raw: &str, why: &str) -> (StatusCode, String) {
    (
        StatusCode::BAD_REQUEST,
        format!("refused: bad {what} {raw:?}: {why}"),
    )
}

/// The path's segment `back` places before its last, percent-decoded; as
/// sent if it is not UTF-8 once decoded.
fn segment(request: &Request, back: usize) -> Result<String, String> {
    let raw = request.uri().path().rsplit('/').nth(back).unwrap_or("");
    // A `%` not followed by two hex digits stays as it is, as in the
    // router's own decoding.
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map(std::borrow::Cow::into_owned)
        .map_err(|_| raw.to_owned())
}

/// Checks the request's right to act, does it (`perform`) if granted, and
/// logs it either way.
fn act(
    board: &Dashboard,
    verb: &str,
    target: Target<'_>,
    request: &Request,
    perform: impl FnOnce() -> (StatusCode, String),
) -> Response {
    let inner = &board.inner;
    let from = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.to_string());
    let holder = inner
        .actions
        .as_ref()
        .and_then(|actions| actions.holder(request.headers()));
    let (status, outcome) = match (&inner.actions, holder) {
        (None, _) => (
            StatusCode::FORBIDDEN,
            "refused: actions are disabled".to_owned(),
        ),
        (Some(_), None) => (
            StatusCode::UNAUTHORIZED,
            "refused: no valid bearer token".to_owned(),
        ),
        (Some(_), Some(_)) => perform(),
    };
    let (executor, priority, pipeline) = match target {
        Target::Lane { executor, priority } => (executor.to_owned(), priority, None),
        Target::Pipeline(name) => (String::new(), 0, Some(name.to_owned())),
    };
    let record = ActionRecord {
        at_ms: now_ms(),
        who: holder.unwrap_or("anonymous").to_owned(),
        from,
        action: verb.to_owned(),
        executor,
        priority,
        pipeline,
        outcome: outcome.clone(),
    };
    inner
        .log
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(record.clone());
    let hook = &inner.on_action;
    // The hook is the application's code: a panic in it is its own.
    let _ = catch_unwind(AssertUnwindSafe(|| hook(&record)));
    let body = Json(json!({ "ok": status.is_success(), "outcome": outcome }));
    let mut response = (status, body).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"priority-executor-dashboard\""),
        );
    }
    response
}

fn perform(board: &Dashboard, verb: Verb, executor: &str, priority: u32) -> (StatusCode, String) {
    let Some(watched) = board.inner.executors.iter().find(|w| w.name == executor) else {
        return (
            StatusCode::NOT_FOUND,
            "refused: no such executor".to_owned(),
        );
    };
    let exec = &watched.executor;
    let result = match verb {
        Verb::Pause => exec.pause_lane(Priority(priority)),
        Verb::Resume => exec.resume_lane(Priority(priority)),
    };
    match result {
        Ok(()) => (StatusCode::OK, "ok".to_owned()),
        Err(e @ PauseError::UnknownPriority { .. }) => {
            (StatusCode::NOT_FOUND, format!("refused: {e}"))
        }
        Err(e) => (StatusCode::CONFLICT, format!("refused: {e}")),
    }
}
