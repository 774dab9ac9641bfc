//! A request the executor refused, handed back whole to the layer's
//! `on_refused` hook, which runs on a thread of its own, off the request
//! path.

use crate::Outcome;
use crate::counts::Counters;
use bytes::Bytes;
use http::Request;
use priority_executor::Priority;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};

/// How many refused requests may wait for a slow
/// [`on_refused`](crate::PriorityLayer::on_refused) hook; past that a
/// refused request is dropped after its answer and counted in
/// [`Counts::hook_dropped`](crate::Counts::hook_dropped), so that a hook
/// that falls behind under a flood holds a bounded amount of memory.
pub const REFUSED_BACKLOG: usize = 256;

pub(crate) type RefusedFn = Arc<dyn Fn(Refused) + Send + Sync>;

/// A request the executor did not take, handed to
/// [`PriorityLayer::on_refused`](crate::PriorityLayer::on_refused) once
/// the client's answer is ready: nothing of it ran.
#[derive(Debug)]
#[non_exhaustive]
pub struct Refused {
    /// The request as the handler would have received it, body included.
    pub request: Request<Bytes>,
    /// The priority it was given (`Priority(0)` if a reload had removed
    /// the registry's executor before one could be given).
    pub priority: Priority,
    /// Why: [`Outcome::Shed`] (lane full), [`Outcome::ShutDown`] or
    /// [`Outcome::Misrouted`] (no lane of that priority).
    pub outcome: Outcome,
}

/// The `on_refused` hook and the thread that runs it, shared by a layer
/// and every service it made.
///
/// The thread starts with the first refusal and ends once the layer and
/// its services are gone and the backlog has been handed over. A panic of
/// the hook is caught (and counted): the thread goes on with the next
/// refused request. A thread that cannot be started, or a full backlog,
/// drops the request (counted).
pub(crate) struct RefusedHook {
    hook: RefusedFn,
    counters: Arc<Counters>,
    sender: Mutex<Option<SyncSender<Refused>>>,
}

impl RefusedHook {
    pub(crate) fn new(hook: RefusedFn, counters: Arc<Counters>) -> Self {
        RefusedHook {
            hook,
            counters,
            sender: Mutex::new(None),
        }
    }

    /// Queues `refused` for the hook's thread without blocking.
    pub(crate) fn hand_over(&self, refused: Refused) {
        // Held for a thread start and a try_send, never across the hook;
        // the Option it guards is valid whatever happened under it.
        let mut sender = self.sender.lock().unwrap_or_else(PoisonError::into_inner);
        let mut refused = refused;
        // Twice at most: a thread that has gone (it never returns while
        // the layer lives, but nothing is lost if it does) is started anew.
        for _ in 0..2 {
            if sender.is_none() {
                *sender = self.start();
            }
            let Some(tx) = sender.as_ref() else { break };
            match tx.try_send(refused) {
                Ok(()) => return,
                Err(TrySendError::Full(_)) => break,
                Err(TrySendError::Disconnected(back)) => {
                    refused = back;
                    *sender = None;
                }
            }
        }
        self.counters.hook_dropped();
    }

    /// Starts the hook's thread; `None` if the system refuses a thread.
    fn start(&self) -> Option<SyncSender<Refused>> {
        let (tx, rx) = mpsc::sync_channel(REFUSED_BACKLOG);
        let hook = Arc::clone(&self.hook);
        let counters = Arc::clone(&self.counters);
        std::thread::Builder::new()
            .name(format!("{}-on-refused", counters.executor()))
            .spawn(move || run(&hook, &counters, rx))
            .ok()
            .map(|_detached| tx)
    }
}

/// The hook's thread: each refused request in turn, a panic caught.
fn run(hook: &RefusedFn, counters: &Counters, rx: Receiver<Refused>) {
    for refused in rx {
        // The hook only gets the request: no state of the layer is seen
        // half-updated if it panics.
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| hook(refused))) {
            crate::drop_quietly(payload);
            counters.hook_panicked();
        }
    }
}

impl fmt::Debug for RefusedHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RefusedHook").finish_non_exhaustive()
    }
}
