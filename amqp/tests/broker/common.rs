//! Finding the broker, unique names, waiting.

use priority_executor::{Capacity, Executor, Priority};
use priority_executor_amqp::Publisher;
use std::io::Write;
use std::time::{Duration, Instant};

/// The broker's URI: `AMQP_ADDR`, or the local node of `scripts/rabbitmq`.
pub fn uri() -> String {
    std::env::var("AMQP_ADDR")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned())
}

/// A publisher on the broker; `None` (the test then returns early, with a
/// note) if no broker answers, unless `CI` is set: then the test fails.
pub fn broker() -> Option<Publisher> {
    let uri = uri();
    match Publisher::connect(uri.as_str()) {
        Ok(p) => Some(p),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!(
                "CI is set and no broker answers at {uri}: {e} (.ci/run starts one with scripts/rabbitmq start)"
            )
        }
        Err(e) => {
            // Straight to stderr: the test harness captures eprintln!.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: no broker ({e}); start one with `scripts/rabbitmq start`"
            );
            None
        }
    }
}

/// Returns from the test if there is no broker (and CI is not set).
#[macro_export]
macro_rules! broker_or_skip {
    () => {
        match $crate::common::broker() {
            Some(p) => p,
            None => return,
        }
    };
}

/// A queue name no other test or run uses.
pub fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("pe-test-{name}-{}-{nanos}", std::process::id())
}

/// An executor with lanes 10 and 1 (bounded 64) and `threads` threads.
pub fn executor(threads: usize) -> Executor {
    Executor::builder()
        .name("amqp-test")
        .core_threads(threads)
        .max_threads(threads)
        .lane(Priority(10), Capacity::Bounded(64))
        .lane(Priority(1), Capacity::Bounded(64))
        .build()
        .expect("executor")
}

/// Waits until `done()` holds, at most `limit`.
pub fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Deletes a stage's queue with its dead-letter and drain-control queues.
pub fn delete_stage_queues(publisher: &Publisher, queue: &str) {
    for name in [
        queue.to_owned(),
        format!("{queue}.dead"),
        format!("{queue}.drain"),
    ] {
        publisher.delete_queue(&name).expect("delete");
    }
}
