//! Throughput: how fast each pool runs a flood of jobs, from one producer and
//! from two, with jobs that do nothing (an atomic decrement) and jobs of about
//! one microsecond of CPU work. A measured iteration is: submit N jobs, wait
//! on a latch until all N have run.
//!
//! `batch_vs_single` compares, on this crate's executor alone, a flood
//! queued with one `enqueue` per job against the same flood queued with
//! `enqueue_batch`, in batches of `BATCH` jobs.
//!
//! `waits_on_vs_off` compares the same executor with the lanes' wait
//! histograms on and off (the default).
//!
//! `cargo bench --bench throughput` (`-- batch_vs_single` or
//! `-- waits_on_vs_off` for one group)

mod pools;

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group,
    criterion_main,
};

use pools::{
    CratePool, Latch, PickerKind, Pool, Spec, Workload, flood_once, thread_counts, throughput_specs,
};
use priority_executor::Priority;

/// Trivial jobs per measured iteration.
const TRIVIAL_JOBS: usize = 50_000;
/// Jobs of about 1 us per measured iteration.
const WORK_JOBS: usize = 20_000;
const WORK: Duration = Duration::from_micros(1);

struct Flood<'g, 'c> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    threads: usize,
    producers: usize,
    jobs: usize,
    work: Option<Duration>,
}

impl Workload for Flood<'_, '_> {
    type Output = ();

    fn run<P: Pool>(&mut self, pool: &P, spec: &Spec) {
        let latch = Latch::leak(0);
        let (producers, jobs, work) = (self.producers, self.jobs, self.work);
        let id = BenchmarkId::new(&spec.name, format!("{}threads", self.threads));
        self.group.bench_function(id, |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| flood_once(pool, spec, producers, jobs, work, latch))
                    .sum()
            });
        });
    }
}

fn group<'c>(c: &'c mut Criterion, name: &str, jobs: usize) -> BenchmarkGroup<'c, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .throughput(Throughput::Elements(jobs as u64))
        // One iteration is tens of milliseconds: a few per sample is plenty.
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1200));
    group
}

fn run_all(c: &mut Criterion, name: &str, producers: usize, jobs: usize, work: Option<Duration>) {
    let mut group = group(c, name, jobs);
    for threads in thread_counts() {
        for spec in throughput_specs() {
            let mut flood = Flood {
                group: &mut group,
                threads,
                producers,
                jobs,
                work,
            };
            spec.with_pool(threads, &mut flood);
        }
    }
    group.finish();
}

fn trivial(c: &mut Criterion) {
    run_all(c, "trivial_1producer", 1, TRIVIAL_JOBS, None);
    run_all(c, "trivial_2producers", 2, TRIVIAL_JOBS, None);
}

fn work_1us(c: &mut Criterion) {
    run_all(c, "work1us_1producer", 1, WORK_JOBS, Some(WORK));
}

/// Jobs per `enqueue_batch` call in `batch_vs_single`.
const BATCH: usize = 1000;

/// One flood of `TRIVIAL_JOBS` trivial jobs on a one-lane executor, queued
/// one `enqueue` at a time or `BATCH` at a time; the time until the last
/// has run.
fn flood_batched(pool: &CratePool, batch: usize, latch: &'static Latch) -> Duration {
    let exec = pool.executor();
    latch.reset(TRIVIAL_JOBS);
    let start = std::time::Instant::now();
    if batch == 1 {
        for _ in 0..TRIVIAL_JOBS {
            pool.spawn(0, move || latch.count_down());
        }
    } else {
        for _ in 0..TRIVIAL_JOBS / batch {
            let jobs = (0..batch).map(|_| move || latch.count_down());
            let handles = exec
                .enqueue_batch(Priority(1), jobs)
                .expect("unbounded lane accepts the batch");
            // Detached, as the single enqueues' handles are.
            drop(handles);
        }
    }
    latch.wait();
    start.elapsed()
}

fn batch_vs_single(c: &mut Criterion) {
    let mut group = group(c, "batch_vs_single", TRIVIAL_JOBS);
    for threads in thread_counts() {
        let pool = CratePool::new(threads, &[1], PickerKind::Smooth);
        let latch = Latch::leak(0);
        for (name, batch) in [("enqueue", 1), ("enqueue_batch", BATCH)] {
            let id = BenchmarkId::new(name, format!("{threads}threads"));
            group.bench_function(id, |b| {
                b.iter_custom(|iters| (0..iters).map(|_| flood_batched(&pool, batch, latch)).sum());
            });
        }
    }
    group.finish();
}

/// The cost of the lanes' wait histograms (`record_waits`, off by
/// default): the same flood of trivial jobs, one `enqueue` each, on a
/// one-lane executor with them on and off.
fn waits_on_vs_off(c: &mut Criterion) {
    let mut group = group(c, "waits_on_vs_off", TRIVIAL_JOBS);
    for threads in thread_counts() {
        let latch = Latch::leak(0);
        for (name, record) in [("waits_on", true), ("waits_off", false)] {
            let pool = CratePool::recording_waits(threads, &[1], PickerKind::Smooth, record);
            let id = BenchmarkId::new(name, format!("{threads}threads"));
            group.bench_function(id, |b| {
                b.iter_custom(|iters| (0..iters).map(|_| flood_batched(&pool, 1, latch)).sum());
            });
        }
    }
    group.finish();
}

criterion_group!(benches, trivial, work_1us, batch_vs_single, waits_on_vs_off);
criterion_main!(benches);
