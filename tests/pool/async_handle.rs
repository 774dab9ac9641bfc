//! A `JobHandle` is a `Future`: async code can `.await` a job.

use crate::common::single_worker;
use priority_executor::{Capacity, Executor, JobError, Picker, Priority};
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

struct Unparker(Thread);

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// A minimal executor for one future: poll, park until woken.
fn block_on<F: Future>(fut: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unparker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

#[test]
fn handles_can_be_awaited() {
    let exec = Executor::builder()
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let a = exec.enqueue(Priority(10), || 40).unwrap();
    let b = exec.enqueue(Priority(1), || 2).unwrap();
    let c = exec
        .enqueue(Priority(1), || -> i32 { panic!("no") })
        .unwrap();
    let sum = block_on(async { a.await.unwrap() + b.await.unwrap() });
    assert_eq!(sum, 42);
    assert_eq!(
        block_on(c),
        Err(JobError::Panicked {
            message: "no".into()
        })
    );
}

#[test]
fn a_pending_handle_is_woken_when_the_job_finishes() {
    let exec = single_worker(&[(1, 1)], Picker::Smooth);
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let h = exec
        .enqueue(Priority(1), move || gate.recv().map(|_| "woken"))
        .unwrap();
    let releaser = std::thread::spawn(move || release.send(()).unwrap());
    assert_eq!(block_on(h), Ok(Ok("woken")));
    releaser.join().unwrap();
}
