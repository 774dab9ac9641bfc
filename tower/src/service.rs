//! [`PriorityService`]: reads the body, queues the handler in the
//! request's lane, and awaits the job.

use crate::BlockingHandler;
use crate::counts::{InFlight, Outcome};
use crate::handler::{self, Queued};
use crate::layer::{PriorityLayer, Route, Target, by_rules};
use crate::refused::Refused;
use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use priority_executor::{EnqueueError, JobError, JobHandle, JobOptions, Permit, Priority, Reserve};
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tower::{Layer, Service};

/// The response body: the handler's bytes, or the layer's own short
/// plain-text explanation.
pub type ResponseBody = Full<Bytes>;

/// The future of [`PriorityService::call`]: reads the body, queues the job,
/// awaits it. Never fails: every outcome is a response.
pub type ResponseFuture =
    Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, Infallible>> + Send>>;

/// A tower [`Service`] that runs a [`BlockingHandler`] on the executor of
/// its [`PriorityLayer`], in the lane of each request's priority.
///
/// For each request: the priority is taken from the request's head, the
/// body is read (up to the layer's limit), and the handler is queued with
/// [`enqueue_value`](priority_executor::Executor::enqueue_value), with
/// options that never wait for room; the response future then awaits the job's handle.
/// Each request ends in one [`Outcome`], counted:
///
/// | outcome | answer |
/// |---|---|
/// | the handler returned | its response |
/// | the lane is full | `503 Service Unavailable`, `Retry-After` |
/// | the executor is shutting down or gone | `503`, `Retry-After` |
/// | handed back by `shutdown_now`, dropped unrun | `503`, `Retry-After` |
/// | not started within the `ttl` | `504 Gateway Timeout` |
/// | the handler panicked | `500 Internal Server Error` |
/// | a priority with no lane | `500` |
/// | the body could not be read / was too long | `400` / `413` |
///
/// A refused request goes, whole, to the layer's
/// [`on_refused`](PriorityLayer::on_refused) hook, which runs on a thread
/// of its own: the answer never waits for it. A lane's `when_full`
/// policy does not apply here: `block` and `caller-runs` would hold a
/// thread of the async runtime, so a full lane always answers `503`. Give
/// the low lane the smaller capacity and it is shed first.
///
/// By default `poll_ready` is always ready: the service keeps no queue of
/// its own and cannot know a request's lane before seeing it, so it sheds
/// (answers `503`) rather than holding requests back, as tower's
/// `LoadShed` does. In the layer's
/// [`backpressure`](PriorityLayer::backpressure) mode, `poll_ready` waits
/// for a slot in the layer's one lane and keeps it for the next `call`
/// (a clone starts without one). Its error type is [`Infallible`] in both,
/// as axum's `route_service` wants.
pub struct PriorityService<H> {
    layer: PriorityLayer,
    handler: Arc<H>,
    /// Backpressure mode: the wait for a slot, between `poll_ready`s.
    reserve: Option<Reserve>,
    /// Backpressure mode: the slot `poll_ready` got, for the next `call`.
    permit: Option<Permit>,
}

impl<H: BlockingHandler> Layer<H> for PriorityLayer {
    type Service = PriorityService<H>;

    fn layer(&self, handler: H) -> PriorityService<H> {
        PriorityService::new(self.clone(), handler)
    }
}

impl<H> PriorityService<H> {
    pub(crate) fn new(layer: PriorityLayer, handler: H) -> Self {
        PriorityService {
            layer,
            handler: Arc::new(handler),
            reserve: None,
            permit: None,
        }
    }
}

impl<H> Clone for PriorityService<H> {
    fn clone(&self) -> Self {
        // A clone waits for its own slot: the one this service holds is
        // for this service's next call.
        PriorityService {
            layer: self.layer.clone(),
            handler: Arc::clone(&self.handler),
            reserve: None,
            permit: None,
        }
    }
}

impl<H> fmt::Debug for PriorityService<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PriorityService")
            .field("layer", &self.layer)
            .field("waiting", &self.reserve.is_some())
            .field("permit", &self.permit.is_some())
            .finish_non_exhaustive()
    }
}

impl<H, B> Service<Request<B>> for PriorityService<H>
where
    H: BlockingHandler,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        let Some(priority) = self.layer.backpressure else {
            return Poll::Ready(Ok(()));
        };
        if self.permit.is_some() {
            return Poll::Ready(Ok(()));
        }
        let reserve = match &mut self.reserve {
            Some(reserve) => reserve,
            None => match self.layer.executor() {
                Some(executor) => self.reserve.insert(executor.reserve(priority)),
                // The registry lost the executor: `call` answers `503`.
                None => return Poll::Ready(Ok(())),
            },
        };
        match reserve.poll_reserve(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(permit)) => self.permit = Some(permit),
            // No lane of that priority, or shutting down: no slot, and
            // `call` answers as in the default mode (`500`, `503`).
            Poll::Ready(Err(_)) => {}
        }
        self.reserve = None;
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> ResponseFuture {
        let layer = self.layer.clone();
        let handler = Arc::clone(&self.handler);
        let permit = self.permit.take();
        let in_flight = InFlight::new(Arc::clone(&layer.counters));
        // The deadline counts from arrival, body reading included (a time
        // to live past the clock's reach is none).
        let deadline = layer.ttl.and_then(|ttl| Instant::now().checked_add(ttl));
        let (head, body) = request.into_parts();
        let route = layer.priority_of(&head);
        Box::pin(async move {
            let ready = Ready {
                route,
                permit,
                deadline,
            };
            let (outcome, response) = serve(&layer, handler, ready, head, body).await;
            in_flight.settle(outcome);
            Ok(response)
        })
    }
}

/// What `call` knows of a request before its body: where it goes, the
/// slot `poll_ready` got for it (backpressure mode), its deadline.
struct Ready {
    route: Route,
    permit: Option<Permit>,
    deadline: Option<Instant>,
}

/// One request, from its body to its answer.
async fn serve<H, B>(
    layer: &PriorityLayer,
    handler: Arc<H>,
    ready: Ready,
    head: http::request::Parts,
    body: B,
) -> (Outcome, Response<ResponseBody>)
where
    H: BlockingHandler,
    B: http_body::Body + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let body = match Limited::new(body, layer.body_limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(err) if err.is::<LengthLimitError>() => {
            let text = format!(
                "the body is longer than the limit of {} bytes",
                layer.body_limit
            );
            return answer(layer, Outcome::TooLarge, text);
        }
        Err(err) => return answer(layer, Outcome::BadBody, format!("reading the body: {err}")),
    };
    let Ready {
        route,
        permit,
        deadline,
    } = ready;
    let options = match deadline {
        Some(deadline) => JobOptions::new().deadline(deadline),
        None => JobOptions::new(),
    };
    let request = Request::from_parts(head, body);
    let priority = match route {
        Route::To(priority) => priority,
        Route::Gone => {
            return refused(
                layer,
                request,
                Priority(0),
                Outcome::ShutDown,
                "the executor is gone",
            );
        }
        // Not handed to the refused hook: its priority is unknown, and the
        // request would fail the same way again.
        Route::ClassifierPanicked => {
            return answer(
                layer,
                Outcome::Panicked,
                "the request's classifier panicked".to_owned(),
            );
        }
    };
    let mut queued: Queued<H> = Box::new((handler, request));
    if let Some(permit) = permit {
        match enqueue_reserved(permit, queued, deadline) {
            Ok(job) => return finish(layer, priority, Job::Reserved(job)).await,
            // The executor began shutting down (a reload retired it) or
            // has no worker: queued as without a slot, which answers or
            // reroutes the request.
            Err(back) => queued = back,
        }
    }
    let (priority, queueing) = enqueue(layer, priority, queued, options);
    let job = match queueing {
        Ok(job) => job,
        Err(err) => {
            let (outcome, text) = match &err {
                EnqueueError::Full { .. } => (Outcome::Shed, err.to_string()),
                EnqueueError::UnknownPriority { .. } => (Outcome::Misrouted, err.to_string()),
                // The operating system's reason is not sent to the
                // client; the executor counts the failure in its
                // `ThreadMetrics::spawn_failures`.
                EnqueueError::NoThread { .. } => (
                    Outcome::Shed,
                    "no worker thread could be started for it".to_owned(),
                ),
                _ => (Outcome::ShutDown, err.to_string()),
            };
            let (_, request) = *err.into_inner();
            return refused(layer, request, priority, outcome, &text);
        }
    };
    finish(layer, priority, Job::Queued(job)).await
}

/// A queued request's job.
enum Job {
    /// Queued with `enqueue_value`, the deadline the executor's.
    Queued(JobHandle<Response<Bytes>>),
    /// Queued in a slot `poll_ready` got; `None` if the deadline had
    /// passed when a worker reached it.
    Reserved(JobHandle<Option<Response<Bytes>>>),
}

/// Awaits the request's job and answers with its outcome.
async fn finish(
    layer: &PriorityLayer,
    priority: Priority,
    job: Job,
) -> (Outcome, Response<ResponseBody>) {
    // Dropped with the response future (the client went away), a job not
    // yet started is cancelled: it never runs, and the request counts as
    // abandoned.
    let result = match job {
        Job::Queued(job) => CancelOnDrop(Some(job)).await,
        Job::Reserved(job) => CancelOnDrop(Some(job))
            .await
            .and_then(|response| response.ok_or(JobError::Expired)),
    };
    match result {
        Ok(response) => (Outcome::Completed, response.map(Full::new)),
        Err(JobError::Expired) => answer(
            layer,
            Outcome::Expired,
            format!("not started within the time limit ({priority} lane)"),
        ),
        // The panic message stays on the server (the panic hook printed
        // it): it may tell a client more than it should know.
        Err(JobError::Panicked { .. }) => {
            answer(layer, Outcome::Panicked, "the handler panicked".to_owned())
        }
        Err(err @ (JobError::Cancelled | JobError::Discarded)) => {
            answer(layer, Outcome::Cancelled, err.to_string())
        }
        // A job of this layer is never retried; any other error is the
        // server's.
        Err(err) => answer(layer, Outcome::Panicked, err.to_string()),
    }
}

/// A reload may replace a registry's executor between a request's
/// classification and its enqueue, with lanes that differ: the request is
/// routed again by the rules in force, at most this many times (each one
/// after a reload that happened while the request was being queued).
const REROUTES: usize = 3;

/// Queues the request in its executor without blocking; returns the
/// priority it was queued (or refused) at.
fn enqueue<H: BlockingHandler>(
    layer: &PriorityLayer,
    priority: Priority,
    queued: Queued<H>,
    options: JobOptions,
) -> (Priority, Queueing<H>) {
    let options = options.wait_at_most(Duration::ZERO);
    let (executors, name) = match &layer.target {
        Target::One { executor, .. } => {
            let queueing = executor.enqueue_value(priority, queued, handler::run::<H>, options);
            return (priority, queueing);
        }
        Target::Registry { executors, name } => (executors, name),
    };
    let (mut priority, mut queued) = (priority, queued);
    let mut tries = 0;
    loop {
        let Ok(executor) = executors.get(name) else {
            let gone = EnqueueError::ShutDown {
                priority,
                job: queued,
            };
            return (priority, Err(gone));
        };
        let err = match executor.enqueue_value(priority, queued, handler::run::<H>, options) {
            Err(err) if tries < REROUTES => err,
            queueing => return (priority, queueing),
        };
        tries += 1;
        let again = match &err {
            // A priority the application chose (its classifier, or the
            // backpressure lane) is its own: a lane missing for it is a
            // misroute, not a reload.
            EnqueueError::UnknownPriority { job, .. }
                if layer.classify.is_none() && layer.backpressure.is_none() =>
            {
                by_rules(executors, name, job.1.headers()).filter(|now| *now != priority)
            }
            // Retired by a reload: its successor takes the request.
            EnqueueError::ShutDown { .. } => executors
                .get(name)
                .is_ok_and(|now| !now.is_shut_down())
                .then_some(priority),
            _ => None,
        };
        match again {
            Some(now) => (priority, queued) = (now, err.into_inner()),
            None => return (priority, Err(err)),
        }
    }
}

/// Queues the request in the slot `poll_ready` got, without waiting; the
/// request back if the executor refused it.
fn enqueue_reserved<H: BlockingHandler>(
    permit: Permit,
    queued: Queued<H>,
    deadline: Option<Instant>,
) -> Result<JobHandle<Option<Response<Bytes>>>, Queued<H>> {
    // A permit queues a closure, which a refusal hands back as such: the
    // request waits beside it, to be taken back if it is refused.
    let slot = Arc::new(Mutex::new(Some(queued)));
    let for_job = Arc::clone(&slot);
    let job = move || {
        let queued = take(&for_job).expect("a queued request is taken once");
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return None;
        }
        Some(handler::run(queued))
    };
    match permit.enqueue(job) {
        Ok(job) => Ok(job),
        Err(refused) => {
            drop(refused);
            Err(take(&slot).expect("a refused job never ran"))
        }
    }
}

/// Takes what the slot holds; a poisoned lock guards an `Option` that is
/// valid whatever happened under it.
fn take<T>(slot: &Mutex<Option<T>>) -> Option<T> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// What queueing a request gives: its job, or the request back.
type Queueing<H> = Result<JobHandle<Response<Bytes>>, EnqueueError<Queued<H>>>;

/// Answers a refused request, and hands it to the `on_refused` hook's
/// thread without waiting for the hook.
fn refused(
    layer: &PriorityLayer,
    request: Request<Bytes>,
    priority: Priority,
    outcome: Outcome,
    text: &str,
) -> (Outcome, Response<ResponseBody>) {
    let answered = answer(layer, outcome, text.to_owned());
    if let Some(hook) = &layer.on_refused {
        hook.hand_over(Refused {
            request,
            priority,
            outcome,
        });
    }
    answered
}

/// The layer's own answer for `outcome`: its status, a plain-text reason,
/// and `Retry-After` on a `503`.
fn answer(
    layer: &PriorityLayer,
    outcome: Outcome,
    text: String,
) -> (Outcome, Response<ResponseBody>) {
    let status = outcome
        .status()
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if status == StatusCode::SERVICE_UNAVAILABLE {
        headers.insert(RETRY_AFTER, HeaderValue::from(layer.retry_after_secs()));
    }
    (outcome, response)
}

/// A queued request's job, cancelled if dropped before it finished (the
/// response future was dropped): one not yet started never runs, though
/// it keeps its place in its lane until a worker reaches it and passes
/// over it.
struct CancelOnDrop<T>(Option<JobHandle<T>>);

impl<T> Future for CancelOnDrop<T> {
    type Output = Result<T, JobError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(job) = self.0.as_mut() else {
            return Poll::Ready(Err(JobError::Cancelled));
        };
        let out = std::task::ready!(Pin::new(job).poll(cx));
        self.0 = None;
        Poll::Ready(out)
    }
}

impl<T> Drop for CancelOnDrop<T> {
    fn drop(&mut self) {
        if let Some(job) = self.0.take() {
            // A job already running goes on; its answer is dropped.
            job.cancel();
        }
    }
}
