//! The throughput workloads again, interleaved: every round runs each pool
//! once, in a rotating order, so a burst of load from elsewhere on the
//! machine hits every pool alike rather than whichever criterion happened
//! to be measuring. Prints the median jobs/s of each pool and, against each
//! peer, the median of the *paired* ratios (each round's pool against the
//! peer of the same round) with their 10th-90th percentile spread, as
//! markdown tables (the ones in benches/README.md).
//!
//! `cargo bench --bench interleaved` (`-- ROUNDS` to change the round count,
//! `-- trivial` to run only the groups whose name contains that word;
//! `--features metrics` to measure the crate with that feature, and
//! `PE_BENCH_RECORDER=prometheus` with it to record into a Prometheus
//! recorder)

mod pools;

use std::time::Duration;

use pools::{
    Latch, Pool, Spec, Workload, flood_once, median, paired, thread_counts, throughput_specs,
};

const ROUNDS: usize = 41;

struct Group {
    name: &'static str,
    producers: usize,
    jobs: usize,
    work: Option<Duration>,
}

const GROUPS: [Group; 3] = [
    Group {
        name: "trivial_1producer",
        producers: 1,
        jobs: 50_000,
        work: None,
    },
    Group {
        name: "trivial_2producers",
        producers: 2,
        jobs: 50_000,
        work: None,
    },
    Group {
        name: "work1us_1producer",
        producers: 1,
        jobs: 20_000,
        work: Some(Duration::from_micros(1)),
    },
];

/// One measured flood on a fresh pool, after one unmeasured warm-up flood.
struct Once<'a> {
    group: &'a Group,
}

impl Workload for Once<'_> {
    /// Jobs per second.
    type Output = f64;

    fn run<P: Pool>(&mut self, pool: &P, spec: &Spec) -> f64 {
        let g = self.group;
        let latch = Latch::leak(0);
        flood_once(pool, spec, g.producers, g.jobs, g.work, latch);
        let took = flood_once(pool, spec, g.producers, g.jobs, g.work, latch);
        g.jobs as f64 / took.as_secs_f64()
    }
}

const PEERS: [&str; 7] = [
    "crossbeam_pool",
    "threadpool",
    "rusty_pool",
    "rayon",
    "rayon_fifo",
    "tokio_blocking",
    "mutex_binaryheap",
];

fn main() {
    // With the crate's `metrics` feature, PE_BENCH_RECORDER=prometheus
    // installs the Prometheus exporter's recorder first, so the executors
    // record into a real recorder rather than into no-op handles.
    #[cfg(feature = "metrics")]
    if std::env::var("PE_BENCH_RECORDER").is_ok_and(|r| r == "prometheus") {
        metrics_exporter_prometheus::PrometheusBuilder::new()
            .install_recorder()
            .expect("the only recorder of the bench");
    }
    // `cargo bench` passes `--bench`; a bare number sets the round count.
    let rounds = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(ROUNDS)
        .max(1);
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-') && a.parse::<usize>().is_err())
        .collect();
    let specs = throughput_specs();
    for group in GROUPS
        .iter()
        .filter(|g| only.is_empty() || only.iter().any(|o| g.name.contains(o.as_str())))
    {
        for threads in thread_counts() {
            let mut rates: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); specs.len()];
            for round in 0..rounds {
                for k in 0..specs.len() {
                    let i = (k + round) % specs.len();
                    rates[i].push(specs[i].with_pool(threads, &mut Once { group }));
                }
            }
            let rate: Vec<f64> = rates.iter().map(|r| median(&mut r.clone())).collect();
            let of = |name: &str| specs.iter().position(|s| s.name == name);
            println!(
                "\n{}, {threads} threads, {rounds} interleaved rounds: median M jobs/s, \
                 and the median paired ratio (p10-p90)\n",
                group.name
            );
            print!("| pool | M jobs/s |");
            for peer in PEERS {
                print!(" vs {peer} |");
            }
            println!("\n|---|---:|{}", "---:|".repeat(PEERS.len()));
            for (i, spec) in specs.iter().enumerate() {
                print!("| {} | {:.2} |", spec.name, rate[i] / 1e6);
                for peer in PEERS {
                    match of(peer) {
                        Some(p) => {
                            let (mid, lo, hi) = paired(&rates[i], &rates[p]);
                            print!(" {mid:.2} ({lo:.2}-{hi:.2}) |");
                        }
                        None => print!(" - |"),
                    }
                }
                println!();
            }
        }
    }
}
