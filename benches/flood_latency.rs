//! Flood latency: a backlog of low-priority jobs (~50 us of CPU each) is
//! queued at once, and high-priority jobs keep arriving while it drains. How
//! long does a high job wait between its submission and its start?
//!
//! This crate's executor (10:1, each picker) against the FIFO pools, where a
//! high job can only queue behind the backlog, and the `Mutex<BinaryHeap>`
//! pool (strict priority). Prints p50/p99 of the high jobs' waits, the
//! median over several runs.
//!
//! `cargo bench --bench flood_latency`

mod pools;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pools::{Latch, PickerKind, Pool, Spec, Workload, median, quantile, spin_for};

const LOW_JOBS: usize = 4_000;
const LOW_WORK: Duration = Duration::from_micros(50);
const HIGH_JOBS: usize = 200;
const HIGH_WORK: Duration = Duration::from_micros(50);
/// High jobs arrive this far apart, all of them while the backlog drains.
const HIGH_EVERY: Duration = Duration::from_micros(250);
const RUNS: usize = 5;

const HIGH: usize = 0;
const LOW: usize = 1;

struct Waits {
    p50: Duration,
    p99: Duration,
    drained: Duration,
}

struct Flood;

impl Workload for Flood {
    type Output = Waits;

    fn run<P: Pool>(&mut self, pool: &P, _spec: &Spec) -> Waits {
        let done = Latch::leak(LOW_JOBS + HIGH_JOBS);
        let waits: Arc<Vec<AtomicU64>> =
            Arc::new((0..HIGH_JOBS).map(|_| AtomicU64::new(0)).collect());
        let start = Instant::now();
        for _ in 0..LOW_JOBS {
            pool.spawn(LOW, move || {
                spin_for(LOW_WORK);
                done.count_down();
            });
        }
        for i in 0..HIGH_JOBS {
            // Pacing the arrivals is the workload, not synchronisation.
            let due = start + HIGH_EVERY * i as u32;
            if let Some(ahead) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(ahead);
            }
            let waits = Arc::clone(&waits);
            let submitted = Instant::now();
            pool.spawn(HIGH, move || {
                let wait = submitted.elapsed();
                waits[i].store(wait.as_nanos() as u64, Ordering::Relaxed);
                spin_for(HIGH_WORK);
                done.count_down();
            });
        }
        done.wait();
        let drained = start.elapsed();
        let mut sorted: Vec<Duration> = waits
            .iter()
            .map(|w| Duration::from_nanos(w.load(Ordering::Relaxed)))
            .collect();
        sorted.sort();
        Waits {
            p50: quantile(&sorted, 0.50),
            p99: quantile(&sorted, 0.99),
            drained,
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let threads = pools::cores();
    let mut specs: Vec<Spec> = PickerKind::ALL
        .iter()
        .map(|&picker| Spec::this_crate(&[10, 1], picker))
        .collect();
    specs.push(Spec::heap(&[10, 1]));
    specs.extend(Spec::fifo_peers());

    println!(
        "flood_latency: {LOW_JOBS} low jobs of {LOW_WORK:?} queued at once, {HIGH_JOBS} high jobs \
         arriving every {HIGH_EVERY:?}; {threads} threads; median of {RUNS} runs"
    );
    println!(
        "{:<28} {:>12} {:>12} {:>12}",
        "pool", "high p50 ms", "high p99 ms", "drained ms"
    );
    for spec in &specs {
        let mut p50 = Vec::with_capacity(RUNS);
        let mut p99 = Vec::with_capacity(RUNS);
        let mut drained = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let waits = spec.with_pool(threads, &mut Flood);
            p50.push(waits.p50);
            p99.push(waits.p99);
            drained.push(waits.drained);
        }
        println!(
            "{:<28} {:>12.3} {:>12.3} {:>12.1}",
            spec.name,
            ms(median(&mut p50)),
            ms(median(&mut p99)),
            ms(median(&mut drained))
        );
    }
}
