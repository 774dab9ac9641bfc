//! Memory: bytes held per queued job with a million jobs queued, counted by
//! a global allocator that tracks live heap bytes.
//!
//! The workers are held on a gate so nothing runs while the jobs are
//! queued; the figure is the growth of live heap bytes divided by the job
//! count, so it includes the boxed closure (8 bytes of captures here), the
//! queue's own nodes and, for this crate, the result handle's shared state.
//!
//! `cargo bench --bench memory`

mod pools;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use pools::{Gate, Latch, PickerKind, Pool, Spec, Workload, sync::block_workers};

/// Live heap bytes, across all threads.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to `System` with the caller's arguments;
// the only addition is a counter update.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const QUEUED: usize = 1_000_000;

struct Queued {
    threads: usize,
}

impl Workload for Queued {
    /// Bytes per queued job.
    type Output = f64;

    fn run<P: Pool>(&mut self, pool: &P, spec: &Spec) -> f64 {
        let gate = Gate::leak();
        let done = Latch::leak(QUEUED);
        block_workers(pool, self.threads, gate);
        let mut lanes = spec.lanes();
        // Cells an earlier pool's jobs freed are kept for reuse: give them
        // back first, so every queued job's cell counts here.
        priority_executor::release_spare_cells();
        let before = LIVE.load(Ordering::SeqCst);
        for _ in 0..QUEUED {
            pool.spawn(lanes.next_lane(), move || done.count_down());
        }
        let after = LIVE.load(Ordering::SeqCst);
        gate.open();
        done.wait();
        (after - before) as f64 / QUEUED as f64
    }
}

fn main() {
    let threads = pools::cores();
    let mut specs = vec![
        Spec::this_crate(&[1], PickerKind::Smooth),
        Spec::this_crate(&[10, 1], PickerKind::Smooth),
    ];
    specs.extend(Spec::fifo_peers());
    specs.push(Spec::heap(&[10, 1]));

    println!("memory: live heap bytes per queued job at {QUEUED} queued jobs, {threads} threads");
    println!("{:<28} {:>14}", "pool", "bytes/job");
    for spec in &specs {
        let bytes = spec.with_pool(threads, &mut Queued { threads });
        println!("{:<28} {:>14.1}", spec.name, bytes);
    }
}
