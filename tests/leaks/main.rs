//! Every job's allocation is freed exactly once, whichever side lets go
//! last: a counting global allocator checks that the live heap returns to
//! where it was after each scenario (handles dropped at once, joined,
//! polled then dropped while the job runs, cancelled, handed back and run
//! or dropped, refused, expired, retried, panicked, futures). A cell freed
//! twice aborts the process; one never freed leaves the count above.
//!
//! One test function runs the scenarios in turn, so no other test's
//! allocations mix into the count.

#[path = "../common/mod.rs"]
mod common;

use common::{hold_worker, quiet_panics, wait_until};
use priority_executor::{
    Capacity, Executor, JobOptions, LaneConfig, Priority, RejectionPolicy, RetryPolicy,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

/// Counts live blocks; the bytes are not needed to tell a leak.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged, and only
// counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(1, Ordering::SeqCst);
        // SAFETY: as the caller promised for this call.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
        // SAFETY: as the caller promised for this call.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(1, Ordering::SeqCst);
        // SAFETY: as the caller promised for this call.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as the caller promised for this call.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const HIGH: Priority = Priority(10);
const LOW: Priority = Priority(1);

fn exec() -> Executor {
    Executor::builder()
        .name("leaks")
        .core_threads(1)
        .max_threads(1)
        .lane(HIGH, Capacity::Unbounded)
        .lane_config(
            LaneConfig::new(LOW)
                .capacity(Capacity::Bounded(4))
                .when_full(RejectionPolicy::Reject),
        )
        .build()
        .expect("valid executor")
}

/// An output whose destructor panics.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("leaks: deliberate panic in a result's drop");
    }
}

/// Wakes nothing: the test polls again itself.
struct Nothing;

impl Wake for Nothing {
    fn wake(self: Arc<Self>) {}
}

/// Runs `scenario` with a fresh executor, shuts it down, and checks that
/// the live heap is back where it was.
fn check(name: &str, scenario: impl FnOnce(&Executor)) {
    priority_executor::release_spare_cells();
    let before = LIVE.load(Ordering::SeqCst);
    {
        let e = exec();
        scenario(&e);
        e.shutdown();
    }
    if name == "warm-up" {
        return;
    }
    // Freed cells are kept for reuse (by this thread, and by the workers,
    // which pass theirs to the shared cache as they exit): give them back
    // to the allocator, so a cell counts as live only if it was never
    // freed. A worker's last frees (its thread's own bookkeeping) may trail
    // its exit by a moment: wait for the count to come back, up to a bound
    // far beyond that; a cell never freed stays counted and fails here.
    let give_up = Instant::now() + Duration::from_secs(10);
    priority_executor::release_spare_cells();
    while LIVE.load(Ordering::SeqCst) != before && Instant::now() < give_up {
        std::thread::yield_now();
        priority_executor::release_spare_cells();
    }
    let after = LIVE.load(Ordering::SeqCst);
    assert_eq!(after, before, "{name}: {} blocks left", after - before);
}

#[test]
fn every_job_cell_is_freed_once() {
    quiet_panics("leaks: deliberate panic");
    // Warm up what the first executor allocates once for the process.
    for _ in 0..2 {
        check("warm-up", |e| {
            let gate = hold_worker(e, HIGH);
            let handle = e.enqueue(HIGH, || ()).unwrap();
            drop(gate);
            handle.join().unwrap();
            for i in 0..1000 {
                drop(e.enqueue(HIGH, move || vec![i; 4]).unwrap());
                e.enqueue(HIGH, move || vec![i; 4]).unwrap().join().unwrap();
            }
            e.wait_idle();
        });
    }

    check("dropped at once", |e| {
        for i in 0..1000 {
            drop(e.enqueue(HIGH, move || vec![i; 4]).unwrap());
        }
    });
    check("joined", |e| {
        for i in 0..1000 {
            assert_eq!(
                e.enqueue(HIGH, move || vec![i; 4])
                    .unwrap()
                    .join()
                    .unwrap()
                    .len(),
                4
            );
        }
    });
    check("result never read, handle dropped after", |e| {
        let handles: Vec<_> = (0..1000)
            .map(|i| e.enqueue(HIGH, move || vec![i; 4]).unwrap())
            .collect();
        e.wait_idle();
        drop(handles);
    });
    check(
        "result whose destructor panics, handle dropped after",
        |e| {
            for _ in 0..10 {
                let handle = e.enqueue(HIGH, || PanicsOnDrop).unwrap();
                let future = e.spawn_future(HIGH, async { PanicsOnDrop }).unwrap();
                wait_until("both results ready", || {
                    handle.is_finished() && future.is_finished()
                });
                // The panic is swallowed where the result is dropped, and the
                // cell is freed all the same.
                let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                    drop(handle);
                    drop(future);
                }));
                assert!(
                    dropped.is_ok(),
                    "dropping a handle re-raised the output's panic"
                );
            }
        },
    );
    check("polled, then dropped while the job runs", |e| {
        let waker = Waker::from(Arc::new(Nothing));
        let mut cx = Context::from_waker(&waker);
        for i in 0..1000 {
            let mut handle = e.enqueue(HIGH, move || vec![i; 4]).unwrap();
            if let Poll::Ready(v) = Pin::new(&mut handle).poll(&mut cx) {
                assert_eq!(v.unwrap().len(), 4);
            }
            drop(handle);
        }
    });
    check("cancelled", |e| {
        let gate = hold_worker(e, HIGH);
        let handles: Vec<_> = (0..100)
            .map(|i| e.enqueue(HIGH, move || vec![i; 4]).unwrap())
            .collect();
        for (i, handle) in handles.iter().enumerate() {
            if i % 2 == 0 {
                assert!(handle.cancel());
            }
        }
        // Half dropped before the worker meets them, half after.
        drop(gate);
        let (early, late): (Vec<_>, Vec<_>) = handles
            .into_iter()
            .enumerate()
            .partition(|(i, _)| i % 4 < 2);
        drop(early);
        e.wait_idle();
        drop(late);
    });
    check("handed back, run or dropped", |e| {
        let gate = hold_worker(e, HIGH);
        let handles: Vec<_> = (0..100)
            .map(|i| e.enqueue(HIGH, move || vec![i; 4]).unwrap())
            .collect();
        let pending = e.shutdown_now();
        drop(gate);
        for (i, job) in pending.into_iter().enumerate() {
            if i % 2 == 0 {
                job.run();
            }
        }
        drop(handles);
    });
    check("refused", |e| {
        let gate = hold_worker(e, HIGH);
        let kept: Vec<_> = (0..4)
            .map(|i| e.enqueue(LOW, move || vec![i; 4]).unwrap())
            .collect();
        let refused = e.enqueue(LOW, || vec![0; 4]).unwrap_err();
        assert_eq!(refused.into_inner()().len(), 4);
        drop(gate);
        drop(kept);
    });
    check("expired", |e| {
        let gate = hold_worker(e, HIGH);
        let handles: Vec<_> = (0..10)
            .map(|i| {
                e.enqueue_with(
                    HIGH,
                    move || vec![i; 4],
                    JobOptions::new().deadline(Instant::now()),
                )
                .unwrap()
            })
            .collect();
        drop(gate);
        drop(handles);
    });
    check("retried and dead-lettered", |e| {
        let handles: Vec<_> = (0..10)
            .map(|_| {
                e.enqueue_retrying(
                    HIGH,
                    |_| Err::<(), _>("down"),
                    RetryPolicy::new(2).backoff(Duration::ZERO, 1.0),
                )
                .unwrap()
            })
            .collect();
        for handle in handles {
            assert!(handle.join().is_err());
        }
    });
    check("panicked", |e| {
        for _ in 0..10 {
            let handle = e
                .enqueue(HIGH, || panic!("leaks: deliberate panic"))
                .unwrap();
            assert!(handle.join().is_err());
        }
    });
    check("futures", |e| {
        for i in 0..100 {
            let handle = e.spawn_future(HIGH, async move { vec![i; 4] }).unwrap();
            if i % 2 == 0 {
                assert_eq!(handle.join().unwrap().len(), 4);
            }
        }
    });
}
