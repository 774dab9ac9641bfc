//! A blocking end awaited without blocking: the future behind
//! `Executor::shutdown_async` and `wait_idle_async`, and the stages' and
//! pipelines' `drain_async` and `join_async`.
//!
//! On its first poll the future runs its start on the polling thread (the
//! checks and the non-blocking part of the end: close the pool, begin a
//! drain), which hands back either the end's output at once or the
//! blocking rest. The rest runs on a thread of its own, spawned once from
//! the builder the future was given (named after what ends); it puts the
//! output into a one-shot slot shared with the future and wakes the waker
//! stored there. Any runtime can poll the future, and it needs none. A
//! panic of the rest is raised again by the poll that finds it; with no
//! thread to be had, the first poll runs the rest itself.
//!
//! Dropping the future once started leaves the rest running on its thread
//! (cancel-safe): the end happens, only its output is lost. A future
//! dropped before its first poll started nothing, unless it owns what it
//! ends (a stage, a pipeline), whose drop is itself a blocking end: that
//! drop then happens on a thread of its own too, never on the thread
//! dropping the future.
//!
//! Not modelled under loom: std's lock and thread, as the resizer's.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;

/// The blocking rest of an end, run on the end's own thread.
pub(crate) type Rest<T> = Box<dyn FnOnce() -> T + Send>;

/// What an end's start leaves to do.
pub(crate) enum Begun<T> {
    /// The end is over: its output.
    Done(T),
    /// The end's blocking rest, for the end's own thread.
    Wait(Rest<T>),
}

type Start<T> = Box<dyn FnOnce() -> Begun<T> + Send>;

/// A blocking end as a future (module docs).
pub(crate) struct Ending<T: Send + 'static> {
    /// The end's thread, until started.
    thread: Option<thread::Builder>,
    state: State<T>,
    /// Does the start own what it ends (dropped on a thread of its own if
    /// the future is dropped before its first poll)?
    owning: bool,
}

enum State<T> {
    Unstarted(Start<T>),
    Started(Arc<Slot<T>>),
    Done,
}

/// The one-shot slot the end's thread fills.
struct Slot<T> {
    inner: Mutex<Inner<T>>,
}

struct Inner<T> {
    /// The rest, until the end's thread (or, with no thread to be had, the
    /// polling one) takes it.
    rest: Option<Rest<T>>,
    output: Option<thread::Result<T>>,
    waker: Option<Waker>,
}

impl<T: Send + 'static> Ending<T> {
    /// An end that `start` begins on the first poll; a future dropped
    /// before it started nothing.
    pub(crate) fn new(
        thread: thread::Builder,
        start: impl FnOnce() -> Begun<T> + Send + 'static,
    ) -> Ending<T> {
        Ending {
            thread: Some(thread),
            state: State::Unstarted(Box::new(start)),
            owning: false,
        }
    }

    /// An end whose start owns what it ends: dropped before its first
    /// poll, the future drops `start` (and what it owns) on a thread of
    /// its own.
    #[cfg_attr(not(feature = "actor"), allow(dead_code))]
    pub(crate) fn owning(
        thread: thread::Builder,
        start: impl FnOnce() -> Begun<T> + Send + 'static,
    ) -> Ending<T> {
        let mut ending = Ending::new(thread, start);
        ending.owning = true;
        ending
    }

    /// Starts the end on the polling thread, and its rest on a thread of
    /// its own.
    fn start(&mut self, start: Start<T>) -> Arc<Slot<T>> {
        let (rest, output) = match start() {
            Begun::Done(output) => (None, Some(Ok(output))),
            Begun::Wait(rest) => (Some(rest), None),
        };
        let waits = rest.is_some();
        let slot = Arc::new(Slot {
            inner: Mutex::new(Inner {
                rest,
                output,
                waker: None,
            }),
        });
        if let Some(thread) = self.thread.take().filter(|_| waits) {
            let filled = Arc::clone(&slot);
            if thread.spawn(move || filled.run()).is_err() {
                // No thread to be had: the end still happens, on this
                // thread.
                slot.run();
            }
        }
        slot
    }
}

impl<T> Slot<T> {
    /// Runs the rest (if no one took it yet), fills the slot and wakes the
    /// future.
    fn run(&self) {
        let Some(rest) = self.lock().rest.take() else {
            return;
        };
        let output = panic::catch_unwind(AssertUnwindSafe(rest));
        let waker = {
            let mut inner = self.lock();
            inner.output = Some(output);
            inner.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<T>> {
        match self.inner.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

impl<T: Send + 'static> Future for Ending<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this = self.get_mut();
        let slot = match std::mem::replace(&mut this.state, State::Done) {
            State::Unstarted(start) => this.start(start),
            State::Started(slot) => slot,
            State::Done => panic!("an end's future polled after it resolved"),
        };
        let mut inner = slot.lock();
        if let Some(output) = inner.output.take() {
            drop(inner);
            return match output {
                Ok(output) => Poll::Ready(output),
                Err(payload) => panic::resume_unwind(payload),
            };
        }
        match &mut inner.waker {
            Some(waker) => waker.clone_from(cx.waker()),
            none => *none = Some(cx.waker().clone()),
        }
        drop(inner);
        this.state = State::Started(slot);
        Poll::Pending
    }
}

impl<T: Send + 'static> Drop for Ending<T> {
    fn drop(&mut self) {
        if !self.owning {
            return;
        }
        let State::Unstarted(start) = std::mem::replace(&mut self.state, State::Done) else {
            return;
        };
        let Some(thread) = self.thread.take() else {
            return;
        };
        // If the system refuses a thread, the spawn drops `start` here:
        // the blocking drop then happens on this thread.
        let _ = thread.spawn(move || drop(start));
    }
}
