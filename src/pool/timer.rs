//! Retries waiting out their backoff, off the lanes and off the workers.
//!
//! A retry with a delay goes into a heap kept by one timer thread, started
//! the first time it is needed. When a retry is due the timer re-queues it
//! in its lane like any job. While the executor shuts down, retries skip
//! their remaining backoff (graceful shutdown runs them at once;
//! `shutdown_now` hands them back), so shutdown never waits on a timer.

use crate::job::task::Task;
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::{Condvar, Mutex, lock, thread, wait_until};
use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::time::Instant;

pub(crate) struct Entry {
    pub(crate) due: Instant,
    seq: u64,
    pub(crate) lane: usize,
    pub(crate) task: Task,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == CmpOrdering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Earliest due first (the heap is a max-heap, so reversed).
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.due, other.seq).cmp(&(self.due, self.seq))
    }
}

#[derive(Default)]
struct State {
    heap: BinaryHeap<Entry>,
    seq: u64,
    started: bool,
    /// Shutdown began: hand everything over now.
    flush: bool,
    /// Entries the thread took from the heap and is re-queueing now.
    in_flight: usize,
}

#[derive(Default)]
pub(crate) struct Timer {
    state: Mutex<State>,
    changed: Condvar,
    /// Entries scheduled and not yet landed (in their lanes, or handed
    /// back): the pool is neither idle nor drained while this is non-zero.
    pending: AtomicUsize,
}

/// What the timer thread should do next.
pub(crate) enum Next {
    /// These entries are due: re-queue them.
    Due(Vec<Entry>),
    /// Nothing left and shutdown began: exit.
    Exit,
}

impl Timer {
    /// Adds a retry due at `due`. Returns `Err(task)` if shutdown began
    /// (the caller re-queues it at once), and whether a timer thread must
    /// be started.
    pub(crate) fn schedule(&self, due: Instant, lane: usize, task: Task) -> Result<bool, Task> {
        let mut state = lock(&self.state);
        if state.flush {
            return Err(task);
        }
        state.seq += 1;
        let seq = state.seq;
        state.heap.push(Entry {
            due,
            seq,
            lane,
            task,
        });
        self.pending.fetch_add(1, Ordering::SeqCst);
        let start = !state.started;
        state.started = true;
        drop(state);
        self.changed.notify_one();
        Ok(start)
    }

    /// Entries scheduled and not yet landed.
    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }

    /// `n` entries taken from the timer are in their lanes (or handed
    /// back): they stop counting as pending. After the pushes, so an idle
    /// check never misses one in transit (rule 7 of `sleep/README.md`).
    pub(crate) fn landed(&self, n: usize) {
        self.pending.fetch_sub(n, Ordering::SeqCst);
    }

    /// Called by the timer thread after it re-queued entries from `next`.
    pub(crate) fn delivered(&self, n: usize) {
        self.landed(n);
        let mut state = lock(&self.state);
        state.in_flight = 0;
        drop(state);
        self.changed.notify_all();
    }

    /// Blocks until some entries are due (or everything, once flushing).
    pub(crate) fn next(&self) -> Next {
        let mut state = lock(&self.state);
        loop {
            let now = Instant::now();
            let mut due = Vec::new();
            while let Some(top) = state.heap.peek() {
                if !state.flush && top.due > now {
                    break;
                }
                if let Some(entry) = state.heap.pop() {
                    due.push(entry);
                }
            }
            if !due.is_empty() {
                state.in_flight = due.len();
                return Next::Due(due);
            }
            if state.flush {
                return Next::Exit;
            }
            let at = state.heap.peek().map(|top| top.due);
            state = match wait_until(&self.changed, state, at) {
                Ok(state) | Err(state) => state,
            };
        }
    }

    /// Graceful shutdown: no more waiting. The thread hands over every
    /// entry at once, then exits.
    pub(crate) fn flush(&self) {
        lock(&self.state).flush = true;
        self.changed.notify_all();
    }

    /// `shutdown_now`: no more waiting, and every entry still held is
    /// returned. First waits for entries the thread is re-queueing, so
    /// that they are in their lanes before the caller empties them. The
    /// entries returned still count as pending: the caller says
    /// [`landed`](Timer::landed) once it has handed them back.
    pub(crate) fn take_all(&self) -> Vec<Entry> {
        let mut state = lock(&self.state);
        state.flush = true;
        while state.in_flight > 0 {
            state = match wait_until(&self.changed, state, None) {
                Ok(state) | Err(state) => state,
            };
        }
        let taken = state.heap.drain().collect();
        drop(state);
        self.changed.notify_all();
        taken
    }

    /// No timer thread could start: no more waiting, and every entry
    /// held is returned to be re-queued now, as the thread would, counted
    /// in flight until the caller's [`delivered`](Timer::delivered) (so a
    /// `take_all` meanwhile waits for them to be in their lanes).
    pub(crate) fn take_for_delivery(&self) -> Vec<Entry> {
        let mut state = lock(&self.state);
        state.flush = true;
        let due: Vec<Entry> = state.heap.drain().collect();
        state.in_flight = due.len();
        due
    }
}

/// Spawns the timer thread; `deliver` re-queues due entries.
pub(crate) fn spawn(
    name: String,
    timer_owner: impl Fn() -> Next + Send + 'static,
    deliver: impl Fn(Vec<Entry>) + Send + 'static,
) -> std::io::Result<thread::JoinHandle<()>> {
    thread::Builder::new().name(name).spawn(move || {
        while let Next::Due(entries) = timer_owner() {
            deliver(entries);
        }
    })
}
