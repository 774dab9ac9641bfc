//! Event streams end when the application shuts down: a graceful shutdown
//! of an application that mounts the router, once it calls
//! `close_streams`; a ready server, when it stops, without touching the
//! streams of another server of the same dashboard.

use priority_executor_dashboard::Dashboard;
use std::io::{Read, Write};
use std::time::Duration;

/// How long a test waits for what must happen before it fails.
const LIMIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_graceful_shutdown_ends_the_open_event_streams() {
    let dashboard = Dashboard::new().period(Duration::from_millis(20));
    let app = axum::Router::new().nest("/dashboard", dashboard.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let closer = dashboard.clone();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
                closer.close_streams();
            })
            .await
    });

    // A page's event stream, open: its first event has come.
    let page = tokio::task::spawn_blocking(move || open_stream(addr, "/dashboard/api/events"))
        .await
        .unwrap()
        .expect("the page streams");

    stop.send(()).unwrap();
    let served = tokio::time::timeout(LIMIT, server)
        .await
        .expect("the shutdown does not wait for the open page");
    served.unwrap().unwrap();
    drop(page);
}

/// Opens the event stream at `path` and reads it until its first event:
/// the connection, still open; or what was read if the stream ended first.
fn open_stream(addr: std::net::SocketAddr, path: &str) -> Result<std::net::TcpStream, String> {
    let mut page = std::net::TcpStream::connect(addr).unwrap();
    page.set_read_timeout(Some(LIMIT)).unwrap();
    write!(page, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("event: snapshot") {
        match page.read(&mut buf) {
            Ok(0) | Err(_) => return Err(seen),
            Ok(n) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    Ok(page)
}

#[test]
fn a_server_spawned_after_another_stopped_still_streams() {
    let dashboard = Dashboard::new().period(Duration::from_millis(20));
    // A router of the same dashboard, mounted in an application.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let mounted = listener.local_addr().unwrap();
    let app = axum::Router::new().nest("/dashboard", dashboard.router());
    runtime.spawn(async move { axum::serve(listener, app).await });

    let first = dashboard.spawn("127.0.0.1:0").unwrap();
    open_stream(first.local_addr(), "/api/events").expect("the first server streams");
    first.stop();

    let second = dashboard.spawn("127.0.0.1:0").unwrap();
    let streamed = open_stream(second.local_addr(), "/api/events");
    let mounted_streams = open_stream(mounted, "/dashboard/api/events");
    second.stop();
    streamed.expect("the second server streams, though the first stopped");
    mounted_streams.expect("the mounted router streams, though a server stopped");
}
