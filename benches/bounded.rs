//! A bounded lane under a producer faster than the workers: one producer
//! floods trivial jobs into a lane of 1024 slots (rejection policy
//! `Block`, the default) of a pool of 2 and of 4 workers, against a pool
//! of the same threads over `crossbeam_channel::bounded(1024)`. The
//! producer spends most of the run waiting for space, so this measures how
//! a full lane hands slots back to it. Interleaved rounds, medians, and
//! the median of the paired per-round ratios (p10-p90).
//!
//! `cargo bench --bench bounded` (`-- ROUNDS` to change the round count)

mod pools;

use crossbeam_channel::bounded;
use pools::{median, paired, thread_counts};
use priority_executor::{Capacity, Executor, Priority};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const JOBS: usize = 500_000;
const CAPACITY: usize = 1024;
const ROUNDS: usize = 21;
const LANE: Priority = Priority(1);

/// Waits until `done` reaches `n` (the bench thread, after its last send).
fn wait_done(done: &AtomicUsize, n: usize) {
    while done.load(Ordering::Acquire) < n {
        std::thread::yield_now();
    }
}

fn this_crate(threads: usize) -> Duration {
    let exec = Executor::builder()
        .name("bounded")
        .core_threads(threads)
        .max_threads(threads)
        .lane(LANE, Capacity::Bounded(CAPACITY))
        .build()
        .expect("a valid executor");
    exec.prestart_core_threads();
    let done = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    for _ in 0..JOBS {
        let done = done.clone();
        let job = move || {
            done.fetch_add(1, Ordering::Release);
        };
        drop(
            exec.enqueue(LANE, job)
                .expect("the lane blocks, never refuses"),
        );
    }
    wait_done(&done, JOBS);
    let took = start.elapsed();
    exec.shutdown();
    took
}

type Job = Box<dyn FnOnce() + Send>;

/// A pool's name and one measured flood on `threads` workers.
type Peer = (&'static str, fn(usize) -> Duration);

fn channel_pool(threads: usize) -> Duration {
    let (tx, rx) = bounded::<Job>(CAPACITY);
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let rx = rx.clone();
            std::thread::spawn(move || {
                for job in rx {
                    job();
                }
            })
        })
        .collect();
    let done = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    for _ in 0..JOBS {
        let done = done.clone();
        let job: Job = Box::new(move || {
            done.fetch_add(1, Ordering::Release);
        });
        tx.send(job).expect("the workers are alive");
    }
    wait_done(&done, JOBS);
    let took = start.elapsed();
    drop(tx);
    for w in workers {
        w.join().expect("a worker");
    }
    took
}

fn main() {
    let rounds = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(ROUNDS)
        .max(1);
    let pools: [Peer; 2] = [
        ("this_crate", this_crate),
        ("crossbeam_bounded", channel_pool),
    ];
    for threads in thread_counts() {
        let mut rates: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); pools.len()];
        for round in 0..rounds {
            for k in 0..pools.len() {
                let i = (k + round) % pools.len();
                rates[i].push(JOBS as f64 / (pools[i].1)(threads).as_secs_f64());
            }
        }
        println!(
            "\none producer, a lane of {CAPACITY}, {threads} workers, {rounds} interleaved \
             rounds: median M jobs/s, and the median paired ratio (p10-p90)\n"
        );
        println!("| pool | M jobs/s | vs crossbeam_bounded |\n|---|---:|---:|");
        for (i, (name, _)) in pools.iter().enumerate() {
            let (mid, lo, hi) = paired(&rates[i], &rates[1]);
            let rate = median(&mut rates[i].clone()) / 1e6;
            println!("| {name} | {rate:.2} | {mid:.2} ({lo:.2}-{hi:.2}) |");
        }
    }
}
