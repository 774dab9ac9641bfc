//! Fairness: with every lane saturated, does the executor dispatch in the
//! configured ratio, and how far behind its ideal share does a lane fall?
//!
//! A measurement, not a timing, so it prints figures instead of going
//! through criterion. For each picker and weight set the workers are held on
//! a gate while every lane is filled, then released; each job records its
//! lane in a shared log. With one worker the log order is exactly the
//! picker's dispatch order; with more, two jobs dispatched back to back may
//! log in either order, which can show up as a lag of a job or so, and a
//! worker preempted between its claim and its log entry (the machine is
//! shared) logs its job late.
//!
//! `cargo bench --bench fairness`

mod pools;

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use priority_executor::Picker;

use pools::{CratePool, Gate, Latch, PickerKind, Pool, sync::block_workers};

/// Jobs queued per lane: enough for this many full cycles of the largest weight.
const CYCLES: u32 = 1_000;

/// The order in which jobs started, as lane indices.
struct DispatchLog {
    lanes: Vec<AtomicU8>,
    next: AtomicUsize,
}

impl DispatchLog {
    fn leak(capacity: usize) -> &'static DispatchLog {
        Box::leak(Box::new(DispatchLog {
            lanes: (0..capacity).map(|_| AtomicU8::new(u8::MAX)).collect(),
            next: AtomicUsize::new(0),
        }))
    }

    #[inline]
    fn record(&self, lane: u8) {
        let at = self.next.fetch_add(1, Ordering::Relaxed);
        self.lanes[at].store(lane, Ordering::Relaxed);
    }

    fn sequence(&self) -> Vec<usize> {
        let len = self.next.load(Ordering::Acquire);
        self.lanes[..len]
            .iter()
            .map(|l| usize::from(l.load(Ordering::Relaxed)))
            .collect()
    }
}

/// What one saturated run showed.
struct Report {
    /// Dispatches per lane while every lane still had queued jobs.
    counts: Vec<u64>,
    /// Most jobs any lane fell behind its ideal share, over every prefix.
    max_lag: f64,
    /// Largest |dispatches - weight| of any lane over any window of one cycle
    /// (sum of weights) of consecutive dispatches.
    cycle_deviation: u64,
    /// The first cycle, one letter per dispatch (H = lane 0, then M, L).
    first_cycle: String,
}

/// `in_flight`: how many dispatched jobs may not have logged yet (workers
/// minus one), so the saturated prefix ends that many jobs early: a worker
/// preempted between claiming a lane's last job and logging it must not make
/// the lane look busy long after it was empty.
fn analyse(seq: &[usize], weights: &[u32], queued_per_lane: u64, in_flight: u64) -> Report {
    let lanes = weights.len();
    let total_weight: u32 = weights.iter().sum();
    // The saturated prefix ends with the dispatch that empties a lane.
    let last = queued_per_lane.saturating_sub(in_flight).max(1);
    let mut counts = vec![0u64; lanes];
    let mut end = seq.len();
    for (i, &lane) in seq.iter().enumerate() {
        counts[lane] += 1;
        if counts[lane] == last {
            end = i + 1;
            break;
        }
    }
    let prefix = &seq[..end];

    let mut running = vec![0u64; lanes];
    let mut max_lag = 0.0f64;
    for (n, &lane) in prefix.iter().enumerate() {
        running[lane] += 1;
        let done = (n + 1) as f64;
        for (l, &w) in weights.iter().enumerate() {
            let ideal = done * f64::from(w) / f64::from(total_weight);
            max_lag = max_lag.max(ideal - running[l] as f64);
        }
    }

    let window = total_weight as usize;
    let mut cycle_deviation = 0u64;
    if prefix.len() >= window {
        let mut in_window = vec![0u64; lanes];
        for &lane in &prefix[..window] {
            in_window[lane] += 1;
        }
        for start in 0..=prefix.len() - window {
            if start > 0 {
                in_window[prefix[start - 1]] -= 1;
                in_window[prefix[start + window - 1]] += 1;
            }
            for (l, &w) in weights.iter().enumerate() {
                cycle_deviation = cycle_deviation.max(in_window[l].abs_diff(u64::from(w)));
            }
        }
    }

    let first_cycle = prefix
        .iter()
        .take(window)
        .map(|&l| lane_letter(l, lanes))
        .collect();
    Report {
        counts,
        max_lag,
        cycle_deviation,
        first_cycle,
    }
}

/// H for the top lane, L for the bottom one, M between.
fn lane_letter(lane: usize, lanes: usize) -> char {
    match lane {
        0 => 'H',
        l if l + 1 == lanes => 'L',
        _ => 'M',
    }
}

/// The lag the picker's own cycle ([`Picker::cycle`]) has when followed from
/// its start: what the measured lag is if the log starts at a cycle
/// boundary. Strict follows no cycle.
fn design_lag(picker: PickerKind, weights: &[u32]) -> Option<f64> {
    let picker = match picker {
        PickerKind::Smooth => Picker::Smooth,
        PickerKind::Classic => Picker::Classic,
        PickerKind::Strict => return None,
    };
    let cycle = picker.cycle(weights);
    Some(analyse(&cycle, weights, u64::MAX, 0).max_lag)
}

fn run(threads: usize, weights: &[u32], picker: PickerKind) -> Report {
    let per_lane = u64::from(CYCLES) * u64::from(*weights.iter().max().unwrap_or(&1));
    let total = per_lane as usize * weights.len();
    let log = DispatchLog::leak(total);
    let done = Latch::leak(total);
    let gate = Gate::leak();
    {
        let pool = CratePool::new(threads, weights, picker);
        block_workers(&pool, threads, gate);
        for lane in 0..weights.len() {
            for _ in 0..per_lane {
                pool.spawn(lane, move || {
                    log.record(lane as u8);
                    done.count_down();
                });
            }
        }
        gate.open();
        done.wait();
    }
    analyse(&log.sequence(), weights, per_lane, threads as u64 - 1)
}

fn ratio(counts: &[u64]) -> String {
    let last = counts.last().copied().unwrap_or(0);
    if last == 0 {
        let parts: Vec<String> = counts.iter().map(u64::to_string).collect();
        return format!("{} (counts)", parts.join(":"));
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|&c| format!("{:.2}", c as f64 / last as f64))
        .collect();
    parts.join(":")
}

fn main() {
    let mut thread_counts = vec![1, pools::cores()];
    thread_counts.dedup();
    println!("fairness: every lane saturated, {CYCLES} cycles queued per lane");
    println!(
        "{:<8} {:<8} {:>7} {:<20} {:>8} {:>9} {:>10}  first cycle",
        "weights", "picker", "threads", "dispatch ratio", "max lag", "cycle lag", "cycle dev"
    );
    for weights in [&[10u32, 1][..], &[10, 5, 1][..]] {
        let name: Vec<String> = weights.iter().map(u32::to_string).collect();
        for picker in PickerKind::ALL {
            for &threads in &thread_counts {
                let report = run(threads, weights, picker);
                let design = design_lag(picker, weights)
                    .map_or_else(|| "-".to_string(), |lag| format!("{lag:.2}"));
                println!(
                    "{:<8} {:<8} {:>7} {:<20} {:>8.2} {:>9} {:>10}  {}",
                    name.join(":"),
                    picker.as_str(),
                    threads,
                    ratio(&report.counts),
                    report.max_lag,
                    design,
                    report.cycle_deviation,
                    report.first_cycle
                );
            }
        }
    }
}
