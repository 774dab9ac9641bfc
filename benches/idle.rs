//! An idle pool: does it cost anything, and how fast does it wake?
//!
//! - **Wake-up latency.** The pool's threads are left to fall asleep (2 ms
//!   of quiet, well past every pool's spin), then one job is enqueued; the
//!   wait is from just before the enqueue to the job's first instruction.
//!   p50/p99 over the samples, one pool after another.
//! - **Idle CPU.** With 8 threads started and then idle, the process's
//!   user+system time over 3 s (from `/proc/self/stat`), for this crate.
//!
//! `cargo bench --bench idle`

mod pools;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pools::{Latch, Pool, Spec, Workload, quantile};

const SAMPLES: usize = 400;
const QUIET: Duration = Duration::from_millis(2);

/// One sample: enqueue into a sleeping pool, time to start.
struct WakeOnce;

impl Workload for WakeOnce {
    type Output = Vec<Duration>;

    fn run<P: Pool>(&mut self, pool: &P, _spec: &Spec) -> Vec<Duration> {
        let mut waits = Vec::with_capacity(SAMPLES);
        // Warm up: start the threads.
        let warm = Latch::leak(64);
        for _ in 0..64 {
            pool.spawn(0, move || warm.count_down());
        }
        warm.wait();
        for _ in 0..SAMPLES {
            // Letting the threads fall asleep is the workload.
            std::thread::sleep(QUIET);
            let started = Arc::new(AtomicU64::new(0));
            let done = Latch::leak(1);
            let seen = Arc::clone(&started);
            let at = Instant::now();
            pool.spawn(0, move || {
                seen.store(at.elapsed().as_nanos() as u64, Ordering::Relaxed);
                done.count_down();
            });
            done.wait();
            waits.push(Duration::from_nanos(started.load(Ordering::Relaxed)));
        }
        waits
    }
}

fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// 8 threads started, then 3 s of nothing.
struct IdleCpu;

impl Workload for IdleCpu {
    type Output = Option<u64>;

    fn run<P: Pool>(&mut self, pool: &P, _spec: &Spec) -> Option<u64> {
        let warm = Latch::leak(64);
        for _ in 0..64 {
            pool.spawn(0, move || warm.count_down());
        }
        warm.wait();
        std::thread::sleep(Duration::from_millis(100));
        let before = cpu_ticks()?;
        std::thread::sleep(Duration::from_secs(3));
        Some(cpu_ticks()? - before)
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let threads = pools::cores();
    let mut specs = vec![Spec::this_crate(&[10, 1], pools::PickerKind::Smooth)];
    specs.extend(Spec::fifo_peers());
    println!(
        "idle: wake-up latency, one job enqueued into a pool asleep for {QUIET:?}; \
         {threads} threads; {SAMPLES} samples\n"
    );
    println!("| pool | p50 us | p99 us |");
    println!("|---|---:|---:|");
    for spec in &specs {
        let mut waits = spec.with_pool(threads, &mut WakeOnce);
        waits.sort();
        println!(
            "| {} | {:.1} | {:.1} |",
            spec.name,
            us(quantile(&waits, 0.5)),
            us(quantile(&waits, 0.99))
        );
    }
    let ticks = specs[0].with_pool(8, &mut IdleCpu);
    println!(
        "\nidle CPU, {} with 8 threads idle for 3 s: {} clock ticks of user+system time \
         (1 tick = 10 ms)",
        specs[0].name,
        ticks.map_or("unknown".to_owned(), |t| t.to_string())
    );
}
