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
//! handle through a one-shot protocol on one state word, whose value is
//! one of:
//!
//! | value | meaning | who may touch `stage` / the waiter |
//! |---|---|---|
//! | `EMPTY` | no result, no waiter | task side: `stage`; handle: its waiter, unpublished |
//! | `WAITING` | the word holds the address of the handle's waiter | task side: `stage`; the waiter is published |
//! | `READY` | the result is in `stage` | handle: `stage`; task side: the waiter if it saw `WAITING` |
//! | `TAKEN` | the handle took the result | nobody |
//! | `DROPPED` | the handle is gone | task side: `stage` |
//!
//! A waiter ([`Waiter`]) is a box holding the waker of a handle that
//! waits for an unfinished job: a job nobody waits for keeps no place for
//! one. Its address, aligned to 32 bytes, sits in the word above the four
//! flags below, marked by the `WAITING` bit, so the operation that
//! publishes or takes back the waiter is the one that changes the value.
//!
//! Transitions, each one atomic operation on the word (the flags are kept
//! as they are):
//! - the task side publishes its result with `EMPTY -> READY` or
//!   `WAITING -> READY` (then it owns the waiter: it wakes it and frees
//!   it); in `DROPPED` nobody will look, so it drops the result itself;
//! - the handle publishes a waiter with `EMPTY -> WAITING`, takes it back
//!   with `WAITING -> EMPTY` to give it another waker, takes a `READY`
//!   result and moves to `TAKEN`; on drop, from `EMPTY` or `WAITING` it
//!   moves to `DROPPED` and lets go of the cell in that same operation
//!   (freeing the waiter it took back), and from `READY` it drops the
//!   unread result, then lets go.
//!
//! Beside the value, two flags of the same word decide between the job
//! starting and the handle cancelling it, whichever comes first:
//! - the task side sets `STARTED` (`fetch_or`) before it runs or resolves
//!   the job; if `CANCELLED` was already set it drops the body unrun and
//!   touches nothing else (the result slot and the waiter stay as they
//!   are);
//! - the handle sets `CANCELLED` (compare-exchange) only while neither flag
//!   is set; from then on it answers `Cancelled` itself and owns its
//!   waiter outright, since the task side will never publish a result.
//!
//! A job whose handle is gone cannot be cancelled, so the task side skips
//! the read-modify-write when the value is already `DROPPED`.
//!
//! Two more flags, `TASK` and `HANDLE`, are the two holds on the cell.
//! Each side clears its own flag as its last touch of the cell (the handle
//! in the same operation that moves to `DROPPED` when it has nothing left
//! in the cell to drop); whoever clears the second one frees the cell. A
//! hold is let go of with acquire-release ordering, so the side that frees
//! sees every write the other made, as an `Arc`'s last drop does.
//!
//! `stage` holds the body, then the result, in one place with no tag
//! ([`Slot`]): which of them is there, if either, follows from the state and
//! from where the task side is in its own path (the body from `new` until
//! it is taken to run or drop, and again while a retry waits; the result
//! from `finish` until the handle takes or drops it). Nothing in `stage` is
//! dropped with the cell: each is taken out and dropped by the side that
//! owns it then. A job whose body captures one word thus takes a cell of
//! two words: the state and the slot.
//!
//! A blocking `join` is a poll with a waker that unparks the joining thread
//! (one per thread, kept in a thread-local). A handle allocates its waiter
//! when it first waits, and reuses it for another waker while it has it
//! back.
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

// The state word: four flags in its low bits; above them the one-shot
// value, or, while the handle waits, the address of its `Waiter` (marked
// by the `WAITING` bit: a waiter is aligned to 32 bytes, so its address
// leaves the five low bits clear).

/// Flag: the task side took the job to run or resolve it.
const STARTED: usize = 1 << 0;
/// Flag: the handle cancelled the job before it started.
const CANCELLED: usize = 1 << 1;
/// Hold: the task side (a lane, a worker, a `PendingJob`) still has the
/// cell.
const TASK: usize = 1 << 2;
/// Hold: the handle still has the cell.
const HANDLE: usize = 1 << 3;
/// The four flags.
const FLAGS: usize = STARTED | CANCELLED | TASK | HANDLE;
/// The handle left a waiter: the bits above the flags are its address.
const WAITING: usize = 1 << 4;
/// No result yet, and no waiter (with `WAITING` clear, as the next three).
const EMPTY: usize = 0;
/// The result is in `stage`.
const READY: usize = 1 << 5;
/// The handle took the result.
const TAKEN: usize = 2 << 5;
/// The handle was dropped.
const DROPPED: usize = 3 << 5;

/// The one-shot value of a state word: `EMPTY`, `WAITING`, `READY`,
/// `TAKEN` or `DROPPED`.
#[inline]
fn value(state: usize) -> usize {
    if state & WAITING != 0 {
        WAITING
    } else {
        state & !FLAGS
    }
}

/// A handle's waker, published in the state word while the handle waits
/// for the result: a box of its own, allocated when a handle first waits
/// on an unfinished job, so the cell keeps no place for it.
#[repr(align(32))]
struct Waiter(Waker);

impl Waiter {
    /// The state word's bits for the waiter: its address and `WAITING`.
    /// Its provenance is exposed, for [`Waiter::from_state`] to take back.
    fn into_state(waiter: Box<Waiter>) -> usize {
        let address = Box::into_raw(waiter).expose_provenance();
        debug_assert_eq!(address & (FLAGS | WAITING), 0, "aligned to 32");
        address | WAITING
    }

    /// The waiter a state word with `WAITING` holds.
    ///
    /// # Safety
    ///
    /// `state` has `WAITING`, its address came from [`Waiter::into_state`],
    /// and the caller has just taken the waiter over (by the operation
    /// that moved the state away from that address, or as the only side
    /// that may touch it): each waiter is taken back once.
    unsafe fn from_state(state: usize) -> Box<Waiter> {
        let address = state & !(FLAGS | WAITING);
        // SAFETY: as the caller promises: the address of a live box whose
        // provenance `into_state` exposed.
        unsafe { Box::from_raw(std::ptr::with_exposed_provenance_mut(address)) }
    }
}

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
/// A job whose body is one word keeps its cell at two words, with the
/// state: an enum's tag would add a third.
union Slot<B: Body> {
    body: ManuallyDrop<B>,
    /// The error is boxed so a job's cell stays small while it waits.
    done: ManuallyDrop<Result<B::Output, Box<JobError>>>,
}

pub(crate) struct JobCell<B: Body, M: Meta = JobMeta> {
    state: AtomicUsize,
    meta: M,
    stage: UnsafeCell<Slot<B>>,
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
// docs, which gives `stage` and a published waiter one owner at a time,
// handed over by an atomic operation with Release on the giving side and
// Acquire on the taking side. What crosses threads is the body (`B:
// Send`), the result (`B::Output: Send`) and a `Waker` (`Send + Sync`).
unsafe impl<B: Body, M: Meta> Sync for JobCell<B, M> {}

/// A job allocated but not yet queued: it can still be taken apart to give
/// the caller's closure back. Dropped as it is, it drops its body.
pub(crate) struct NewJob<B: Body>(ManuallyDrop<Cell<B>>);

enum Cell<B: Body> {
    Stamped(Recycled<JobCell<B, JobMeta>>),
    Plain(Recycled<JobCell<B, NoMeta>>),
}

impl<B: Body> Cell<B> {
    /// The body of a cell nothing else has seen, its memory released.
    fn into_body(self) -> B {
        match self {
            Cell::Stamped(cell) => cell.into_inner().into_body(),
            Cell::Plain(cell) => cell.into_inner().into_body(),
        }
    }
}

impl<B: Body> NewJob<B> {
    /// A job with `meta`, or with none (`None`: not stamped, no deadline).
    #[inline]
    pub(crate) fn new(body: B, meta: Option<JobMeta>) -> Self {
        NewJob(ManuallyDrop::new(match meta {
            Some(meta) => Cell::Stamped(JobCell::new(body, meta)),
            None => Cell::Plain(JobCell::new(body, NoMeta)),
        }))
    }

    /// The cell, which the caller takes over, body and all.
    #[inline]
    fn into_cell(self) -> Cell<B> {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again: the cell is taken
        // out of it once.
        unsafe { ManuallyDrop::take(&mut this.0) }
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
        self.into_cell().into_body()
    }
}

impl<B: Body> Drop for NewJob<B> {
    fn drop(&mut self) {
        // SAFETY: `drop` runs once, and the field, a `ManuallyDrop`, is not
        // dropped again after it.
        let cell = unsafe { ManuallyDrop::take(&mut self.0) };
        drop(cell.into_body());
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
    use super::{JobCell, NewJob, NoMeta};
    use crate::job::body::Once;
    use crate::job::task::JobMeta;
    use std::sync::Arc;

    /// A job allocated and dropped before it is queued (a panic between
    /// the two, say) drops its body once and frees its cell once, stamped
    /// or not (Miri runs this test, with the cell cache on and bypassed).
    #[test]
    fn a_job_dropped_before_it_is_queued_drops_its_body_once() {
        let owned = Arc::new(());
        for meta in [None, Some(JobMeta::new(1, 0))] {
            let held = owned.clone();
            drop(NewJob::new(Once(Some(move || drop(held))), meta));
        }
        let held = owned.clone();
        let body = NewJob::new(Once(Some(move || drop(held))), None).into_body();
        assert_eq!(Arc::strong_count(&owned), 2);
        drop(body);
        assert_eq!(Arc::strong_count(&owned), 1);
    }

    fn cell_size<F: FnOnce() + Send + 'static>(_: &F) -> usize {
        size_of::<JobCell<Once<F>, NoMeta>>()
    }

    #[test]
    fn a_job_that_captures_a_word_takes_two_words() {
        let (tx, _rx) = std::sync::mpsc::sync_channel::<()>(1);
        let tx = std::sync::Arc::new(tx);
        // The state (8, a waiting handle's waker included), the body or
        // its result (8: one place, no tag): the job of
        // `benches/memory.rs`, whose closure holds one pointer.
        assert_eq!(cell_size(&move || drop(tx)), 16);
    }
}
