//! Throughput: how fast each pool runs a flood of jobs, from one producer and
//! from two, with jobs that do nothing (an atomic decrement) and jobs of about
//! one microsecond of CPU work. A measured iteration is: submit N jobs, wait
//! on a latch until all N have run.
//!
//! `cargo bench --bench throughput`

mod pools;

use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group,
    criterion_main,
};

use pools::{Latch, PickerKind, Pool, Spec, Workload, spin_for};

/// Trivial jobs per measured iteration.
const TRIVIAL_JOBS: usize = 50_000;
/// Jobs of about 1 us per measured iteration.
const WORK_JOBS: usize = 20_000;
const WORK: Duration = Duration::from_micros(1);

/// Every pool in the comparison, with the lane mix its producer sends.
fn specs() -> Vec<Spec> {
    let mut specs = vec![
        Spec::this_crate(&[1], PickerKind::Smooth),
        Spec::this_crate(&[10, 1], PickerKind::Smooth),
        Spec::this_crate(&[10, 5, 1], PickerKind::Smooth),
    ];
    specs.extend(Spec::fifo_peers());
    specs.push(Spec::heap(&[10, 1]));
    specs
}

/// The thread counts every pool runs with: the machine's cores, and 4 to
/// show oversubscription.
fn thread_counts() -> Vec<usize> {
    let cores = pools::cores();
    if cores == 4 { vec![4] } else { vec![cores, 4] }
}

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
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    latch.reset(jobs);
                    let start = Instant::now();
                    if producers == 1 {
                        produce(pool, spec, jobs, work, latch);
                    } else {
                        std::thread::scope(|s| {
                            for p in 0..producers {
                                let share = jobs / producers + usize::from(p < jobs % producers);
                                s.spawn(move || produce(pool, spec, share, work, latch));
                            }
                        });
                    }
                    latch.wait();
                    total += start.elapsed();
                }
                total
            });
        });
    }
}

#[inline]
fn produce<P: Pool>(
    pool: &P,
    spec: &Spec,
    jobs: usize,
    work: Option<Duration>,
    latch: &'static Latch,
) {
    let mut lanes = spec.lanes();
    for _ in 0..jobs {
        let lane = lanes.next_lane();
        match work {
            None => pool.spawn(lane, move || latch.count_down()),
            Some(d) => pool.spawn(lane, move || {
                spin_for(d);
                latch.count_down();
            }),
        }
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
        for spec in specs() {
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

criterion_group!(benches, trivial, work_1us);
criterion_main!(benches);
