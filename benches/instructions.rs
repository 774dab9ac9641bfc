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

fn main() {
    // `cargo bench` passes `--bench`: the other arguments are the pool and N.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let (Some(name), Some(jobs)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
        println!(
            "usage: instructions POOL N (under valgrind --tool=callgrind; see the file's docs)"
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
