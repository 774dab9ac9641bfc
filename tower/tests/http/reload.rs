//! A registry reloaded while a request is on its way in: the request is
//! routed by the rules in force when it is queued.

use crate::common::Gate;
use crate::{RULES, gated};
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use priority_executor::{Priority, Registry};
use priority_executor_tower::PriorityLayer;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::oneshot;
use tower::{Layer, Service};

/// A generous limit for what should come at once: a hang, not a timing.
const WATCHDOG: Duration = Duration::from_secs(20);

/// A body whose one chunk arrives when the test sends it.
struct Held(Option<oneshot::Receiver<Bytes>>);

impl Body for Held {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let Some(chunk) = self.0.as_mut() else {
            return Poll::Ready(None);
        };
        let chunk = std::task::ready!(Pin::new(chunk).poll(cx));
        self.0 = None;
        Poll::Ready(chunk.ok().map(|bytes| Ok(Frame::data(bytes))))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_lane_a_reload_removed_takes_the_new_rules_lane() {
    let executors = Arc::new(Registry::from_toml_str(RULES).expect("valid rules"));
    let layer = PriorityLayer::from_registry(Arc::clone(&executors), "visa").expect("declared");
    let mut service = layer.layer(gated(Gate::default()));

    // Classified as the call is made (lane 10 by today's rules), then the
    // body waits while lane 10 goes and lane 20 takes its requests.
    let (send, chunk) = oneshot::channel();
    let request = Request::post("/visa")
        .header("PRIORITYID", "ABC")
        .body(Held(Some(chunk)))
        .expect("a request");
    let answer = tokio::spawn(service.call(request));
    let reload = executors
        .reload_toml_str(&RULES.replace("priority = 10", "priority = 20"))
        .expect("valid rules");
    assert_eq!(reload.replaced, ["visa"]);
    send.send(Bytes::from_static(b"late"))
        .expect("the body is read");

    let response = tokio::time::timeout(WATCHDOG, answer)
        .await
        .expect("answered")
        .expect("the call's task")
        .expect("infallible");
    let status = response.status();
    let body = response.into_body().collect().await.expect("a body");
    assert_eq!(
        (status, &body.to_bytes()[..]),
        (StatusCode::OK, &b"late"[..])
    );
    let metrics = executors.get("visa").expect("declared").metrics();
    assert_eq!(
        metrics.lane(Priority(20)).expect("the new lane").completed,
        1
    );
    let counts = layer.counts();
    assert_eq!((counts.completed, counts.misrouted), (1, 0));
    executors.shutdown();
}
