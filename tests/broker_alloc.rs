//! A broker's cycle makes room for the letters it takes, not for its
//! batch size: a global allocator that notes, per thread, the largest
//! block asked for and the bytes asked for in all checks what a cycle
//! (which `Broker::tick` runs on the calling thread) allocates.

#![cfg(feature = "actor")]

use priority_executor::actor::{Actor, ActorError, Broker, Outbox, Reason, Strategy};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Notes the calling thread's requests while it is watching.
struct Noting;

thread_local! {
    /// Is this thread noting its requests?
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    /// The largest block asked for while watching.
    static LARGEST: Cell<usize> = const { Cell::new(0) };
    /// The bytes asked for while watching.
    static ASKED: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // A thread being torn down has no locals left: nothing to note.
    let _ = WATCHING.try_with(|watching| {
        if watching.get() {
            LARGEST.with(|l| l.set(l.get().max(size)));
            ASKED.with(|a| a.set(a.get() + size));
        }
    });
}

// SAFETY: forwards every call to the system allocator unchanged, and only
// notes sizes in thread locals that need no allocation.
unsafe impl GlobalAlloc for Noting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as the caller promised for this call.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the caller promised for this call.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as the caller promised for this call.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as the caller promised for this call.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Noting = Noting;

/// Runs `f` on this thread, noting its requests: (largest block, bytes).
fn watched<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    LARGEST.with(|l| l.set(0));
    ASKED.with(|a| a.set(0));
    WATCHING.with(|w| w.set(true));
    let value = f();
    WATCHING.with(|w| w.set(false));
    (value, LARGEST.with(Cell::get), ASKED.with(Cell::get))
}

/// An ordinary letter of 1 KiB: room for 65,536 of them is 64 MiB.
type Kib = [u8; 1024];

/// Performs every letter.
struct Takes;

impl Actor for Takes {
    type In = Kib;
    type Out = ();
    fn perform(&mut self, _: Kib, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Ok(())
    }
}

#[test]
fn a_cycle_allocates_for_the_letters_it_takes_not_for_a_full_batch() {
    let broker = Broker::builder("alloc")
        .manual_cycles()
        .batch(65_536)
        .spawn()
        .unwrap();
    let id = broker.register(Takes, Strategy::always()).unwrap();
    // Lanes are made on first use: one letter makes the lane, outside
    // the watch.
    broker.addr().send([1; 1024]).unwrap();
    assert_eq!(broker.tick(), Ok(vec![(id, 1)]));
    // A letter or a few letters' room per cycle; a full batch's is 64 MiB.
    let most = 64 * 1024;
    for queued in [0, 1, 3] {
        for _ in 0..queued {
            broker.addr().send([2; 1024]).unwrap();
        }
        let expected = if queued == 0 {
            vec![]
        } else {
            vec![(id, queued)]
        };
        let (handed, largest, asked) = watched(|| broker.tick());
        assert_eq!(handed, Ok(expected));
        assert!(
            largest <= most && asked <= most,
            "a cycle taking {queued} letter(s) of 1 KiB asked for a block of {largest} \
             bytes, {asked} in all"
        );
    }
    let exit = broker.drain();
    assert_eq!(exit.reason, Reason::Drained);
    assert_eq!(exit.metrics.performed, 5);
}
