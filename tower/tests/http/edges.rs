//! The layer's edges: builder values at their extremes, and an
//! `on_refused` hook that blocks or panics.

use crate::common::{Gate, Http, OpenOnDrop, Server};
use crate::{app, gated, one_worker};
use http::StatusCode;
use priority_executor::Priority;
use priority_executor_tower::{MAX_RETRY_AFTER, Outcome, PriorityLayer, REFUSED_BACKLOG};
use std::sync::mpsc;
use std::time::Duration;
use tower::Layer;

/// A generous limit for what should come at once: a hang, not a timing.
const WATCHDOG: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_saturates_at_its_maximum_and_other_limits_take_any_value() {
    let max = MAX_RETRY_AFTER.as_secs().to_string();
    let cases = [
        (Duration::MAX, max.as_str()),
        (MAX_RETRY_AFTER + Duration::from_nanos(1), max.as_str()),
        (Duration::from_millis(1500), "2"),
        (Duration::ZERO, "1"),
    ];
    for (after, expected) in cases {
        let exec = one_worker(8);
        let layer = PriorityLayer::new(exec.clone()).retry_after(after);
        exec.shutdown();
        let server = Server::start(app(&layer, Gate::default())).await;
        let refused = Http::new().post(server.addr, "/visa", &[], "late").await;
        assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            refused.headers.get("retry-after").map(|v| v.as_bytes()),
            Some(expected.as_bytes()),
            "retry_after({after:?})"
        );
        server
            .begin_shutdown()
            .await
            .expect("joined")
            .expect("served");
    }

    // The largest ttl and body limit mean none.
    let exec = one_worker(8);
    let layer = PriorityLayer::new(exec.clone())
        .ttl(Duration::MAX)
        .body_limit(usize::MAX);
    let server = Server::start(app(&layer, Gate::default())).await;
    let served = Http::new().post(server.addr, "/visa", &[], "form").await;
    assert_eq!(
        (served.status, served.body.as_str()),
        (StatusCode::OK, "form")
    );
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_on_refused_hook_does_not_delay_the_503_and_still_runs() {
    let exec = one_worker(8);
    let latch = Gate::default();
    let _open = OpenOnDrop(latch.clone());
    let (seen, hooked) = mpsc::channel();
    let layer = PriorityLayer::new(exec.clone()).on_refused({
        let latch = latch.clone();
        move |refused| {
            latch.wait();
            let _ = seen.send((refused.outcome, refused.request.into_body()));
        }
    });
    exec.shutdown();
    let server = Server::start(app(&layer, Gate::default())).await;

    // The hook is held on the latch: the 503 must come all the same.
    let answer = tokio::time::timeout(
        WATCHDOG,
        Http::new().post(server.addr, "/visa", &[], "spool me"),
    )
    .await
    .expect("the 503 waited for the on_refused hook");
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        hooked.try_recv().is_err(),
        "the hook ran past its latch before it was opened"
    );

    latch.open();
    let (outcome, body) = tokio::task::spawn_blocking(move || hooked.recv_timeout(WATCHDOG))
        .await
        .expect("joined")
        .expect("the on_refused hook never ran");
    assert_eq!((outcome, &body[..]), (Outcome::ShutDown, &b"spool me"[..]));
    assert_eq!(layer.counts().shut_down, 1);
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_on_refused_hook_is_counted_and_the_next_refusal_is_handed_over() {
    let exec = one_worker(8);
    let (seen, hooked) = mpsc::channel();
    let layer = PriorityLayer::new(exec.clone())
        .classify(|_| Priority(7))
        .on_refused(move |refused| {
            if refused.request.body() == "first" {
                panic!("the spool is unwritable");
            }
            let _ = seen.send(refused.request.into_body());
        });
    let server = Server::start(app(&layer, Gate::default())).await;
    let http = Http::new();

    for body in ["first", "second"] {
        let answer = tokio::time::timeout(WATCHDOG, http.post(server.addr, "/visa", &[], body))
            .await
            .expect("the server answers");
        assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
    }
    let body = tokio::task::spawn_blocking(move || hooked.recv_timeout(WATCHDOG))
        .await
        .expect("joined")
        .expect("the hook was not called after its panic");
    assert_eq!(&body[..], b"second");
    let counts = layer.counts();
    assert_eq!((counts.misrouted, counts.hook_panicked), (2, 1));
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_past_the_hooks_backlog_are_answered_and_counted_dropped() {
    use http_body_util::Full;
    use tower::Service;

    let exec = one_worker(8);
    let latch = Gate::default();
    let _open = OpenOnDrop(latch.clone());
    let (entered, in_hook) = mpsc::channel();
    let (seen, hooked) = mpsc::channel();
    let layer = PriorityLayer::new(exec.clone()).on_refused({
        let latch = latch.clone();
        move |refused| {
            let _ = entered.send(());
            latch.wait();
            let _ = seen.send(refused.request.into_body());
        }
    });
    exec.shutdown();
    let mut service = layer.layer(gated(Gate::default()));
    let mut refuse = async |body: String| {
        let request = http::Request::post("/visa")
            .body(Full::new(bytes::Bytes::from(body)))
            .expect("a valid request");
        let answer = tokio::time::timeout(WATCHDOG, service.call(request))
            .await
            .expect("the 503 waited for the on_refused hook")
            .expect("infallible");
        assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE);
    };

    // The first is in the hook, held; the backlog takes the next ones.
    refuse("held".to_owned()).await;
    tokio::task::spawn_blocking(move || in_hook.recv_timeout(WATCHDOG))
        .await
        .expect("joined")
        .expect("the hook was entered");
    for i in 0..REFUSED_BACKLOG + 2 {
        refuse(format!("{i}")).await;
    }
    let counts = layer.counts();
    let expected = (REFUSED_BACKLOG as u64 + 3, 2);
    assert_eq!((counts.shut_down, counts.hook_dropped), expected);

    latch.open();
    let handed = tokio::task::spawn_blocking(move || {
        (0..=REFUSED_BACKLOG)
            .map(|_| hooked.recv_timeout(WATCHDOG).expect("handed over"))
            .collect::<Vec<_>>()
    })
    .await
    .expect("joined");
    assert_eq!(handed[0], "held");
    assert_eq!(handed[REFUSED_BACKLOG], format!("{}", REFUSED_BACKLOG - 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_classifier_answers_500_and_the_next_request_is_served() {
    let exec = one_worker(8);
    let layer = PriorityLayer::new(exec.clone()).classify(|head| {
        if head.headers.contains_key("x-odd") {
            panic!("the classifier met a header it did not expect");
        }
        Priority(1)
    });
    let server = Server::start(app(&layer, Gate::default())).await;
    let http = Http::new();

    let odd = tokio::time::timeout(
        WATCHDOG,
        http.post(server.addr, "/visa", &[("x-odd", "1")], "odd"),
    )
    .await
    .expect("the server answers");
    assert_eq!(
        (odd.status, odd.body.as_str()),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the request's classifier panicked"
        )
    );
    let next = http.post(server.addr, "/visa", &[], "good").await;
    assert_eq!((next.status, next.body.as_str()), (StatusCode::OK, "good"));
    let counts = layer.counts();
    assert_eq!(
        (counts.panicked, counts.completed, counts.abandoned),
        (1, 1, 0)
    );
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_no_worker_can_start_for_is_shed_without_the_systems_reason() {
    // No core thread; no thread of this stack size can start at all.
    let exec = priority_executor::Executor::builder()
        .core_threads(0)
        .stack_size(1 << 46)
        .lane(Priority(1), priority_executor::Capacity::Unbounded)
        .build()
        .expect("a valid executor");
    let layer = PriorityLayer::new(exec.clone());
    let server = Server::start(app(&layer, Gate::default())).await;
    let http = Http::new();

    let answer = tokio::time::timeout(WATCHDOG, http.post(server.addr, "/visa", &[], "x"))
        .await
        .expect("the server answers");
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "no worker thread could be started for it"
        )
    );
    let counts = layer.counts();
    assert_eq!((counts.shed, counts.shut_down), (1, 0));
    server
        .begin_shutdown()
        .await
        .expect("joined")
        .expect("served");
}
