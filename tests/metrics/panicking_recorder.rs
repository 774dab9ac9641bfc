//! A recorder is the application's code: one that panics on every call
//! loses its records, never a job, a handle or a worker.

use crate::common::within;
use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};
use priority_executor::{Capacity, Executor, Priority};
use std::sync::Arc;
use std::time::Duration;

/// Registers handles that panic whenever they record.
struct Panicking;

struct Panics;

impl CounterFn for Panics {
    fn increment(&self, _: u64) {
        panic!("metrics: deliberate panic in a recorder");
    }
    fn absolute(&self, _: u64) {
        panic!("metrics: deliberate panic in a recorder");
    }
}

impl GaugeFn for Panics {
    fn increment(&self, _: f64) {
        panic!("metrics: deliberate panic in a recorder");
    }
    fn decrement(&self, _: f64) {
        panic!("metrics: deliberate panic in a recorder");
    }
    fn set(&self, _: f64) {
        panic!("metrics: deliberate panic in a recorder");
    }
}

impl HistogramFn for Panics {
    fn record(&self, _: f64) {
        panic!("metrics: deliberate panic in a recorder");
    }
}

impl Recorder for Panicking {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(Arc::new(Panics))
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(Arc::new(Panics))
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(Arc::new(Panics))
    }
}

#[test]
fn a_panicking_recorder_strands_no_job() {
    crate::common::quiet_panics("metrics: deliberate panic");
    // The executor's handles come from the recorder current at build.
    let exec = metrics::with_local_recorder(&Panicking, || {
        Executor::builder()
            .name("panicking-recorder")
            .core_threads(2)
            .max_threads(2)
            .lane(Priority(10), Capacity::Unbounded)
            .build()
            .expect("valid executor")
    });
    let results = within(
        "jobs under a panicking recorder",
        Duration::from_secs(30),
        move || {
            let handles: Vec<_> = (0..100u32)
                .map(|i| exec.enqueue(Priority(10), move || i).expect("accepted"))
                .collect();
            let future = exec
                .spawn_future(Priority(10), async { 7u32 })
                .expect("accepted");
            let mut results: Vec<u32> = handles
                .into_iter()
                .map(|h| h.join().expect("ran"))
                .collect();
            results.push(future.join().expect("polled"));
            results
        },
    );
    let mut expected: Vec<u32> = (0..100).collect();
    expected.push(7);
    assert_eq!(results, expected);
}
