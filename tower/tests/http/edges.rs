//! The layer's edges: builder values at their extremes.

use crate::common::{Gate, Http, Server};
use crate::{app, one_worker};
use http::StatusCode;
use priority_executor_tower::{MAX_RETRY_AFTER, PriorityLayer};
use std::time::Duration;

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
        let layer = PriorityLayer::new(exec.handle()).retry_after(after);
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
    let layer = PriorityLayer::new(exec.handle())
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
