//! The backpressure mode in a `ServiceBuilder` stack: a full lane is
//! `Poll::Pending` in `poll_ready` until a slot frees, and `LoadShed` on
//! top sheds at once. The one worker is held by a gate job; wake-ups are
//! counted by the waker, never waited for with sleeps.

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use priority_executor::{Capacity, Executor, Priority};
use priority_executor_tower::PriorityLayer;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;
use tower::{Service, ServiceBuilder, ServiceExt};

/// How long a test waits for something that should happen at once.
const PATIENCE: Duration = Duration::from_secs(30);

/// A waker that counts its wakes and reports each on a channel.
struct Counting {
    wakes: AtomicUsize,
    tx: Mutex<Sender<()>>,
}

impl Wake for Counting {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        let _ = self.tx.lock().expect("waker channel").send(());
    }
}

fn counting() -> (Arc<Counting>, Waker, Receiver<()>) {
    let (tx, rx) = mpsc::channel();
    let counting = Arc::new(Counting {
        wakes: AtomicUsize::new(0),
        tx: Mutex::new(tx),
    });
    let waker = Waker::from(Arc::clone(&counting));
    (counting, waker, rx)
}

/// One worker, one lane of one slot.
fn executor() -> Executor {
    Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(1), Capacity::Bounded(1))
        .build()
        .expect("executor")
}

/// Holds the executor's one worker until the returned sender is dropped
/// (or sent to), and fills the lane's one slot behind it.
fn hold_and_fill(exec: &Executor) -> Sender<()> {
    let (started_tx, started) = mpsc::channel();
    let (open, gate) = mpsc::channel::<()>();
    let _gate = exec
        .enqueue(Priority(1), move || {
            started_tx.send(()).expect("test waits");
            let _ = gate.recv();
        })
        .expect("gate job queued");
    started.recv_timeout(PATIENCE).expect("the gate job starts");
    let _filler = exec
        .try_enqueue(Priority(1), || ())
        .expect("the filler takes the lane's one slot");
    assert!(
        exec.try_enqueue(Priority(1), || ())
            .is_err_and(|err| err.is_full()),
        "the lane is full"
    );
    open
}

fn echo(request: Request<Bytes>) -> Response<Bytes> {
    Response::new(request.into_body())
}

fn request(body: &'static str) -> Request<Full<Bytes>> {
    Request::new(Full::new(Bytes::from_static(body.as_bytes())))
}

/// `Service::poll_ready` for the tests' request type.
fn poll_ready<S: Service<Request<Full<Bytes>>>>(
    service: &mut S,
    cx: &mut Context<'_>,
) -> Poll<Result<(), S::Error>> {
    service.poll_ready(cx)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

#[test]
fn a_full_lane_is_pending_until_a_slot_frees() {
    let exec = executor();
    let layer = PriorityLayer::new(exec.clone()).backpressure(Priority(1));
    let mut service = ServiceBuilder::new()
        .concurrency_limit(4)
        .layer(layer.clone())
        .service(echo);
    let open = hold_and_fill(&exec);

    let (wakes, waker, woken) = counting();
    let mut cx = Context::from_waker(&waker);
    assert!(
        poll_ready(&mut service, &mut cx).is_pending(),
        "the lane is full"
    );
    assert!(poll_ready(&mut service, &mut cx).is_pending(), "still full");
    assert_eq!(wakes.wakes.load(Ordering::SeqCst), 0);

    // The gate job ends; the worker takes the filler, which frees its slot.
    drop(open);
    woken
        .recv_timeout(PATIENCE)
        .expect("a freed slot wakes the service");
    assert!(matches!(
        poll_ready(&mut service, &mut cx),
        Poll::Ready(Ok(()))
    ));

    // The slot is the service's: a clone starts without one and waits.
    let mut clone = service.clone();
    let (clone_wakes, clone_waker, clone_woken) = counting();
    let mut clone_cx = Context::from_waker(&clone_waker);
    assert!(poll_ready(&mut clone, &mut clone_cx).is_pending());
    assert_eq!(clone_wakes.wakes.load(Ordering::SeqCst), 0);

    // The call queues in the slot without waiting, and is answered.
    let runtime = runtime();
    let response = runtime
        .block_on(service.call(request("visa")))
        .expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
    let body = runtime
        .block_on(response.into_body().collect())
        .expect("body")
        .to_bytes();
    assert_eq!(body, "visa");

    // The request's job has run: its slot is free, the clone's turn.
    clone_woken
        .recv_timeout(PATIENCE)
        .expect("the slot freed by the call wakes the clone");
    assert!(matches!(
        poll_ready(&mut clone, &mut clone_cx),
        Poll::Ready(Ok(()))
    ));
    let response = runtime
        .block_on(clone.call(request("mastercard")))
        .expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);

    let counts = layer.counts();
    assert_eq!((counts.received, counts.completed, counts.shed), (2, 2, 0));
    exec.shutdown();
}

#[test]
fn load_shed_on_top_sheds_a_full_lane_at_once() {
    let exec = executor();
    let layer = PriorityLayer::new(exec.clone()).backpressure(Priority(1));
    let mut service = ServiceBuilder::new()
        .load_shed()
        .concurrency_limit(4)
        .layer(layer.clone())
        .service(echo);
    let open = hold_and_fill(&exec);

    let (wakes, waker, woken) = counting();
    let mut cx = Context::from_waker(&waker);
    let runtime = runtime();
    // LoadShed is ready; the layer below it is not, so the call is shed.
    assert!(matches!(
        poll_ready(&mut service, &mut cx),
        Poll::Ready(Ok(()))
    ));
    let err = runtime
        .block_on(service.call(request("visa")))
        .expect_err("the full lane sheds the request");
    assert!(
        err.is::<tower::load_shed::error::Overloaded>(),
        "shed with tower's error: {err}"
    );
    // Shed above the layer: it never saw the request, nor queued it.
    assert_eq!(layer.counts().received, 0);
    assert_eq!(wakes.wakes.load(Ordering::SeqCst), 0);

    // Room again: the layer, still in line for a slot, is woken, and the
    // next request goes through.
    drop(open);
    woken
        .recv_timeout(PATIENCE)
        .expect("a freed slot wakes the service");
    assert!(matches!(
        poll_ready(&mut service, &mut cx),
        Poll::Ready(Ok(()))
    ));
    let response = runtime
        .block_on(service.call(request("visa")))
        .expect("room in the lane: not shed");
    assert_eq!(response.status(), StatusCode::OK);
    let counts = layer.counts();
    assert_eq!((counts.received, counts.completed), (1, 1));
    exec.shutdown();
}

#[test]
fn a_shut_down_executor_is_ready_and_answered_503() {
    let exec = executor();
    let layer = PriorityLayer::new(exec.clone()).backpressure(Priority(1));
    let mut service = ServiceBuilder::new().layer(layer.clone()).service(echo);
    exec.shutdown();
    let (_, waker, _woken) = counting();
    let mut cx = Context::from_waker(&waker);
    assert!(matches!(
        poll_ready(&mut service, &mut cx),
        Poll::Ready(Ok(()))
    ));
    let response = runtime()
        .block_on(service.call(request("visa")))
        .expect("infallible");
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(layer.counts().shut_down, 1);
}

#[test]
fn a_buffer_in_front_waits_for_room() {
    let exec = executor();
    let layer = PriorityLayer::new(exec.clone()).backpressure(Priority(1));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .expect("runtime");
    let service = runtime.block_on(async {
        ServiceBuilder::new()
            .buffer(8)
            .layer(layer.clone())
            .service(echo)
    });
    let open = hold_and_fill(&exec);
    let call = runtime.spawn(service.oneshot(request("visa")));
    // The buffer holds the request while the lane is full (it is not
    // refused): once room frees it is answered.
    drop(open);
    let response = runtime
        .block_on(call)
        .expect("task")
        .expect("buffered call");
    assert_eq!(response.status(), StatusCode::OK);
    let counts = layer.counts();
    assert_eq!((counts.received, counts.completed, counts.shed), (1, 1, 0));
    exec.shutdown();
}
