//! Instructions per job, in steady state: a warm-up burst of trivial jobs
//! (so recycled cells, allocator caches and queue blocks are there), then
//! a burst of `N`, on one worker, each pool given by name. Run under
//! `valgrind --tool=callgrind` with two `N`: the difference of the counts
//! over the difference of the `N` is the cost of one job, producer and
//! worker together.
//!
//! `cargo bench --bench instructions --no-run`, then
//! `valgrind --tool=callgrind target/release/deps/instructions-* POOL N`,
//! POOL one of `this_crate_10to1_smooth` and `crossbeam_pool`.
//!
//! `gated N` is this crate alone with no thread racing another: its one
//! worker is held on a gate while the `N` jobs (lanes 10:1, a handle
//! each, dropped at once) are queued, then released, and the producer
//! waits for the last. Each side then runs its half of every job in one
//! stretch, so the count does not hang on how callgrind's schedule
//! interleaves them (the bursts above move by 5-7% from run to run; this
//! by under 0.1%): what `scripts/instructions` gates in CI.

mod pools;

use pools::{Latch, PickerKind, Pool, Spec, Workload};

/// Jobs of the warm-up burst.
const WARM_UP: usize = 40_000;

struct Bursts {
    jobs: usize,
}

impl Workload for Bursts {
    type Output = ();

    fn run<P: Pool>(&mut self, pool: &P, spec: &Spec) {
        let mut lanes = spec.lanes();
        for burst in [WARM_UP, self.jobs] {
            let done = Latch::leak(burst);
            for _ in 0..burst {
                pool.spawn(lanes.next_lane(), move || done.count_down());
            }
            done.wait();
        }
    }
}

/// `n` jobs queued while the one worker is held, then run (module docs).
fn gated(n: usize) {
    use priority_executor::{Capacity, Executor, Priority};
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .expect("valid settings");
    let run = |n: usize| {
        let (held_tx, held) = std::sync::mpsc::channel::<()>();
        let (gate_tx, gate) = std::sync::mpsc::channel::<()>();
        drop(exec.enqueue(Priority(10), move || {
            held_tx.send(()).expect("the producer waits");
            gate.recv().expect("the producer opens the gate");
        }));
        held.recv().expect("the worker is held");
        let done = Latch::leak(n);
        for i in 0..n {
            // 10:1, as the picker serves them.
            let lane = if i % 11 == 10 {
                Priority(1)
            } else {
                Priority(10)
            };
            drop(exec.enqueue(lane, move || done.count_down()));
        }
        gate_tx.send(()).expect("the gate job waits");
        done.wait();
    };
    // Warm: cells, queue blocks and the allocator's caches are there.
    run(WARM_UP);
    run(n);
    exec.shutdown();
}

fn main() {
    // `cargo bench` passes `--bench`: the other arguments are the pool and N.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if let (Some("gated"), Some(jobs)) = (
        args.first().map(String::as_str),
        args.get(1).and_then(|n| n.parse().ok()),
    ) {
        gated(jobs);
        return;
    }
    let (Some(name), Some(jobs)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
        println!(
            "usage: instructions POOL|gated N (under valgrind --tool=callgrind; see the file's docs)"
        );
        return;
    };
    let specs = [
        Spec::this_crate(&[10, 1], PickerKind::Smooth),
        Spec::fifo(pools::Kind::Channel),
    ];
    let Some(spec) = specs.iter().find(|s| &s.name == name) else {
        println!("no pool {name:?} (pools: this_crate_10to1_smooth, crossbeam_pool)");
        return;
    };
    spec.with_pool(1, &mut Bursts { jobs });
}
