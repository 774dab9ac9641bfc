//! The page once the event streams end (`Dashboard::close_streams`): it
//! polls the snapshot once a period, so what changes still shows.

use crate::Session;
use priority_executor::{Capacity, Executor, Priority};
use priority_executor_dashboard::Dashboard;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_polls_the_snapshot_once_the_streams_end() {
    let exec = Executor::builder()
        .name("polled")
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let board = Dashboard::new()
        .executor(&exec)
        .period(Duration::from_millis(100));
    // Served here rather than by `spawn`: the streams to end are those of
    // this dashboard's router.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = board.router();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let Some(session) = Session::open("fallback", addr).await else {
        return;
    };
    let page = &session.page;
    let row = "tr[data-executor='polled'][data-priority='1']";
    let state = format!("{row} td[data-field='state']");
    page.wait_text(&state, "running").await;
    page.wait_attr("#connection", "class", "badge live").await;

    // The stream ends, and every stream opened later ends at once.
    board.close_streams();
    page.wait_attr("#connection", "class", "badge down").await;
    // A change made behind the page's back (no action of its own that
    // would fetch a snapshot) still shows.
    exec.pause_lane(Priority(1)).unwrap();
    page.wait_attr(row, "class", "paused").await;
    page.wait_text(&state, "paused").await;
    exec.resume_lane(Priority(1)).unwrap();
    page.wait_text(&state, "running").await;

    session.close().await;
    server.abort();
    exec.shutdown();
}
