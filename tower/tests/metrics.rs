//! Feature `metrics`: each outcome is counted through the `metrics` facade
//! as well as in `counts()`.
#![cfg(feature = "metrics")]

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use metrics::{SharedString, Unit};
use metrics_util::CompositeKey;
use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use priority_executor::{Capacity, Executor, Priority};
use priority_executor_tower::PriorityLayer;
use tower::{Layer, Service};

/// One snapshot of the recorder (taking one resets its counters).
type Seen = Vec<(CompositeKey, Option<Unit>, Option<SharedString>, DebugValue)>;

/// The sum of the counters `name` with the label `key` = `value`.
fn counter(seen: &Seen, name: &str, key: &str, value: &str) -> u64 {
    seen.iter()
        .filter(|(k, ..)| {
            k.key().name() == name
                && k.key()
                    .labels()
                    .any(|l| l.key() == key && l.value() == value)
        })
        .map(|(.., v)| match v {
            DebugValue::Counter(n) => *n,
            _ => 0,
        })
        .sum()
}

#[tokio::test]
async fn outcomes_are_counted_through_the_metrics_facade() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this test binary");

    let exec = Executor::builder()
        .name("visa")
        .lane(Priority(1), Capacity::Bounded(8))
        .build()
        .expect("a valid executor");
    let layer = PriorityLayer::new(exec.clone());
    let mut service = layer.layer(|request: Request<Bytes>| {
        if request.body().is_empty() {
            panic!("an empty form");
        }
        Response::new(request.into_body())
    });
    for body in ["form", ""] {
        let request = Request::post("/visa")
            .body(Full::new(Bytes::from(body)))
            .expect("a valid request");
        let response = service.call(request).await.expect("infallible");
        let expected = if body.is_empty() {
            StatusCode::INTERNAL_SERVER_ERROR
        } else {
            StatusCode::OK
        };
        assert_eq!(response.status(), expected);
    }

    let seen: Seen = snapshotter.snapshot().into_vec();
    let name = "priority_executor_http_requests_total";
    assert_eq!(counter(&seen, name, "outcome", "completed"), 1);
    assert_eq!(counter(&seen, name, "outcome", "panicked"), 1);
    let received = "priority_executor_http_requests_received_total";
    assert_eq!(counter(&seen, received, "executor", "visa"), 2);
}
