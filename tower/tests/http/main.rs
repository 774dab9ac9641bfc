//! The layer behind a real axum server on loopback, through a real HTTP
//! client: lanes from headers, 503 when full, 504 on expiry, 500 on a
//! panic, and a graceful shutdown that answers every request in flight.

mod cancel;
mod common;
mod edges;
mod reload;

use axum::Router;
use axum::routing::post_service;
use bytes::Bytes;
use common::{Gate, Http, OpenOnDrop, Server, hold, until};
use http::{Request, Response, StatusCode};
use priority_executor::{Capacity, Executor, Priority, Registry};
use priority_executor_tower::{Outcome, PriorityLayer};
use std::sync::Arc;
use std::time::Duration;
use tower::Layer;

pub(crate) const RULES: &str = r#"
[executors.visa]
core_threads = 1
max_threads = 1
rules = "visa"
lanes = [{ priority = 10, capacity = 8 }, { priority = 1, capacity = 8 }]

[rules.visa]
default_priority = 1
[[rules.visa.when]]
priority = 10
header = "PRIORITYID"
equals = "ABC"
"#;

/// Echoes the body, after waiting on `gate` if the request says so.
fn gated(gate: Gate) -> impl Fn(Request<Bytes>) -> Response<Bytes> + Clone + Send + Sync {
    move |request| {
        if request.headers().contains_key("x-wait") {
            gate.wait();
        }
        if request.headers().contains_key("x-panic") {
            panic!("the form is unreadable");
        }
        Response::new(request.into_body())
    }
}

/// One worker and one lane of `capacity`.
fn one_worker(capacity: usize) -> Executor {
    Executor::builder()
        .name("test")
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(1), Capacity::Bounded(capacity))
        .build()
        .expect("a valid executor")
}

fn app(layer: &PriorityLayer, gate: Gate) -> Router {
    Router::new().route("/visa", post_service(layer.layer(gated(gate))))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_priority_header_picks_the_lane_by_the_registrys_rules() {
    let executors = Arc::new(Registry::from_toml_str(RULES).expect("valid rules"));
    let layer = PriorityLayer::from_registry(Arc::clone(&executors), "visa").expect("declared");
    let server = Server::start(app(&layer, Gate::default())).await;
    let http = Http::new();

    let urgent = http
        .post(server.addr, "/visa", &[("PRIORITYID", "ABC")], "urgent")
        .await;
    let plain = http
        .post(server.addr, "/visa", &[("PRIORITYID", "XYZ")], "plain")
        .await;
    let bare = http.post(server.addr, "/visa", &[], "bare").await;
    assert_eq!(
        (urgent.status, urgent.body.as_str()),
        (StatusCode::OK, "urgent")
    );
    assert_eq!(
        (plain.status, plain.body.as_str()),
        (StatusCode::OK, "plain")
    );
    assert_eq!((bare.status, bare.body.as_str()), (StatusCode::OK, "bare"));

    let metrics = executors.get("visa").expect("declared").metrics();
    let completed = |p| metrics.lane(Priority(p)).expect("a lane").completed;
    assert_eq!((completed(10), completed(1)), (1, 2));
    let counts = layer.counts();
    assert_eq!(
        (counts.received, counts.completed, counts.in_flight()),
        (3, 3, 0)
    );
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closure_can_classify_and_a_priority_without_lane_is_a_500() {
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Bounded(8))
        .lane(Priority(1), Capacity::Bounded(8))
        .build()
        .expect("a valid executor");
    let layer = PriorityLayer::new(exec.clone()).classify(|head| {
        match head.headers.get("x-tier").map(|v| v.as_bytes()) {
            Some(b"gold") => Priority(10),
            Some(b"lost") => Priority(7),
            _ => Priority(1),
        }
    });
    let server = Server::start(app(&layer, Gate::default())).await;
    let http = Http::new();

    assert_eq!(
        http.post(server.addr, "/visa", &[("x-tier", "gold")], "g")
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        http.post(server.addr, "/visa", &[], "s").await.status,
        StatusCode::OK
    );
    let lost = http
        .post(server.addr, "/visa", &[("x-tier", "lost")], "l")
        .await;
    assert_eq!(lost.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(lost.body, "no lane for priority 7 (lanes: 10, 1)");

    let metrics = exec.metrics();
    assert_eq!(metrics.lane(Priority(10)).expect("a lane").completed, 1);
    assert_eq!(metrics.lane(Priority(1)).expect("a lane").completed, 1);
    let counts = layer.counts();
    assert_eq!((counts.completed, counts.misrouted), (2, 1));
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_lane_answers_503_with_retry_after_and_hands_the_request_back() {
    let exec = one_worker(1);
    let (hand_back, handed_back) = std::sync::mpsc::channel();
    let layer = PriorityLayer::new(exec.clone())
        .retry_after(Duration::from_millis(2500))
        .on_refused(move |r| {
            let _ = hand_back.send(r);
        });
    let gate = Gate::default();
    let _open = OpenOnDrop(gate.clone());
    let server = Server::start(app(&layer, gate.clone())).await;
    let http = Http::new();

    // The worker holds the first request; the second fills the lane.
    let (addr, h) = (server.addr, http.clone());
    let running =
        tokio::spawn(async move { h.post(addr, "/visa", &[("x-wait", "1")], "first").await });
    until("the first request runs", || {
        exec.metrics().threads.busy == 1
    })
    .await;
    let (addr, h) = (server.addr, http.clone());
    let queued = tokio::spawn(async move { h.post(addr, "/visa", &[], "second").await });
    until("the second request is queued", || {
        exec.metrics().queued() == 1
    })
    .await;

    let shed = http
        .post(
            server.addr,
            "/visa",
            &[("x-form", "42")],
            "third, untouched",
        )
        .await;
    assert_eq!(shed.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        shed.headers.get("retry-after").map(|v| v.as_bytes()),
        Some(&b"3"[..])
    );
    assert_eq!(shed.body, "lane 1 is full (capacity 1)");
    // The hook runs on a thread of its own, after the answer is ready.
    let refused =
        tokio::task::spawn_blocking(move || handed_back.recv_timeout(Duration::from_secs(20)))
            .await
            .expect("joined")
            .expect("the refused request was handed back");
    assert_eq!(refused.outcome, Outcome::Shed);
    assert_eq!(refused.priority, Priority(1));
    assert_eq!(refused.request.body(), "third, untouched");
    assert_eq!(refused.request.headers()["x-form"], "42");

    gate.open();
    assert_eq!(running.await.expect("joined").body, "first");
    assert_eq!(queued.await.expect("joined").body, "second");
    let counts = layer.counts();
    assert_eq!((counts.received, counts.completed, counts.shed), (3, 2, 1));
    assert_eq!(exec.metrics().lanes[0].rejected, 1);
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_not_started_within_its_ttl_answers_504() {
    let exec = one_worker(8);
    let layer = PriorityLayer::new(exec.clone()).ttl(Duration::ZERO);
    let gate = Gate::default();
    let _open = OpenOnDrop(gate.clone());
    let server = Server::start(app(&layer, gate.clone())).await;
    let http = Http::new();

    // A zero ttl: the first request starts at once only if the worker is
    // free, which it is not; hold it with a job of the test's own.
    let held = hold(&exec, Priority(1), &gate).await;
    let (addr, h) = (server.addr, http.clone());
    let late = tokio::spawn(async move { h.post(addr, "/visa", &[], "late").await });
    until("the request is queued", || exec.metrics().queued() == 1).await;
    gate.open();
    held.await.expect("the holding job ran");

    let late = late.await.expect("joined");
    assert_eq!(late.status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(late.body, "not started within the time limit (1 lane)");
    assert_eq!(layer.counts().expired, 1);
    assert_eq!(exec.metrics().lanes[0].expired, 1);
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_handler_answers_500_and_the_worker_goes_on() {
    let exec = one_worker(8);
    let layer = PriorityLayer::new(exec.clone());
    let server = Server::start(app(&layer, Gate::default())).await;
    let http = Http::new();

    let failed = http
        .post(server.addr, "/visa", &[("x-panic", "1")], "bad")
        .await;
    assert_eq!(failed.status, StatusCode::INTERNAL_SERVER_ERROR);
    // The panic message is not sent to the client.
    assert_eq!(failed.body, "the handler panicked");
    let next = http.post(server.addr, "/visa", &[], "good").await;
    assert_eq!((next.status, next.body.as_str()), (StatusCode::OK, "good"));

    let counts = layer.counts();
    assert_eq!((counts.panicked, counts.completed), (1, 1));
    assert_eq!(exec.metrics().lanes[0].panicked, 1);
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_answers_413_unread_by_the_handler() {
    let exec = one_worker(8);
    let layer = PriorityLayer::new(exec.clone()).body_limit(4);
    let server = Server::start(app(&layer, Gate::default())).await;
    let http = Http::new();

    let big = http.post(server.addr, "/visa", &[], "too long").await;
    assert_eq!(big.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(layer.counts().too_large, 1);
    assert_eq!(exec.metrics().submitted(), 0);
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_shutdown_answers_every_request_in_flight() {
    let exec = one_worker(8);
    let layer = PriorityLayer::new(exec.clone());
    let gate = Gate::default();
    let _open = OpenOnDrop(gate.clone());
    let server = Server::start(app(&layer, gate.clone())).await;
    let http = Http::new();

    let mut in_flight = Vec::new();
    for i in 0..3 {
        let (addr, h) = (server.addr, http.clone());
        in_flight.push(tokio::spawn(async move {
            h.post(addr, "/visa", &[("x-wait", "1")], &format!("form {i}"))
                .await
        }));
    }
    until("one request runs, two are queued", || {
        let m = exec.metrics();
        m.threads.busy == 1 && m.queued() == 2
    })
    .await;

    let stopping = server.begin_shutdown();
    gate.open();
    for (i, request) in in_flight.into_iter().enumerate() {
        let answer = request.await.expect("joined");
        assert_eq!(
            (answer.status, answer.body),
            (StatusCode::OK, format!("form {i}"))
        );
    }
    stopping.await.expect("joined").expect("served");
    let counts = layer.counts();
    assert_eq!(
        (counts.received, counts.completed, counts.in_flight()),
        (3, 3, 0)
    );
    drop(exec); // runs whatever is queued (nothing) and joins the worker
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_low_lane_is_shed_first_while_the_high_lane_still_queues() {
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Bounded(4))
        .lane(Priority(1), Capacity::Bounded(1))
        .build()
        .expect("a valid executor");
    let layer = PriorityLayer::new(exec.clone()).classify(|head| {
        if head.headers.contains_key("PRIORITYID") {
            Priority(10)
        } else {
            Priority(1)
        }
    });
    let gate = Gate::default();
    let _open = OpenOnDrop(gate.clone());
    let server = Server::start(app(&layer, gate.clone())).await;
    let http = Http::new();

    let held = hold(&exec, Priority(10), &gate).await;
    let mut queued = Vec::new();
    for (i, priority) in [false, true, true].into_iter().enumerate() {
        let (addr, h) = (server.addr, http.clone());
        let headers: &[(&str, &str)] = if priority {
            &[("PRIORITYID", "ABC")]
        } else {
            &[]
        };
        queued.push(tokio::spawn(async move {
            h.post(addr, "/visa", headers, &format!("{i}")).await
        }));
        until("the request is queued", || exec.metrics().queued() == i + 1).await;
    }
    let standard = http.post(server.addr, "/visa", &[], "standard").await;
    assert_eq!(standard.status, StatusCode::SERVICE_UNAVAILABLE);
    let premium = tokio::spawn({
        let (addr, h) = (server.addr, http.clone());
        async move {
            h.post(addr, "/visa", &[("PRIORITYID", "ABC")], "premium")
                .await
        }
    });
    until("the priority request is queued", || {
        exec.metrics().queued() == 4
    })
    .await;

    gate.open();
    held.await.expect("the holding job ran");
    for request in queued {
        assert_eq!(request.await.expect("joined").status, StatusCode::OK);
    }
    assert_eq!(premium.await.expect("joined").body, "premium");
    let counts = layer.counts();
    assert_eq!((counts.completed, counts.shed), (4, 1));
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}
