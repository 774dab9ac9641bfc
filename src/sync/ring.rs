//! A bounded ring whose slots are addressed by tickets the caller hands
//! out: ticket `t` lives in slot `t % len`. The caller gives each ticket to
//! one writer (a bounded mailbox lane's `opened` count does, see
//! `src/actor/lane/`) and reads the tickets in order from one reader at a
//! time, so a push is one store into the slot and one stamp, with no
//! compare-exchange of its own, and a pop is a load, a read and a stamp.
//!
//! Each slot's `stamp` says what it holds, after the bounded array queue
//! of crossbeam and D. Vyukov:
//!
//! - `stamp == t`: the slot is free for ticket `t`;
//! - `stamp == t + 1`: ticket `t`'s value is in;
//! - the reader, having taken ticket `t`'s value out (or passed over
//!   ticket `t`, whose value went elsewhere: [`Ring::skip`]), stores
//!   `t + len`, freeing the slot for the ticket `len` later.
//!
//! A writer waits until its slot is free. With a capacity check before the
//! ticket is handed out (`ticket - read < len`) the slot's previous ticket
//! has been read by then, and the writer waits at most until the reader's
//! stamp reaches it: the reader stores the stamp before its count, but a
//! check that read the count through a relaxed hint has no happens-before
//! with the stamp, so the writer may see the old stamp for a moment.
//! `len` is a power of two, at least 2, so the three states differ.
//!
//! Checked by the loom model at the end of this file
//! (`RUSTFLAGS="--cfg loom" cargo test --release --lib ring`).

// Without the actor feature, under loom only the model uses it.
#![cfg_attr(all(loom, not(feature = "actor")), allow(dead_code))]

use super::atomic::{AtomicUsize, Ordering};
use super::cell::UnsafeCell;
use super::spin_hint;
use std::mem::MaybeUninit;

/// Aligned to 32 bytes, so a slot of 32 bytes or less (a small message
/// and its stamp) never lies across two cache lines: the writer of one
/// slot and the reader of its neighbour then share no line more than the
/// slots' own sizes make them.
#[repr(align(32))]
struct Slot<T> {
    stamp: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

pub(crate) struct Ring<T> {
    slots: Box<[Slot<T>]>,
    mask: usize,
}

// SAFETY: a value is written by one thread and read by one other, each
// access ordered by its slot's stamp (module docs): the ring moves `T`s
// between threads and never shares one, so `T: Send` is enough.
unsafe impl<T: Send> Send for Ring<T> {}
// SAFETY: as above; `&Ring` only gives access to a value through a stamp
// that says whose turn it is.
unsafe impl<T: Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    /// A ring of at least `capacity` slots (a power of two, at least 2).
    pub(crate) fn new(capacity: usize) -> Ring<T> {
        let len = capacity.max(2).next_power_of_two();
        let slots = (0..len)
            .map(|i| Slot {
                stamp: AtomicUsize::new(i),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect();
        Ring {
            slots,
            mask: len - 1,
        }
    }

    #[inline]
    fn slot(&self, ticket: usize) -> &Slot<T> {
        &self.slots[ticket & self.mask]
    }

    #[inline]
    fn len(&self) -> usize {
        self.mask + 1
    }

    /// Puts ticket `ticket`'s value in, once the ticket `len` before it
    /// has been read or skipped (it waits for that).
    ///
    /// # Safety
    ///
    /// The ticket is the caller's alone: no other thread writes it, and
    /// this thread writes it once.
    #[inline]
    pub(crate) unsafe fn write(&self, ticket: usize, value: T) {
        let slot = self.slot(ticket);
        // ORDERING: Acquire, paired with the reader's Release store that
        // freed the slot: its read of the previous value happens before
        // this write.
        while slot.stamp.load(Ordering::Acquire) != ticket {
            spin_hint();
        }
        // SAFETY: the stamp says the slot is free for `ticket`, which is
        // ours alone (the caller's promise): the reader does not touch the
        // value until the stamp below, and no other writer has this ticket.
        slot.value.with_mut(|p| unsafe { (*p).write(value) });
        // ORDERING: Release publishes the value to the reader's Acquire.
        slot.stamp.store(ticket.wrapping_add(1), Ordering::Release);
    }

    /// Is ticket `ticket`'s value in? A peek.
    #[inline]
    pub(crate) fn is_written(&self, ticket: usize) -> bool {
        // ORDERING: Acquire, as in `read`; a peek that says yes is
        // followed by a `read` that loads again.
        self.slot(ticket).stamp.load(Ordering::Acquire) == ticket.wrapping_add(1)
    }

    /// Takes ticket `ticket`'s value out, if it is in, and frees the slot.
    ///
    /// # Safety
    ///
    /// No other thread reads or skips on this ring at the same time, and
    /// `ticket` is the first ticket not yet read or skipped.
    #[inline]
    pub(crate) unsafe fn read(&self, ticket: usize) -> Option<T> {
        let slot = self.slot(ticket);
        // ORDERING: Acquire, paired with the writer's Release: its write
        // of the value happens before the read below.
        if slot.stamp.load(Ordering::Acquire) != ticket.wrapping_add(1) {
            return None;
        }
        // SAFETY: the stamp says ticket `ticket`'s value is in and no
        // writer touches it until the slot is freed below; the caller is
        // the only reader, so the value is read out once.
        let value = slot.value.with_mut(|p| unsafe { (*p).assume_init_read() });
        // ORDERING: Release, paired with the next writer's Acquire: the
        // read above happens before its write.
        slot.stamp
            .store(ticket.wrapping_add(self.len()), Ordering::Release);
        Some(value)
    }

    /// Frees ticket `ticket`'s slot without reading it: the ticket's value
    /// was kept elsewhere and has been taken from there.
    ///
    /// # Safety
    ///
    /// As for [`Ring::read`]; and nothing was written for `ticket`.
    #[inline]
    pub(crate) unsafe fn skip(&self, ticket: usize) {
        let slot = self.slot(ticket);
        debug_assert_eq!(slot.stamp.load(Ordering::Relaxed), ticket);
        // ORDERING: Release, as in `read` (nothing was read, but the
        // next writer's Acquire still pairs with it).
        slot.stamp
            .store(ticket.wrapping_add(self.len()), Ordering::Release);
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        let mask = self.mask;
        for (i, slot) in self.slots.iter().enumerate() {
            // A written slot's stamp is its ticket plus one; a free one's
            // is its ticket, and the slot's tickets are `i` modulo `len`.
            let stamp = slot.stamp.load(Ordering::Relaxed);
            if stamp.wrapping_sub(1) & mask == i {
                // SAFETY: `&mut self`: no writer or reader is left, and the
                // stamp says a value is in and was never read.
                slot.value.with_mut(|p| unsafe { (*p).assume_init_drop() });
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Ring;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn tickets_come_out_in_order_and_slots_are_reused() {
        let ring = Ring::new(3);
        assert_eq!(ring.len(), 4);
        for t in 0..10usize {
            // SAFETY: one thread writes each ticket once.
            unsafe { ring.write(t, t * 10) };
            // SAFETY: this thread is the only reader; `t` is next.
            assert_eq!(unsafe { ring.read(t) }, Some(t * 10));
        }
        // Ticket 10 is not written: nothing to read, and the slot's stamp
        // does not pass for ticket 6 (the same slot, read long ago).
        assert!(!ring.is_written(10));
        // SAFETY: as above.
        assert_eq!(unsafe { ring.read(10) }, None);
        // SAFETY: as above.
        unsafe { ring.write(11, 110) };
        // SAFETY: as above; ticket 10's value was kept elsewhere.
        unsafe { ring.skip(10) };
        assert!(ring.is_written(11));
        // SAFETY: as above.
        assert_eq!(unsafe { ring.read(11) }, Some(110));
    }

    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn values_never_read_are_dropped_with_the_ring_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let ring = Ring::new(4);
        for t in 0..4 {
            // SAFETY: one thread writes each ticket once.
            unsafe { ring.write(t, Counted(drops.clone())) };
        }
        // 0 and 1 are read (and dropped here), which frees their slots for
        // tickets 4 and 5; 2 to 5 stay in the ring.
        for t in 0..2 {
            // SAFETY: one reader, tickets in order.
            drop(unsafe { ring.read(t) });
        }
        for t in 4..6 {
            // SAFETY: as above.
            unsafe { ring.write(t, Counted(drops.clone())) };
        }
        assert_eq!(drops.load(Ordering::Relaxed), 2);
        drop(ring);
        assert_eq!(drops.load(Ordering::Relaxed), 6);
    }
}

#[cfg(all(test, loom))]
mod model {
    use super::Ring;
    use crate::sync::{Arc, thread};

    fn read_next(ring: &Ring<usize>, ticket: usize) -> usize {
        loop {
            // SAFETY: the model's main thread is the only reader and reads
            // the tickets in order.
            if let Some(v) = unsafe { ring.read(ticket) } {
                return v;
            }
            thread::yield_now();
        }
    }

    /// Two writers, one of them reusing a slot the reader frees, and a
    /// skipped ticket: every value comes out once, in ticket order, and
    /// the reuse waits for the read (no value is overwritten). The tickets
    /// are handed out by hand here; the lane's capacity check and side list
    /// around the ring have models of their own (`actor/lane/model.rs`).
    #[test]
    fn writers_and_the_reader_agree_on_every_slot() {
        loom::model(|| {
            let ring = Arc::new(Ring::new(2));
            let a = {
                let ring = ring.clone();
                thread::spawn(move || {
                    // SAFETY: tickets 0 and 2 have this one writer.
                    unsafe { ring.write(0, 100) };
                    // Slot 0 again: waits until ticket 0 is read.
                    // SAFETY: as above.
                    unsafe { ring.write(2, 102) };
                })
            };
            let b = {
                let ring = ring.clone();
                // Ticket 1's value is kept elsewhere: slot 1 is skipped,
                // then reused by ticket 3.
                thread::spawn(move || {
                    // SAFETY: ticket 3 has this one writer.
                    unsafe { ring.write(3, 103) }
                })
            };
            assert_eq!(read_next(&ring, 0), 100);
            // SAFETY: the only reader; ticket 1 is next and never written.
            unsafe { ring.skip(1) };
            assert_eq!(read_next(&ring, 2), 102);
            assert_eq!(read_next(&ring, 3), 103);
            a.join().unwrap();
            b.join().unwrap();
        });
    }
}
