//! The pools every workload runs on, behind one small trait.
//!
//! Each bench binary writes its workload once as a [`Workload`] and hands it
//! to [`Spec::with_pool`], which builds the concrete pool, runs the workload
//! on it and shuts the pool down, so every pool is measured by the same code
//! in the same run (the shape of flume's `benches/basic.rs`).

// This module is compiled into several bench binaries and each uses a
// different part of it.
#![allow(dead_code, unused_imports)]

mod channel_pool;
mod heap_pool;
mod peers;
pub mod sync;
mod this_crate;

use std::time::{Duration, Instant};

pub use channel_pool::ChannelPool;
pub use heap_pool::HeapPool;
pub use peers::{RayonFifoPool, RayonPool, RustyPool, ThreadpoolPool, TokioBlockingPool};
pub use sync::{Gate, Latch};
pub use this_crate::CratePool;

/// What a workload needs from a pool: run a job, in a lane where the pool
/// has lanes (lane 0 is the most important one).
pub trait Pool: Sync {
    fn spawn<F>(&self, lane: usize, job: F)
    where
        F: FnOnce() + Send + 'static;
}

/// A workload written once for every pool.
pub trait Workload {
    type Output;
    fn run<P: Pool>(&mut self, pool: &P, spec: &Spec) -> Self::Output;
}

/// The picker of this crate's executor, named here so the specs below do not
/// depend on the crate's own types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PickerKind {
    Smooth,
    Classic,
    Strict,
}

impl PickerKind {
    pub const ALL: [PickerKind; 3] = [PickerKind::Smooth, PickerKind::Classic, PickerKind::Strict];

    pub fn as_str(self) -> &'static str {
        match self {
            PickerKind::Smooth => "smooth",
            PickerKind::Classic => "classic",
            PickerKind::Strict => "strict",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Kind {
    /// This crate's executor, one lane per weight (priority = weight).
    ThisCrate {
        weights: Vec<u32>,
        picker: PickerKind,
    },
    Rayon,
    /// `rayon::spawn_fifo` on a pool of its own.
    RayonFifo,
    /// tokio's blocking pool (`spawn_blocking`), as many threads.
    TokioBlocking,
    Threadpool,
    RustyPool,
    Channel,
    /// `Mutex<BinaryHeap> + Condvar`, priorities from the mix's lanes.
    Heap {
        lanes: usize,
    },
}

/// A pool to build and the lane mix a producer feeds it.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    pub kind: Kind,
    /// Jobs per lane in one round of the producer's mix, lane 0 first.
    /// `[1]` sends everything to lane 0.
    pub mix: Vec<u32>,
}

impl Spec {
    pub fn this_crate(weights: &[u32], picker: PickerKind) -> Spec {
        let name = if weights.len() == 1 {
            "this_crate_1lane".to_string()
        } else {
            let ratio: Vec<String> = weights.iter().map(u32::to_string).collect();
            format!("this_crate_{}_{}", ratio.join("to"), picker.as_str())
        };
        Spec {
            name,
            kind: Kind::ThisCrate {
                weights: weights.to_vec(),
                picker,
            },
            mix: weights.to_vec(),
        }
    }

    pub fn fifo(kind: Kind) -> Spec {
        let name = match kind {
            Kind::Rayon => "rayon",
            Kind::RayonFifo => "rayon_fifo",
            Kind::TokioBlocking => "tokio_blocking",
            Kind::Threadpool => "threadpool",
            Kind::RustyPool => "rusty_pool",
            Kind::Channel => "crossbeam_pool",
            Kind::Heap { .. } | Kind::ThisCrate { .. } => unreachable!("not a FIFO peer"),
        };
        Spec {
            name: name.to_string(),
            kind,
            mix: vec![1],
        }
    }

    pub fn heap(mix: &[u32]) -> Spec {
        Spec {
            name: "mutex_binaryheap".to_string(),
            kind: Kind::Heap { lanes: mix.len() },
            mix: mix.to_vec(),
        }
    }

    /// The FIFO peers, in the order the tables list them.
    pub fn fifo_peers() -> Vec<Spec> {
        vec![
            Spec::fifo(Kind::Channel),
            Spec::fifo(Kind::Threadpool),
            Spec::fifo(Kind::RustyPool),
            Spec::fifo(Kind::Rayon),
            Spec::fifo(Kind::RayonFifo),
            Spec::fifo(Kind::TokioBlocking),
        ]
    }

    /// Builds the pool with `threads` workers, runs `work` on it, then shuts
    /// the pool down (waiting for its threads) before returning.
    pub fn with_pool<W: Workload>(&self, threads: usize, work: &mut W) -> W::Output {
        match &self.kind {
            Kind::ThisCrate { weights, picker } => {
                work.run(&CratePool::new(threads, weights, *picker), self)
            }
            Kind::Rayon => work.run(&RayonPool::new(threads), self),
            Kind::RayonFifo => work.run(&RayonFifoPool::new(threads), self),
            Kind::TokioBlocking => work.run(&TokioBlockingPool::new(threads), self),
            Kind::Threadpool => work.run(&ThreadpoolPool::new(threads), self),
            Kind::RustyPool => work.run(&RustyPool::new(threads), self),
            Kind::Channel => work.run(&ChannelPool::new(threads), self),
            Kind::Heap { lanes } => work.run(&HeapPool::new(threads, *lanes), self),
        }
    }

    /// The lane of the `i`-th job a producer sends, following the mix.
    pub fn lanes(&self) -> LaneMix {
        LaneMix::new(&self.mix)
    }
}

/// Cycles through a mix such as `[10, 1]`: ten jobs for lane 0, one for lane 1.
#[derive(Clone, Debug)]
pub struct LaneMix {
    pattern: Vec<usize>,
    next: usize,
}

impl LaneMix {
    pub fn new(mix: &[u32]) -> LaneMix {
        let pattern: Vec<usize> = mix
            .iter()
            .enumerate()
            .flat_map(|(lane, &n)| std::iter::repeat_n(lane, n as usize))
            .collect();
        assert!(!pattern.is_empty(), "empty lane mix");
        LaneMix { pattern, next: 0 }
    }

    #[inline]
    pub fn next_lane(&mut self) -> usize {
        let lane = self.pattern[self.next];
        self.next += 1;
        if self.next == self.pattern.len() {
            self.next = 0;
        }
        lane
    }
}

/// Busy-waits for `d`: a job that holds its worker for that long, as CPU
/// work rather than a sleep (a sleeping job would free the core).
#[inline]
pub fn spin_for(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// The machine's cores, the first thread count every pool is measured with.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// The value at quantile `q` (0..=1) of sorted `xs`, nearest rank.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The median of `xs` (sorted in place).
pub fn median<T: PartialOrd + Copy>(xs: &mut [T]) -> T {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    xs[xs.len() / 2]
}

/// The median and the 10th and 90th percentiles of `a[r] / b[r]` over the
/// rounds `r`.
pub fn paired(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let mut ratios: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

/// Every pool of the throughput comparison, with the lane mix its producer
/// sends.
pub fn throughput_specs() -> Vec<Spec> {
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
pub fn thread_counts() -> Vec<usize> {
    let cores = cores();
    if cores == 4 { vec![4] } else { vec![cores, 4] }
}

/// Sends `jobs` jobs to `pool` following the spec's lane mix; each counts
/// `latch` down, after spinning for `work` if given.
#[inline]
pub fn produce<P: Pool>(
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

/// Runs `jobs` jobs from `producers` threads and returns the time until the
/// last one has run.
pub fn flood_once<P: Pool>(
    pool: &P,
    spec: &Spec,
    producers: usize,
    jobs: usize,
    work: Option<Duration>,
    latch: &'static Latch,
) -> Duration {
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
    start.elapsed()
}
