//! Model: a future's waker woken from another thread while a worker polls
//! it (`pool/future/mod.rs`, the state of a future). The wake lands before the
//! poll, during it (the poller queues it again) or after it (the waker
//! queues it): in every case the future completes.
use crate::support::LOW;
use crate::support::model;
use loom::sync::Mutex;
use priority_executor::{Capacity, Executor};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// Open once `.0` is set; parks its waker in `.1` until then.
type Door = Arc<Mutex<(bool, Option<Waker>)>>;

struct WaitForDoor(Door);

impl Future for WaitForDoor {
    type Output = u8;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u8> {
        let mut door = self.0.lock().unwrap();
        if door.0 {
            return Poll::Ready(7);
        }
        door.1 = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// An executor with one worker, started.
fn one_worker() -> Executor {
    let exec = Executor::builder()
        .name("loom")
        .core_threads(1)
        .max_threads(1)
        .lane(LOW, Capacity::Unbounded)
        .build()
        .unwrap();
    assert_eq!(exec.prestart_core_threads(), 1);
    exec
}

/// Opens the door and wakes the waker left there, if any.
fn open(door: &Door) {
    let mut state = door.lock().unwrap();
    state.0 = true;
    let waker = state.1.take();
    drop(state);
    if let Some(waker) = waker {
        waker.wake();
    }
}

#[test]
fn a_wake_racing_the_poll_is_never_lost() {
    model(|| {
        let exec = one_worker();
        let door: Door = Arc::new(Mutex::new((false, None)));
        let handle = exec
            .spawn_future(LOW, WaitForDoor(Arc::clone(&door)))
            .unwrap();
        let opener = loom::thread::spawn(move || open(&door));
        // Joined before shutdown, which would otherwise hide a lost wake.
        assert_eq!(handle.join(), Ok(7));
        opener.join().unwrap();
        exec.shutdown();
    });
}

/// Model: a parked future's waker woken from another thread while the
/// executor shuts down and drops the futures still parked at its end
/// (`pool/parked.rs`). The wake lands before the close (the future runs),
/// during it (it is queued again and run, or the end finds it queued and
/// leaves it to the lane), or after the end (it was dropped, and the wake
/// does nothing): the handle resolves, once, to the value or `Cancelled`.
#[test]
fn a_wake_racing_the_pools_end_resolves_the_handle() {
    model(|| {
        let exec = one_worker();
        let door: Door = Arc::new(Mutex::new((false, None)));
        let handle = exec
            .spawn_future(LOW, WaitForDoor(Arc::clone(&door)))
            .unwrap();
        // Parked: polled once, its waker left at the door.
        exec.wait_idle();
        let opener = loom::thread::spawn(move || open(&door));
        exec.shutdown();
        let result = handle.join();
        assert!(
            matches!(result, Ok(7) | Err(priority_executor::JobError::Cancelled)),
            "{result:?}"
        );
        opener.join().unwrap();
    });
}
