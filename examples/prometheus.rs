//! The executor's metrics as Prometheus text: installs the recorder of
//! `metrics-exporter-prometheus` (built without its HTTP listener: a
//! service would serve `handle.render()` on its own `/metrics` route), runs
//! a small flood through two lanes, and prints what a scrape would read.
//!
//! ```text
//! cargo run --example prometheus --features metrics
//! ```

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use priority_executor::{Capacity, Executor, Priority};
use std::time::{Duration, Instant};

const HIGH: Priority = Priority(10);
const LOW: Priority = Priority(1);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // First the recorder: handles are registered when an executor is
    // built, and those registered with no recorder installed stay no-ops.
    let handle = PrometheusBuilder::new()
        // Histograms as Prometheus histograms (the default is a summary).
        .set_buckets_for_metric(
            Matcher::Suffix("_seconds".to_owned()),
            &[1e-5, 1e-4, 1e-3, 0.01, 0.1, 1.0],
        )?
        .install_recorder()?;

    let exec = Executor::builder()
        .name("visa")
        .core_threads(2)
        .max_threads(2)
        .lane(HIGH, Capacity::Bounded(1000))
        .lane(LOW, Capacity::Bounded(1000))
        .build()?;

    // A flood of standard jobs, a few priority ones, and one that panics:
    // the pool catches and counts it; print one line for it, no backtrace.
    std::panic::set_hook(Box::new(|info| eprintln!("a job {info}")));
    let work = |micros| move || spin(Duration::from_micros(micros));
    let mut handles = Vec::new();
    for i in 0..2000 {
        handles.push(exec.enqueue(LOW, work(50))?);
        if i % 20 == 0 {
            handles.push(exec.enqueue(HIGH, work(50))?);
        }
    }
    let panicked = exec.enqueue(LOW, || panic!("a bad application"))?;
    for h in handles {
        h.join()?;
    }
    assert!(panicked.join().is_err());
    exec.shutdown(); // the thread gauges now read 0

    print!("{}", handle.render());
    Ok(())
}

/// Busy work for `d` (a sleep would measure the timer, not the pool).
fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}
