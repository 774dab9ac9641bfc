//! Statistics of a run, per class: waits, when the class was done, its
//! share of the contended dispatches and its completion curve; and the
//! table they are printed as.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::timeline::{Class, Timeline, quantile};

/// The statistics of one class in one run.
pub struct LaneStats {
    pub jobs: usize,
    /// Share of the dispatches made while both classes had applications
    /// waiting.
    pub contended_share: f64,
    pub p50: Duration,
    pub p95: Duration,
    pub p99: Duration,
    /// When the class's last application finished, since the flood began.
    pub done_at: Duration,
    /// Cumulative completions: (seconds since the flood began, % of class).
    pub curve: Vec<(f64, f64)>,
}

pub fn stats(timeline: &Timeline, classes: &[Class]) -> [LaneStats; 2] {
    let load = |v: &Vec<AtomicU64>, i: usize| v[i].load(Ordering::Relaxed);
    let of = |class: Class| -> Vec<usize> {
        (0..classes.len())
            .filter(|&i| classes[i] == class)
            .collect()
    };

    // Dispatches in start order; a dispatch counts as contended when, at its
    // start, the other class also had an application submitted and not yet
    // started.
    let mut dispatches: Vec<usize> = (0..classes.len()).collect();
    dispatches.sort_by_key(|&i| load(&timeline.started, i));
    let sorted_times = |class: Class, v: &Vec<AtomicU64>| -> Vec<u64> {
        let mut t: Vec<u64> = of(class).into_iter().map(|i| load(v, i)).collect();
        t.sort_unstable();
        t
    };
    let submits = [
        sorted_times(Class::Priority, &timeline.submitted),
        sorted_times(Class::Standard, &timeline.submitted),
    ];
    let starts = [
        sorted_times(Class::Priority, &timeline.started),
        sorted_times(Class::Standard, &timeline.started),
    ];
    let waiting = |lane: usize, t: u64| {
        let submitted = submits[lane].partition_point(|&s| s <= t);
        let started = starts[lane].partition_point(|&s| s < t);
        submitted.saturating_sub(started)
    };
    let mut contended = [0usize; 2];
    for &i in &dispatches {
        let lane = classes[i] as usize;
        if waiting(1 - lane, load(&timeline.started, i)) > 0 {
            contended[lane] += 1;
        }
    }
    let contended_total = (contended[0] + contended[1]).max(1) as f64;

    [Class::Priority, Class::Standard].map(|class| {
        let ids = of(class);
        let mut waits: Vec<u64> = ids
            .iter()
            .map(|&i| load(&timeline.started, i).saturating_sub(load(&timeline.submitted, i)))
            .collect();
        waits.sort_unstable();
        let mut finishes: Vec<u64> = ids.iter().map(|&i| load(&timeline.finished, i)).collect();
        finishes.sort_unstable();
        // A few hundred points draw the same curve as thousands.
        let step = (finishes.len() / 400).max(1);
        let mut curve: Vec<(f64, f64)> = vec![(0.0, 0.0)];
        for (n, &t) in finishes.iter().enumerate() {
            if n % step == step - 1 || n + 1 == finishes.len() {
                curve.push((
                    t as f64 / 1e9,
                    100.0 * (n + 1) as f64 / finishes.len() as f64,
                ));
            }
        }
        LaneStats {
            jobs: ids.len(),
            contended_share: contended[class as usize] as f64 / contended_total,
            p50: quantile(&waits, 0.50),
            p95: quantile(&waits, 0.95),
            p99: quantile(&waits, 0.99),
            done_at: Duration::from_nanos(finishes.last().copied().unwrap_or(0)),
            curve,
        }
    })
}

pub fn fmt_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1e3)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

pub fn print_table(title: &str, lanes: &[(&str, String); 2], stats: &[LaneStats; 2]) {
    println!("{title}");
    println!(
        "  {:<10} {:>8} {:>6} {:>9} {:>10} {:>10} {:>10} {:>10}",
        "class", "priority", "jobs", "share*", "p50 wait", "p95 wait", "p99 wait", "done at"
    );
    for ((label, priority), s) in lanes.iter().zip(stats) {
        println!(
            "  {:<10} {:>8} {:>6} {:>8.1}% {:>10} {:>10} {:>10} {:>10}",
            label,
            priority,
            s.jobs,
            100.0 * s.contended_share,
            fmt_duration(s.p50),
            fmt_duration(s.p95),
            fmt_duration(s.p99),
            fmt_duration(s.done_at)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_count_only_dispatches_while_both_classes_wait() {
        // Four applications offered at t=0; the priority ones start first,
        // so the last standard start (t=4) has no priority one waiting.
        let classes = [
            Class::Priority,
            Class::Standard,
            Class::Priority,
            Class::Standard,
        ];
        let timeline = Timeline::new(4);
        for (i, start) in [1u64, 3, 2, 4].into_iter().enumerate() {
            timeline.started[i].store(start, Ordering::Relaxed);
            timeline.finished[i].store(start + 1, Ordering::Relaxed);
        }
        let [priority, standard] = stats(&timeline, &classes);
        // Dispatches at t=1, 2 (priority, standard waiting) and t=3
        // (standard, nothing of priority waiting any more).
        assert_eq!(priority.contended_share, 1.0);
        assert_eq!(standard.contended_share, 0.0);
        assert_eq!(priority.p99, Duration::from_nanos(2));
        assert_eq!(standard.done_at, Duration::from_nanos(5));
    }
}
