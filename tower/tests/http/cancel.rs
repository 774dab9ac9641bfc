//! Requests whose answer nobody waits for any more: the client went away,
//! or a timeout of the stack the layer sits in answered first. A queued
//! job is cancelled and never runs; a running one finishes; each counts
//! as abandoned.

use crate::common::{Gate, OpenOnDrop, hold, until};
use crate::{gated, one_worker};
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use priority_executor::Priority;
use priority_executor_tower::PriorityLayer;
use std::sync::Arc;
use std::time::Duration;
use tower::Layer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_client_goes_away_is_counted_abandoned() {
    use tower::Service;

    let exec = one_worker(8);
    let layer = PriorityLayer::new(exec.clone());
    let gate = Gate::default();
    let _open = OpenOnDrop(gate.clone());
    let mut service = layer.layer(gated(gate.clone()));
    let request = Request::post("/visa")
        .header("x-wait", "1")
        .body(http_body_util::Full::new(Bytes::from_static(b"gone")))
        .expect("a valid request");
    let mut answer = service.call(request);
    // Polled until the job runs, then dropped, as a server drops the
    // future of a closed connection.
    until("the job runs", || {
        let waker = std::task::Waker::noop();
        let polled = answer
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker));
        assert!(polled.is_pending(), "the worker is held");
        exec.metrics().threads.busy == 1
    })
    .await;
    drop(answer);
    gate.open();
    exec.wait_idle();
    let counts = layer.counts();
    assert_eq!(
        (counts.received, counts.abandoned, counts.in_flight()),
        (1, 1, 0)
    );
    // The job ran all the same; only its answer was dropped.
    assert_eq!(exec.metrics().lanes[0].completed, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_request_whose_client_goes_away_never_runs() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tower::Service;

    let exec = one_worker(8);
    let layer = PriorityLayer::new(exec.clone());
    let gate = Gate::default();
    let _open = OpenOnDrop(gate.clone());
    let held = hold(&exec, Priority(1), &gate).await;
    let ran = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&ran);
    let mut service = layer.layer(move |request: Request<Bytes>| {
        counted.fetch_add(1, Ordering::SeqCst);
        Response::new(request.into_body())
    });
    let request = Request::post("/visa")
        .body(http_body_util::Full::new(Bytes::from_static(b"gone")))
        .expect("a valid request");
    let mut answer = service.call(request);
    // Polled until its job is queued behind the held worker, then dropped.
    until("the request is queued", || {
        let waker = std::task::Waker::noop();
        let polled = answer
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker));
        assert!(polled.is_pending(), "the worker is held");
        exec.metrics().lanes[0].queued == 1
    })
    .await;
    drop(answer);
    gate.open();
    held.await.expect("the holding job ran");
    exec.wait_idle();
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the handler never ran");
    let counts = layer.counts();
    assert_eq!(
        (counts.received, counts.abandoned, counts.in_flight()),
        (1, 1, 0)
    );
    let lane = exec.metrics().lanes[0].clone();
    assert_eq!((lane.cancelled, lane.completed), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_sits_in_a_service_builder_stack_with_a_timeout_and_a_limit() {
    use http_body_util::BodyExt;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tower::{ServiceBuilder, ServiceExt};

    let exec = one_worker(8);
    let layer = PriorityLayer::new(exec.clone());
    let ran = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&ran);
    let handler = move |request: Request<Bytes>| {
        counted.fetch_add(1, Ordering::SeqCst);
        Response::new(request.into_body())
    };
    // The same layer and handler in stacks of two time limits: one no
    // answer on a loaded machine comes near, one that a request held
    // behind a blocked worker always passes.
    let stack = |limit: Duration| {
        ServiceBuilder::new()
            .timeout(limit)
            .concurrency_limit(4)
            .layer(layer.clone())
            .service(handler.clone())
    };
    let post = |body: &'static [u8]| {
        Request::post("/visa")
            .body(http_body_util::Full::new(Bytes::from_static(body)))
            .expect("a valid request")
    };
    // Through the stack and back.
    let response = stack(Duration::from_secs(30))
        .oneshot(post(b"ok"))
        .await
        .expect("answered");
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await.expect("a body");
    assert_eq!(body.to_bytes(), Bytes::from_static(b"ok"));
    // The timeout drops the future of a request queued behind a held
    // worker: the job is cancelled, never run, and counted abandoned.
    let gate = Gate::default();
    let _open = OpenOnDrop(gate.clone());
    let held = hold(&exec, Priority(1), &gate).await;
    let timed_out = stack(Duration::from_millis(100))
        .oneshot(post(b"late"))
        .await;
    assert!(timed_out.is_err(), "the timeout answers first");
    gate.open();
    held.await.expect("the holding job ran");
    exec.wait_idle();
    assert_eq!(ran.load(Ordering::SeqCst), 1, "only the first request ran");
    let counts = layer.counts();
    assert_eq!(
        (counts.received, counts.completed, counts.abandoned),
        (2, 1, 1)
    );
    assert_eq!(exec.metrics().lanes[0].cancelled, 1);
}
