//! Priority at the HTTP door: a tower [`Layer`](tower::Layer) that runs
//! each request's handler on the worker threads of a
//! [`priority_executor`] executor, in the lane of the request's priority.
//!
//! CPU-heavy handlers of an async server usually go to a blocking pool
//! where every request is equal: under a flood, tokio's `spawn_blocking`
//! serves a premium request after every standard one queued before it.
//! Here each request is classified from its headers by the executor's
//! rules in `executors.toml` (`PRIORITYID: ABC` -> lane 10, as in the visa
//! scenario) or by a closure, queued in that lane, and the lanes are
//! served by weighted round robin: priority requests go ahead, standard
//! ones still get their share.
//!
//! - [`PriorityLayer`]: the executor (or a registry's, by name), how a
//!   request gets its priority, its `ttl`, `Retry-After` and body limit;
//!   or, with [`backpressure`](PriorityLayer::backpressure), one lane
//!   whose room `poll_ready` awaits, for tower's `Buffer`,
//!   `ConcurrencyLimit` and `LoadShed` above.
//! - [`PriorityService`]: what the layer makes of a [`BlockingHandler`]
//!   (any `Fn(Request<Bytes>) -> Response<Bytes>`); it reads the body,
//!   queues the handler without blocking and awaits the job.
//! - [`Outcome`] and [`Counts`]: what became of each request. A full lane
//!   answers `503` with `Retry-After`, an expired `ttl` `504`, a panicking
//!   handler `500`; nothing is dropped silently: every request received
//!   is counted with its outcome, and a refused one is handed back whole
//!   ([`PriorityLayer::on_refused`]).
//!
//! # With axum
//!
//! ```no_run
//! use axum::Router;
//! use axum::routing::post_service;
//! use bytes::Bytes;
//! use http::{Request, Response};
//! use priority_executor::Registry;
//! use priority_executor_tower::PriorityLayer;
//! use std::sync::Arc;
//! use tower::Layer;
//!
//! fn visa(request: Request<Bytes>) -> Response<Bytes> {
//!     // CPU-bound work, on a worker thread of the executor.
//!     Response::new(Bytes::from(format!("{} bytes checked", request.body().len())))
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let executors = Arc::new(Registry::from_path("executors.toml")?);
//! let layer = PriorityLayer::from_registry(executors, "visa_priority_exec")?;
//! let app = Router::new().route("/visa", post_service(layer.layer(visa)));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, app).await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Cargo features
//!
//! - `metrics` (off): the executor's metrics (the crate's `metrics`
//!   feature) and the layer's counters through the
//!   [`metrics`](https://docs.rs/metrics) facade:
//!   `priority_executor_http_requests_received_total{executor}` and
//!   `priority_executor_http_requests_total{executor, outcome}`, the
//!   outcome as [`Outcome::as_str`].

#![deny(missing_docs, missing_debug_implementations, unreachable_pub)]

mod counts;
mod handler;
mod layer;
mod refused;
mod service;

pub use counts::{Counts, Outcome};
pub use handler::BlockingHandler;
pub use layer::{DEFAULT_BODY_LIMIT, MAX_RETRY_AFTER, PriorityLayer, UnknownExecutor};
pub use refused::{REFUSED_BACKLOG, Refused};
pub use service::{PriorityService, ResponseBody, ResponseFuture};

use http::HeaderMap;
use priority_executor::Message;

/// The message the registry's rules see for a request: one property per
/// header, named as the header, with its first value; values that are not
/// UTF-8 are left out.
///
/// # Examples
///
/// ```
/// use http::HeaderMap;
///
/// let mut headers = HeaderMap::new();
/// headers.insert("priorityid", "ABC".parse()?);
/// headers.append("priorityid", "XYZ".parse()?);
/// let message = priority_executor_tower::headers_to_message(&headers);
/// assert_eq!(message.property("PRIORITYID"), Some("ABC"));
/// # Ok::<(), http::header::InvalidHeaderValue>(())
/// ```
pub fn headers_to_message(headers: &HeaderMap) -> Message {
    let mut message = Message::new();
    for name in headers.keys() {
        if let Some(value) = headers.get(name).and_then(|v| v.to_str().ok()) {
            message.set_property(name.as_str(), value);
        }
    }
    message
}

/// Drops a panic's payload, whose own destructor may panic too (that
/// second payload is forgotten).
pub(crate) fn drop_quietly(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(payload))) {
        std::mem::forget(again);
    }
}
