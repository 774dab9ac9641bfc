//! The visa server: `POST /visa` runs a few milliseconds of CPU work per
//! application on the executor of executors.toml, in the lane its
//! `PRIORITYID` header maps to (`ABC` -> 10, else 1). The layer sits in
//! a `ServiceBuilder` stack under tower's time limit and concurrency
//! limit: a request past the limit is answered 408 and, if it still waits
//! in its lane, never runs.
//!
//! ```text
//! cargo run -p priority-executor-tower --example visa_service             # serves a few applications itself, then stops
//! cargo run -p priority-executor-tower --example visa_service -- --serve  # listens on 127.0.0.1:3000 until Ctrl-C
//! curl -X POST -H 'PRIORITYID: ABC' -d '<visa/>' http://127.0.0.1:3000/visa
//! ```

#[path = "shared/visa.rs"]
mod visa;

use axum::Router;
use axum::error_handling::HandleErrorLayer;
use axum::routing::post_service;
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use priority_executor::Priority;
use priority_executor_tower::PriorityLayer;
use std::error::Error;
use std::time::Duration;
use tower::{BoxError, ServiceBuilder};

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let serve = std::env::args().skip(1).any(|a| a == "--serve");
    let executors = visa::registry()?;
    let layer = PriorityLayer::from_registry(executors.clone(), visa::EXECUTOR)?
        .ttl(Duration::from_secs(10));
    let rounds = visa::rounds_for(3.0, visa::FORM);
    let stack = ServiceBuilder::new()
        // Errors of the limits below become answers.
        .layer(HandleErrorLayer::new(|error: BoxError| async move {
            if error.is::<tower::timeout::error::Elapsed>() {
                (
                    StatusCode::REQUEST_TIMEOUT,
                    "no answer within 5 s\n".to_owned(),
                )
            } else {
                (StatusCode::INTERNAL_SERVER_ERROR, format!("{error}\n"))
            }
        }))
        // Dropping a request's answer on time-out cancels its queued job.
        .timeout(Duration::from_secs(5))
        .concurrency_limit(256)
        .layer(layer.clone())
        .service(visa::handler(rounds));
    let app = Router::new().route("/visa", post_service(stack));

    let addr = if serve {
        "127.0.0.1:3000"
    } else {
        "127.0.0.1:0"
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    println!(
        "visa server on http://{addr}/visa (executor {:?})",
        visa::EXECUTOR
    );
    if serve {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        // The executor's end, awaited without blocking a runtime thread:
        // the registry's drop then finds it over.
        executors.get(visa::EXECUTOR)?.shutdown_async().await;
        println!("{:?}", layer.counts());
        return Ok(());
    }

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .into_future(),
    );
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    for (priority_id, applicant) in [("ABC", "priority"), ("", "standard"), ("XYZ", "standard")] {
        let mut request = Request::post(format!("http://{addr}/visa"));
        if !priority_id.is_empty() {
            request = request.header("PRIORITYID", priority_id);
        }
        let response = client
            .request(request.body(Full::new(Bytes::from_static(visa::FORM)))?)
            .await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        print!(
            "PRIORITYID={priority_id:<3} ({applicant}): {status} {}",
            String::from_utf8_lossy(&body)
        );
    }
    let _ = stop.send(());
    server.await??;

    let exec = executors.get(visa::EXECUTOR)?;
    let metrics = exec.metrics();
    for p in [10, 1] {
        let lane = metrics.lane(Priority(p)).ok_or("the lane is declared")?;
        println!("lane {p}: {} completed", lane.completed);
    }
    // As above: the end awaited, then the registry's drop has nothing to
    // wait for.
    exec.shutdown_async().await;
    assert!(exec.is_terminated());
    println!("{:?}", layer.counts());
    Ok(())
}
