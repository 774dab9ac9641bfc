//! The synchronous handler a [`PriorityService`](crate::PriorityService)
//! runs on the executor's worker threads.

use bytes::Bytes;
use http::{Request, Response};
use std::sync::Arc;

/// A synchronous request handler: CPU-bound or blocking work that runs on a
/// worker thread of the executor, never on the async runtime.
///
/// Implemented for every `Fn(Request<Bytes>) -> Response<Bytes>` that is
/// `Send + Sync + 'static`: the request arrives with its body read in full.
///
/// # Examples
///
/// ```
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use priority_executor_tower::BlockingHandler;
///
/// fn echo(request: Request<Bytes>) -> Response<Bytes> {
///     Response::new(request.into_body())
/// }
/// let response = echo.call(Request::new(Bytes::from_static(b"visa")));
/// assert_eq!(response.body(), "visa");
/// ```
pub trait BlockingHandler: Send + Sync + 'static {
    /// Answers one request, on a worker thread.
    fn call(&self, request: Request<Bytes>) -> Response<Bytes>;
}

impl<F> BlockingHandler for F
where
    F: Fn(Request<Bytes>) -> Response<Bytes> + Send + Sync + 'static,
{
    fn call(&self, request: Request<Bytes>) -> Response<Bytes> {
        self(request)
    }
}

/// What is queued: the handler and the request, handed back whole if the
/// executor refuses it. Boxed: one pointer to move through the lane.
pub(crate) type Queued<H> = Box<(Arc<H>, Request<Bytes>)>;

/// The job's body: a function, so that a refusal hands back the request
/// itself.
pub(crate) fn run<H: BlockingHandler>(queued: Queued<H>) -> Response<Bytes> {
    let (handler, request) = *queued;
    handler.call(request)
}
