//! Growth under races: jobs that can only finish when `n` of them run at
//! once, queued on a pool that must grow to `n` threads, by enqueueing
//! alone or by a resize raising `max` while the first worker takes its
//! job. A worker that claims a job while producers (or the resize) still
//! count it idle must add the thread they did not (rule 3); a round that
//! misses it hangs, and the watchdog names the round's seed.

use crate::support::{Rng, seeded_rounds};
use priority_executor::{Capacity, Executor, Priority};
use std::sync::{Arc, Barrier};
use std::time::Duration;

const P: Priority = Priority(1);

fn round(seed: u64) {
    let mut rng = Rng::new(seed);
    let n = rng.range(2, 4);
    let resize = rng.chance(1, 2);
    let exec = Executor::builder()
        .name("grow")
        .core_threads(1)
        .max_threads(if resize { 1 } else { n })
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap();
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            exec.enqueue(P, move || {
                barrier.wait();
            })
            .unwrap()
        })
        .collect();
    if resize {
        exec.set_threads(1, n).unwrap();
    }
    for h in handles {
        h.join().unwrap();
    }
    assert!(exec.metrics().threads.peak >= n);
}

#[test]
fn jobs_that_need_n_threads_at_once_get_them() {
    seeded_rounds("growth", 2000, Duration::from_secs(60), |seed, _| {
        round(seed)
    });
}
