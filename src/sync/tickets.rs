//! A pool lane's queue, addressed by tickets the lane hands out: each job
//! gets a *ticket* (the lane's `opened` count as its producer took it),
//! each worker a *claim* (the lane's `claimed` count), and a claim is the
//! ticket it reads. Ticket `t` lives in slot `t % BLOCK` of the block whose
//! `start` is `t - t % BLOCK`. A push is a store into its slot and a stamp,
//! a take a load of its slot and a stamp: no read-modify-write. A segmented
//! queue instead makes every producer compare-exchange one tail and every
//! worker one head, ordering again what the lane's counts have already
//! ordered (benches/README.md).
//!
//! # Blocks, and why no walk meets freed memory
//!
//! 1. Ticket `t` is pushed once, by its producer; claim `c` is taken once,
//!    by its worker; every claim is a ticket handed out, so its push comes,
//!    and a take waits for it. A thread holds at most one ticket it has
//!    not pushed (the lane pushes right after it opens a slot).
//! 2. The block starting at ticket `s > 0` is linked by the producer of
//!    ticket `s`, once the block before it is linked: it waits until
//!    `linked` says so. Links are made one at a time and in order, each
//!    linker seeing all the one before did (`linked` is stored last, with
//!    release, and loaded with acquire); `head`, the oldest block of the
//!    list, is read and written by linkers only. The producers of the
//!    other tickets of a block wait for its link; by rule 1 the wait ends.
//! 3. Blocks are recycled, not freed while the queue lives: a linker takes
//!    the `head` block for the new one if every slot of it was read (and it
//!    is not the block the new one follows), else it allocates one. So
//!    every block pointer ever read points to a live `Block`; what may
//!    change under a reader is which tickets it holds (`start`).
//! 4. A block holding a ticket not yet read is not recycled, nor is any
//!    block after it (recycling takes `head`, in list order). So a reader
//!    that finds a block's `start` equal to its ticket's has the ticket's
//!    block, and it stays that block until the reader is done with it
//!    (`start` is stored with release after the block was made ready, and
//!    loaded with acquire). A block found holding later tickets links back
//!    (`prev`) through blocks that are not recycled either, down to the
//!    reader's.
//! 5. A walk forward, from a block holding earlier tickets, may pass
//!    blocks recycled under it, and read a stale `start` or `next` there.
//!    That is harmless: it stops only at a block whose `start` is its
//!    ticket's (rule 4: each `start` value is stored once, by the linker
//!    of that block, and the block keeps it while the ticket is unread),
//!    each step checks that the next block starts `BLOCK` tickets after the
//!    one before, and a walk that fails starts over from its hint (`tail`
//!    for producers, `taking` for workers).
//!
//! Nothing here takes a lock, but a push or take may wait for another
//! thread, as in a segmented queue: the producers of a block's tickets,
//! and the linkers after it, for the producer of its first ticket to link
//! it; a take for its ticket's producer. Rule 1 keeps those waits from
//! forming a cycle.
//!
//! A lane keeps the blocks of its longest backlog until the pool drops:
//! 64 slots a block, 24 bytes a slot for a pool's job (1.5 KiB a block).
//! A value's drop must not panic (a pool job's does not): the queue's drop
//! would leak the values after it.
//!
//! Under loom the blocks hold two slots, so the models at the end of this
//! file link, walk and recycle within a few tickets
//! (`RUSTFLAGS="--cfg loom" cargo test --release --lib tickets`).

// Without loom the pool's lanes use it; under loom only the models do.
#![cfg_attr(loom, allow(dead_code))]

use super::Backoff;
use super::atomic::{AtomicPtr, AtomicUsize, Ordering};
use super::cell::UnsafeCell;
#[cfg(loom)]
use super::yield_now;
use crossbeam_utils::CachePadded;
use std::mem::MaybeUninit;
use std::ptr;

/// Under loom, blocks of two: the models cross block boundaries and
/// recycle blocks within a few tickets.
const SHIFT: u32 = if cfg!(loom) { 1 } else { 6 };
/// Slots a block holds.
const BLOCK: usize = 1 << SHIFT;

/// A slot's states. Only its producer writes `WRITTEN`, only its worker
/// `READ`, only the linker that recycles the block `EMPTY`.
const EMPTY: usize = 0;
const WRITTEN: usize = 1;
const READ: usize = 2;

struct Slot<T> {
    state: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

struct Block<T> {
    /// The first ticket the block holds (rule 4).
    start: AtomicUsize,
    /// The block after this one, null until it is linked.
    next: AtomicPtr<Block<T>>,
    /// The block before this one (null for the first block).
    prev: AtomicPtr<Block<T>>,
    slots: [Slot<T>; BLOCK],
}

impl<T> Block<T> {
    fn alloc(start: usize) -> *mut Block<T> {
        Box::into_raw(Box::new(Block {
            start: AtomicUsize::new(start),
            next: AtomicPtr::new(ptr::null_mut()),
            prev: AtomicPtr::new(ptr::null_mut()),
            slots: std::array::from_fn(|_| Slot {
                state: AtomicUsize::new(EMPTY),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            }),
        }))
    }

    /// Were all the block's slots read? Then no reader is left in it.
    fn all_read(&self) -> bool {
        // ORDERING: Acquire, paired with each worker's Release of `READ`:
        // its read of the value happens before the block is reused.
        self.slots
            .iter()
            .all(|slot| slot.state.load(Ordering::Acquire) == READ)
    }
}

/// The producers' side: written by linkers only (rule 2).
struct Ends<T> {
    /// The newest block linked: producers start there.
    tail: AtomicPtr<Block<T>>,
    /// The `start` of the newest block linked, stored last by its linker.
    linked: AtomicUsize,
    /// The oldest block of the list: the next one to recycle.
    head: AtomicPtr<Block<T>>,
}

pub(crate) struct Tickets<T> {
    ends: CachePadded<Ends<T>>,
    /// The block of a recent take: workers start there.
    taking: CachePadded<AtomicPtr<Block<T>>>,
}

// SAFETY: a value is written by one thread and read by one other, each
// access ordered by its slot's state (rule 1): the queue moves `T`s between
// threads and never shares one, so `T: Send` is enough.
unsafe impl<T: Send> Send for Tickets<T> {}
// SAFETY: as above; `&Tickets` only reaches a value through the ticket or
// claim its caller alone holds.
unsafe impl<T: Send> Sync for Tickets<T> {}

/// The block starting at `start`, walking from `at`, or `None` if the walk
/// must start over (the block is not linked yet, or a block on the way was
/// recycled: rule 5).
///
/// # Safety
///
/// `at` is a block of the queue borrowed for `'a` (read from its `tail`,
/// `taking`, or a block's `prev` or `next`).
#[inline]
unsafe fn walk<'a, T>(at: *mut Block<T>, start: usize) -> Option<&'a Block<T>> {
    // SAFETY: the caller's promise, and every block pointer the queue hands
    // out stays valid while it lives (rule 3).
    let mut block = unsafe { &*at };
    // ORDERING: Acquire on every `start`, paired with its linker's
    // Release: the block's other fields are seen as the linker left them.
    let mut at_start = block.start.load(Ordering::Acquire);
    while at_start > start {
        // A block after the reader's: neither it nor any block back to the
        // reader's is recycled while the reader's ticket is unread (rule 4).
        let prev = block.prev.load(Ordering::Acquire);
        if prev.is_null() {
            return None;
        }
        // SAFETY: as above.
        block = unsafe { &*prev };
        let prev_start = block.start.load(Ordering::Acquire);
        if prev_start.wrapping_add(BLOCK) != at_start {
            return None;
        }
        at_start = prev_start;
    }
    while at_start < start {
        let next = block.next.load(Ordering::Acquire);
        if next.is_null() {
            return None;
        }
        // SAFETY: as above.
        block = unsafe { &*next };
        let next_start = block.start.load(Ordering::Acquire);
        if next_start != at_start + BLOCK {
            return None;
        }
        at_start = next_start;
    }
    Some(block)
}

impl<T> Tickets<T> {
    pub(crate) fn new() -> Tickets<T> {
        let first = Block::alloc(0);
        Tickets {
            ends: CachePadded::new(Ends {
                tail: AtomicPtr::new(first),
                linked: AtomicUsize::new(0),
                head: AtomicPtr::new(first),
            }),
            taking: CachePadded::new(AtomicPtr::new(first)),
        }
    }

    /// The block starting at `start`, walking from `hint` (waiting for its
    /// link if need be).
    #[inline]
    fn find(&self, hint: &AtomicPtr<Block<T>>, start: usize) -> (*mut Block<T>, &Block<T>) {
        let backoff = Backoff::new();
        loop {
            // ORDERING: Acquire, paired with the Release of whoever stored
            // the hint: the block it names is seen as linked.
            let at = hint.load(Ordering::Acquire);
            // SAFETY: the hint holds a block of this queue, borrowed for
            // as long as the block returned.
            if let Some(block) = unsafe { walk(at, start) } {
                return (at, block);
            }
            backoff.snooze();
        }
    }

    /// Puts ticket `ticket`'s value in.
    ///
    /// # Safety
    ///
    /// The ticket is the caller's alone (no other thread pushes it, and
    /// this thread pushes it once), tickets are handed out in order from 0
    /// without a gap, and the caller holds no other ticket it has not
    /// pushed (rule 1).
    #[inline]
    pub(crate) unsafe fn push(&self, ticket: usize, value: T) {
        let start = ticket & !(BLOCK - 1);
        let block = if ticket == start && ticket != 0 {
            self.link(start)
        } else {
            self.find(&self.ends.tail, start).1
        };
        let slot = &block.slots[ticket % BLOCK];
        // SAFETY: the ticket is ours alone (the caller's promise), and its
        // block holds it until it is read (rule 4): no other thread touches
        // this value until the stamp below.
        slot.value.with_mut(|p| unsafe { (*p).write(value) });
        // ORDERING: Release publishes the value to the worker's Acquire.
        slot.state.store(WRITTEN, Ordering::Release);
    }

    /// Links the block starting at `start`, recycled or new (rules 2, 3).
    #[inline(never)]
    fn link(&self, start: usize) -> &Block<T> {
        let ends = &*self.ends;
        let backoff = Backoff::new();
        // ORDERING: Acquire, paired with the Release of the linker before:
        // all it did (its block, `tail`, `head`) is seen.
        while ends.linked.load(Ordering::Acquire) != start - BLOCK {
            backoff.snooze();
        }
        // ORDERING: Relaxed: the `linked` load above ordered the last
        // linker's stores of `tail` and `head` (this thread is the only
        // writer until it stores `linked`).
        let prev_at = ends.tail.load(Ordering::Relaxed);
        let head_at = ends.head.load(Ordering::Relaxed);
        // SAFETY: blocks live as long as the queue (rule 3).
        let (prev, head) = unsafe { (&*prev_at, &*head_at) };
        let at = if head_at != prev_at && head.all_read() {
            // Recycled: every slot read, so no reader is left in it; a walk
            // still passing through checks each step (rule 5).
            // ORDERING: Relaxed: linked by an earlier linker, seen through
            // `linked` as above.
            let next = head.next.load(Ordering::Relaxed);
            ends.head.store(next, Ordering::Relaxed);
            head.next.store(ptr::null_mut(), Ordering::Relaxed);
            for slot in &head.slots {
                slot.state.store(EMPTY, Ordering::Relaxed);
            }
            head_at
        } else {
            Block::alloc(start)
        };
        // SAFETY: as above.
        let block = unsafe { &*at };
        block.prev.store(prev_at, Ordering::Relaxed);
        // ORDERING: Release: a reader that loads this `start` sees the
        // block made ready above (rule 4).
        block.start.store(start, Ordering::Release);
        // ORDERING: Release, so a walk that reaches the block this way, or
        // from `tail`, sees it ready; `linked` last, for the next linker.
        prev.next.store(at, Ordering::Release);
        ends.tail.store(at, Ordering::Release);
        ends.linked.store(start, Ordering::Release);
        block
    }

    /// Takes claim `claim`'s value out, waiting for its producer if it has
    /// not pushed yet.
    ///
    /// # Safety
    ///
    /// The claim is the caller's alone (no other thread takes it, and this
    /// thread takes it once), and its ticket was handed out (so it will be
    /// pushed).
    #[inline]
    pub(crate) unsafe fn take(&self, claim: usize) -> T {
        let start = claim & !(BLOCK - 1);
        let (hint, block) = self.find(&self.taking, start);
        let at = ptr::from_ref(block).cast_mut();
        if at != hint {
            // ORDERING: Release, for the next worker's Acquire in `find`. A
            // stale store only costs that worker a longer walk.
            self.taking.store(at, Ordering::Release);
        }
        let slot = &block.slots[claim % BLOCK];
        let backoff = Backoff::new();
        // ORDERING: Acquire, paired with the producer's Release: its write
        // of the value happens before the read below.
        while slot.state.load(Ordering::Acquire) != WRITTEN {
            // The producer is between its ticket and its push.
            backoff.snooze();
        }
        // SAFETY: the state says the value is in, and the claim is ours
        // alone: no other thread reads it, and its producer is done.
        let value = slot.value.with_mut(|p| unsafe { (*p).assume_init_read() });
        // ORDERING: Release: the read above happens before a linker that
        // sees `READ` (with acquire) reuses the slot (rule 3).
        slot.state.store(READ, Ordering::Release);
        value
    }

    /// Blocks in the list (for the tests of recycling).
    #[cfg(test)]
    fn blocks(&self) -> usize {
        let mut at = self.ends.head.load(Ordering::Acquire);
        let mut blocks = 0;
        while !at.is_null() {
            blocks += 1;
            // SAFETY: blocks live as long as the queue (rule 3).
            at = unsafe { &*at }.next.load(Ordering::Acquire);
        }
        blocks
    }
}

impl<T> Drop for Tickets<T> {
    fn drop(&mut self) {
        // Every block is in the list from `head`: a recycled one leaves it
        // only inside its linker's `link`.
        let mut at = self.ends.head.load(Ordering::Relaxed);
        while !at.is_null() {
            // SAFETY: `&mut self`: no reader is left, and each block is
            // freed once, here.
            let block = unsafe { Box::from_raw(at) };
            for slot in &block.slots {
                if slot.state.load(Ordering::Relaxed) == WRITTEN {
                    // SAFETY: written and never read: the value is in, and
                    // dropped once, here.
                    slot.value.with_mut(|p| unsafe { (*p).assume_init_drop() });
                }
            }
            at = block.next.load(Ordering::Relaxed);
        }
    }
}

/// A pool lane's queue: [`Tickets`]. Under loom, a locked deque with the
/// same calls, which hands out the oldest value pushed whatever the claim:
/// the lane's models count jobs, not which one runs, and this queue's
/// interleavings are the models' below.
#[cfg(not(loom))]
pub(crate) type LaneQueue<T> = Tickets<T>;

#[cfg(loom)]
pub(crate) struct LaneQueue<T>(super::queue::Queue<T>);

#[cfg(loom)]
impl<T> LaneQueue<T> {
    pub(crate) fn new() -> Self {
        LaneQueue(super::queue::Queue::new())
    }

    /// As [`Tickets::push`] (the ticket is not needed).
    ///
    /// # Safety
    ///
    /// As [`Tickets::push`].
    pub(crate) unsafe fn push(&self, _ticket: usize, value: T) {
        self.0.push(value);
    }

    /// As [`Tickets::take`]: waits for a value pushed.
    ///
    /// # Safety
    ///
    /// As [`Tickets::take`].
    pub(crate) unsafe fn take(&self, _claim: usize) -> T {
        loop {
            if let Some(value) = self.0.pop() {
                return value;
            }
            yield_now();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod model;
