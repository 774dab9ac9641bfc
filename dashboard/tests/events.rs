//! Server-sent events: a `snapshot` event at once, then one per period,
//! each the snapshot's JSON.

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use priority_executor::{Capacity, Executor, Priority};
use priority_executor_dashboard::Dashboard;
use std::time::Duration;
use tower::ServiceExt;

#[tokio::test]
async fn events_carry_snapshots_one_per_period() {
    let exec = Executor::builder()
        .name("events")
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let router = Dashboard::new()
        .executor(&exec)
        .period(Duration::from_millis(50))
        .router();
    let response = router
        .oneshot(Request::get("/api/events").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let mut events = Vec::new();
    let mut text = String::new();
    while events.len() < 3 {
        let frame = body.frame().await.expect("the stream goes on").unwrap();
        let Ok(data) = frame.into_data() else {
            continue;
        };
        text.push_str(std::str::from_utf8(&data).unwrap());
        while let Some(end) = text.find("\n\n") {
            let event: String = text.drain(..end + 2).collect();
            if event.starts_with(':') {
                continue; // keep-alive comment
            }
            events.push(event);
        }
    }
    for (i, event) in events.iter().enumerate() {
        assert!(event.contains("event: snapshot\n"), "{event}");
        assert!(event.contains(&format!("id: {i}\n")), "{event}");
        let data = event
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .expect("a data line");
        let json: serde_json::Value = serde_json::from_str(data).unwrap();
        assert_eq!(json["executors"][0]["name"], "events");
    }
    exec.shutdown();
}
