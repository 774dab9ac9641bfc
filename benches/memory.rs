//! Memory: bytes held per queued job with a million jobs queued, counted by
//! a global allocator that tracks live heap bytes.
//!
//! The workers are held on a gate so nothing runs while the jobs are
//! queued; the figure is the growth of live heap bytes divided by the job
//! count, so it includes the boxed closure (8 bytes of captures here), the
//! queue's own nodes and, for this crate, the result handle's shared state.
//!
//! Then, once the burst has run and the pool has stayed idle for 10 s,
//! what is still held: the live heap bytes above the count before the
//! burst (for this crate, the job cells kept for reuse: at most the shared
//! cache's limit plus a few per thread) and the process's resident set.
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

/// What a burst leaves held once it has run and the pool has been idle.
#[derive(Clone, Copy)]
struct AfterBurst {
    /// Live heap bytes per queued job while the million are queued.
    per_job: f64,
    /// Live heap bytes still held (above the count before the burst)
    /// after it ran and the pool stayed idle for `IDLE`: the memory kept
    /// for reuse.
    held: isize,
    /// The process's resident set then, in bytes.
    rss: usize,
}

/// How long the pool stays idle after the burst before the count.
const IDLE: std::time::Duration = std::time::Duration::from_secs(10);

/// The resident set of this process, from `/proc/self/statm` (0 where
/// there is none).
fn rss_bytes() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}

impl Workload for Queued {
    /// Bytes per queued job, and what the burst left held.
    type Output = AfterBurst;

    fn run<P: Pool>(&mut self, pool: &P, spec: &Spec) -> AfterBurst {
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
        // The pool stays idle, as a service does between bursts: this is a
        // scenario's length, not a synchronisation.
        std::thread::sleep(IDLE);
        AfterBurst {
            per_job: (after - before) as f64 / QUEUED as f64,
            held: LIVE.load(Ordering::SeqCst) - before,
            rss: rss_bytes(),
        }
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

    println!("memory: live heap bytes per queued job at {QUEUED} queued jobs, {threads} threads;");
    println!(
        "then, after the burst ran and {} s idle, live heap bytes still held and the RSS",
        IDLE.as_secs()
    );
    println!(
        "{:<28} {:>10} {:>14} {:>10}",
        "pool", "bytes/job", "held after", "RSS"
    );
    let mib = |bytes: f64| bytes / f64::from(1u32 << 20);
    for spec in &specs {
        let burst = spec.with_pool(threads, &mut Queued { threads });
        println!(
            "{:<28} {:>10.1} {:>10.2} MiB {:>6.1} MiB",
            spec.name,
            burst.per_job,
            mib(burst.held as f64),
            mib(burst.rss as f64)
        );
    }
}
