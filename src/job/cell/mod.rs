//! A queued job and the slot its result lands in, in one allocation.
//!
//! `enqueue` allocates one `JobCell<B, M>`, in memory recycled from
//! earlier cells (`recycle.rs`). The lane holds it
//! as a [`Task`] (type-erased to run it), the caller's
//! [`JobHandle`](crate::JobHandle) holds it as a `Completion<T>` (type-erased
//! to read the result). Neither side needs a second allocation, and the
//! cell counts its two holders in its own state word rather than in an
//! `Arc`'s two counters (16 bytes less per queued job).
//!
//! The cell has no lock. Its body is only ever touched by whoever holds the
//! job's one [`Task`] (a lane, then a worker, or a `PendingJob`), so running
//! it needs no synchronisation; the cell keeps a retrying body between
//! attempts and the lane re-queues the same task. The result crosses to the
//! handle through a one-shot protocol on one state word:
//!
//! | state | meaning | who may touch `stage` / `waker` |
//! |---|---|---|
//! | `EMPTY` | no result, no waiter | task side: `stage`; handle: `waker` |
//! | `WAITING` | the handle left a waker | task side: `stage`; `waker` is published |
//! | `READY` | the result is in `stage` | handle: `stage`; task side: `waker` if it saw `WAITING` |
//! | `TAKEN` | the handle took the result | nobody |
//! | `DROPPED` | the handle is gone, or going | task side: `stage`; handle: `waker` until it lets go of the cell |
//!
//! Transitions, each one atomic operation on the value (the bits beside it
//! are kept as they are):
//! - the task side publishes its result with `EMPTY -> READY` or
//!   `WAITING -> READY` (then it takes the waker and wakes it); in
//!   `DROPPED` nobody will look, so it drops the result itself;
//! - the handle registers a waker with `EMPTY -> WAITING` (after writing
//!   it), takes it back with `WAITING -> EMPTY` to replace it, takes a
//!   `READY` result and moves to `TAKEN`, and on drop moves to `DROPPED`:
//!   from `WAITING` it then drops its waker, from `READY` the unread
//!   result.
//!
//! Beside the one-shot value, two bits of the same word decide between the
//! job starting and the handle cancelling it, whichever comes first:
//! - the task side sets `STARTED` (`fetch_or`) before it runs or resolves
//!   the job; if `CANCELLED` was already set it drops the body unrun and
//!   touches nothing else (the result slot and the waker stay as they are);
//! - the handle sets `CANCELLED` (compare-exchange) only while neither bit
//!   is set; from then on it answers `Cancelled` itself and owns `waker`
//!   outright, since the task side will never publish a result.
//!
//! A job whose handle is gone cannot be cancelled, so the task side skips
//! the read-modify-write when the value is already `DROPPED`.
//!
//! Two more bits, `TASK` and `HANDLE`, are the two holds on the cell. Each
//! side clears its own bit as its last touch of the cell (the handle in
//! the same operation that moves to `DROPPED` when it has nothing left to
//! drop); whoever clears the second one frees the cell. A hold is let go
//! of with acquire-release ordering, so the side that frees sees every
//! write the other made, as an `Arc`'s last drop does.
//!
//! `stage` holds the body, then the result, in one place with no tag
//! ([`Slot`]): which of them is there, if either, follows from the state and
//! from where the task side is in its own path (the body from `new` until
//! it is taken to run or drop, and again while a retry waits; the result
//! from `finish` until the handle takes or drops it). Nothing in `stage` is
//! dropped with the cell: each is taken out and dropped by the side that
//! owns it then.
//!
//! A blocking `join` is a poll with a waker that unparks the joining thread
//! (one per thread, kept in a thread-local). The waker slot holds a box,
//! allocated at a handle's first registration and reused by the next.
//!
//! The loom models `tests/loom/cell.rs` check the races between completing,
//! polling, joining, cancelling and dropping the handle; the test binary
//! `tests/leaks` counts allocations to check that every cell is freed
//! exactly once, whichever side lets go last.
//!
//! The cell's shape, its state word and its two holds are here; what the
//! task side does with it (run, publish, release) is in `run.rs`, what the
//! handle does (poll, join, cancel, let go) in `result.rs`.

mod recycle;
pub(super) mod result;
mod run;

pub(crate) use recycle::{release_spare, set_depot_limit};

pub(crate) use result::{Completion, ReleaseHandle};

use super::body::Body;
use super::error::JobError;
use super::handle::JobHandle;
use super::task::{JobMeta, RawJob, Task};
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::cell::UnsafeCell;
use recycle::Recycled;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::task::Waker;

/// No result yet, and no waiter.
const EMPTY: usize = 0;
/// The handle left a waker in `waker`.
const WAITING: usize = 1;
/// The result is in `stage`.
const READY: usize = 2;
/// The handle took the result.
const TAKEN: usize = 3;
/// The handle was dropped.
const DROPPED: usize = 4;
/// The one-shot value: one of the five above.
const VALUE: usize = 0b111;
/// Flag: the task side took the job to run or resolve it.
const STARTED: usize = 1 << 3;
/// Flag: the handle cancelled the job before it started.
const CANCELLED: usize = 1 << 4;
/// Hold: the task side (a lane, a worker, a `PendingJob`) still has the
/// cell.
const TASK: usize = 1 << 5;
/// Hold: the handle still has the cell.
const HANDLE: usize = 1 << 6;

/// The body while the job waits (and between a retry's attempts), then its
/// result: one place for either, with no tag. The protocol tells them
/// apart, as it tells who owns the place:
/// - the body is there from [`JobCell::new`] until the task side takes it
///   to run or drop it (`take_body`), and again from `keep_body` (a retry)
///   until it takes it once more;
/// - the result is there from `finish` until the handle takes it (`READY ->
///   TAKEN`) or drops it unread (`detach`), or, if the handle was gone
///   already, until `finish` drops it;
/// - otherwise nothing is, and nothing is dropped with the cell.
///
/// A job whose body is one word keeps its cell at three words: an enum's
/// tag would add a fourth.
union Slot<B: Body> {
    body: ManuallyDrop<B>,
    /// The error is boxed so a job's cell stays small while it waits.
    done: ManuallyDrop<Result<B::Output, Box<JobError>>>,
}

pub(crate) struct JobCell<B: Body, M: Meta = JobMeta> {
    state: AtomicUsize,
    meta: M,
    stage: UnsafeCell<Slot<B>>,
    /// Boxed: 8 bytes in every cell rather than 16, for the waker that
    /// only a handle awaited or joined while its job waits ever leaves.
    waker: UnsafeCell<Option<Box<Waker>>>,
}

/// What a cell keeps of its [`JobMeta`]: all of it, or nothing for the
/// usual job that was not stamped and has no deadline (16 bytes less per
/// queued job).
pub(crate) trait Meta: Send + Sync + 'static {
    fn get(&self) -> Option<&JobMeta>;
}

impl Meta for JobMeta {
    #[inline]
    fn get(&self) -> Option<&JobMeta> {
        Some(self)
    }
}

/// A job with no [`JobMeta`]: not stamped, no deadline.
pub(crate) struct NoMeta;

impl Meta for NoMeta {
    #[inline]
    fn get(&self) -> Option<&JobMeta> {
        None
    }
}

// SAFETY: the cells are only reached through the protocol in the module
// docs, which gives each of `stage` and `waker` one owner at a time, handed
// over by an atomic operation with Release on the giving side and Acquire
// on the taking side. What crosses threads is the body (`B: Send`), the
// result (`B::Output: Send`) and a `Waker` (`Send + Sync`).
unsafe impl<B: Body, M: Meta> Sync for JobCell<B, M> {}

/// A job allocated but not yet queued: it can still be taken apart to give
/// the caller's closure back. Dropped as it is, it drops its body.
pub(crate) struct NewJob<B: Body>(Cell<B>);

enum Cell<B: Body> {
    Stamped(Recycled<JobCell<B, JobMeta>>),
    Plain(Recycled<JobCell<B, NoMeta>>),
}

impl<B: Body> NewJob<B> {
    /// A job with `meta`, or with none (`None`: not stamped, no deadline).
    #[inline]
    pub(crate) fn new(body: B, meta: Option<JobMeta>) -> Self {
        NewJob(match meta {
            Some(meta) => Cell::Stamped(JobCell::new(body, meta)),
            None => Cell::Plain(JobCell::new(body, NoMeta)),
        })
    }

    /// The cell, which the caller takes over, body and all.
    #[inline]
    fn into_cell(self) -> Cell<B> {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again: the cell is moved
        // out once.
        unsafe { std::ptr::read(&this.0) }
    }

    /// The task for a lane and the handle for the caller: the cell's two
    /// holds.
    #[inline]
    pub(crate) fn split(self) -> (Task, JobHandle<B::Output>) {
        match self.into_cell() {
            Cell::Stamped(cell) => JobCell::split(cell),
            Cell::Plain(cell) => JobCell::split(cell),
        }
    }

    /// The body back, unrun.
    pub(crate) fn into_body(self) -> B {
        match self.into_cell() {
            Cell::Stamped(cell) => cell.into_inner().into_body(),
            Cell::Plain(cell) => cell.into_inner().into_body(),
        }
    }
}

impl<B: Body> Drop for NewJob<B> {
    fn drop(&mut self) {
        // SAFETY: `drop` runs once, and `self` is not used afterwards.
        let cell = unsafe { std::ptr::read(&self.0) };
        let body = match cell {
            Cell::Stamped(cell) => cell.into_inner().into_body(),
            Cell::Plain(cell) => cell.into_inner().into_body(),
        };
        drop(body);
    }
}

impl<B: Body, M: Meta> JobCell<B, M> {
    fn new(body: B, meta: M) -> Recycled<Self> {
        Recycled::new(JobCell {
            state: AtomicUsize::new(EMPTY | TASK | HANDLE),
            meta,
            stage: UnsafeCell::new(Slot {
                body: ManuallyDrop::new(body),
            }),
            waker: UnsafeCell::new(None),
        })
    }

    /// The body of a cell nothing else has seen.
    fn into_body(self) -> B {
        let slot = self.stage.into_inner();
        // SAFETY: a cell that was never split holds its body (`Slot`).
        ManuallyDrop::into_inner(unsafe { slot.body })
    }

    fn split(cell: Recycled<Self>) -> (Task, JobHandle<B::Output>) {
        let cell = cell.into_raw();
        let task: NonNull<dyn RawJob> = cell;
        let handle: NonNull<dyn Completion<B::Output>> = cell;
        // SAFETY: the cell starts with both holds (`TASK | HANDLE`), one
        // given to each side; `release_task` and `release_handle` (the
        // releasers) let go of them.
        unsafe { (Task::from_hold(task), JobHandle::from_hold(handle)) }
    }

    /// Frees the cell once neither side holds it.
    ///
    /// # Safety
    ///
    /// The caller cleared the last hold; nobody touches the cell again.
    unsafe fn free(cell: NonNull<Self>) {
        // SAFETY: the cell was given up by `Recycled::into_raw` in `split`,
        // and the last hold is gone.
        unsafe { Recycled::free(cell) };
    }
}

#[cfg(test)]
mod tests {
    use super::{JobCell, NoMeta};
    use crate::job::body::Once;

    fn cell_size<F: FnOnce() + Send + 'static>(_: &F) -> usize {
        size_of::<JobCell<Once<F>, NoMeta>>()
    }

    #[test]
    fn a_job_that_captures_a_word_takes_three_words() {
        let (tx, _rx) = std::sync::mpsc::sync_channel::<()>(1);
        let tx = std::sync::Arc::new(tx);
        // The state (8), the body or its result (8: one place, no tag), the
        // boxed waker (8): the job of `benches/memory.rs`, whose closure
        // holds one pointer.
        assert_eq!(cell_size(&move || drop(tx)), 24);
    }
}
