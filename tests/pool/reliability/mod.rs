//! Regression tests for the hangs, stranded handles and panics of issue 10
//! (found by driving the public API as a hostile user would), its "also
//! reported" error message for an out-of-range integer, and issue 15's
//! first failure (an explicit `max_threads` below the CPU count).
//!
//! Hangs are shown by a watchdog ([`within`]), never by a CI time-out: a
//! step that does not finish in [`LIMIT`] fails the test with what it was
//! waiting for, and its thread is leaked. The limit is a hang detector, not
//! a timing assertion. Whatever may hang when dropped (an executor whose
//! pool is broken) is owned by [`Owned`], which drops it under the watchdog,
//! or leaks it if the test has already failed.

use priority_executor::{
    Capacity, Executor, JobError, JobOptions, LaneConfig, MaxRunning, Priority, RejectionPolicy,
    RetryPolicy,
};
#[cfg(feature = "esb")]
use priority_executor::{ConfigError, Message, Registry};
use std::future::Future;
use std::ops::Deref;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::mpsc;
use std::task::{Context, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

use crate::common::{panic_text, quiet_panics, within};

/// How long a step may take before it counts as hung.
const LIMIT: Duration = Duration::from_secs(10);
const P: Priority = Priority(1);
/// Every panic these tests cause on purpose starts with this.
const DELIBERATE: &str = "reliability: deliberate panic";

/// Owns an executor (or a registry) for a test. It is dropped under the
/// watchdog, since a broken pool's drop can hang, and leaked if the test
/// has already failed, so a failing test reports its own assertion instead
/// of hanging the test binary in an unwinding drop.
struct Owned<T: Send + 'static>(Option<T>);

impl<T: Send + 'static> Owned<T> {
    fn new(value: T) -> Self {
        Owned(Some(value))
    }
}

impl<T: Send + 'static> Deref for Owned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0.as_ref().expect("present until dropped")
    }
}

impl<T: Send + 'static> Drop for Owned<T> {
    fn drop(&mut self) {
        if let Some(value) = self.0.take() {
            if thread::panicking() {
                std::mem::forget(value);
            } else {
                within("dropping the executor", LIMIT, move || drop(value));
            }
        }
    }
}

/// A value whose destructor panics (unless the thread is already
/// unwinding, which would abort the test binary).
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        if !thread::panicking() {
            panic!("{DELIBERATE} in a destructor");
        }
    }
}

/// A waker whose `wake` panics.
struct PanickyWaker;

impl Wake for PanickyWaker {
    fn wake(self: Arc<Self>) {
        if !thread::panicking() {
            panic!("{DELIBERATE} in Waker::wake");
        }
    }
}

/// One worker that never times out, and one lane.
fn one_worker(name: &str, lane: LaneConfig) -> Owned<Executor> {
    Owned::new(
        Executor::builder()
            .name(name)
            .core_threads(1)
            .max_threads(1)
            .lane_config(lane)
            .build()
            .expect("valid settings"),
    )
}

/// The name of the thread that runs a job queued now at `priority`.
fn worker_name(exec: &Executor, priority: Priority) -> String {
    let handle = exec
        .enqueue(priority, || thread::current().name().map(str::to_owned))
        .expect("accepted");
    within("a probe job", LIMIT, move || handle.join())
        .expect("the probe job ran")
        .expect("workers are named")
}

#[cfg(feature = "esb")]
fn load(toml: &str) -> Result<Owned<Registry>, ConfigError> {
    Registry::from_toml_str(toml).map(Owned::new)
}

// ===== 1. dropping or awaiting the executor from one of its own workers =====

mod item1 {
    use super::*;

    /// Two prestarted workers; a job holds the last `Executor` clone and
    /// drops it. The drop must return once the other worker has exited.
    /// Repeated, since the hang needs the other worker to exit after the
    /// dropping one started waiting (the usual order).
    #[test]
    fn a_job_dropping_the_last_clone_of_its_executor_returns() {
        for round in 0..5 {
            within(
                &format!("round {round}: a job drops the last Executor clone of its own pool"),
                LIMIT,
                || {
                    let exec = Executor::builder()
                        .name("self-drop")
                        .core_threads(2)
                        .max_threads(2)
                        .lane(P, Capacity::Unbounded)
                        .build()
                        .expect("valid settings");
                    assert_eq!(exec.prestart_core_threads(), 2);
                    let (go_tx, go) = mpsc::channel::<()>();
                    let last = exec.clone();
                    let handle = exec
                        .enqueue(P, move || {
                            go.recv().expect("the test sends go");
                            drop(last);
                            "the drop returned"
                        })
                        .expect("accepted");
                    drop(exec);
                    go_tx.send(()).expect("the job waits for go");
                    assert_eq!(handle.join(), Ok("the drop returned"));
                },
            );
        }
    }

    /// `shutdown_now` then `await_termination` from inside a job: it must
    /// return `true` as soon as the other worker has exited, not wait out
    /// its (one hour) timeout.
    #[test]
    fn await_termination_from_a_job_returns_once_the_other_workers_exit() {
        let exec = Owned::new(
            Executor::builder()
                .name("self-await")
                .core_threads(2)
                .max_threads(2)
                .lane(P, Capacity::Unbounded)
                .build()
                .expect("valid settings"),
        );
        assert_eq!(exec.prestart_core_threads(), 2);
        let inner = (*exec).clone();
        let handle = exec
            .enqueue(P, move || {
                let pending = inner.shutdown_now();
                let terminated = inner.await_termination(Duration::from_secs(3600)).is_ok();
                (pending.len(), terminated)
            })
            .expect("accepted");
        let outcome = within(
            "await_termination(1 h) called from a job, the other worker idle",
            LIMIT,
            move || handle.join(),
        );
        assert_eq!(outcome, Ok((0, true)));
        assert!(
            exec.await_termination(LIMIT).is_ok(),
            "the job's own worker exited too"
        );
        assert_eq!(exec.metrics().threads.live, 0);
    }
}

// ===== 2, 8 and the integer too large: tests/registry/ =====

// ===== 3. a retry requested after shutdown_now =====

mod item3 {
    use super::*;

    /// One worker; the first attempt of a retrying job is running when
    /// `shutdown_now` is called (nothing to hand back), then it fails. The
    /// retry it asks for can no longer be handed back, so its handle must
    /// resolve (cancelled, or failed after 1 attempt) and the lane must not
    /// keep a job queued in a terminated executor.
    fn retry_requested_after_shutdown_now(policy: RetryPolicy) {
        let exec = one_worker("retry-after-stop", LaneConfig::new(P));
        let (started_tx, started) = mpsc::channel();
        let (release, gate) = mpsc::channel::<()>();
        let handle = exec
            .enqueue_retrying(
                P,
                move |attempt| -> Result<u32, String> {
                    if attempt.number == 1 {
                        let _ = started_tx.send(());
                        let _ = gate.recv();
                    }
                    Err(format!("attempt {} failed", attempt.number))
                },
                policy,
            )
            .expect("accepted");
        started.recv().expect("the first attempt started");
        let pending = exec.shutdown_now();
        assert_eq!(pending.len(), 0, "the only job was running, not queued");
        release.send(()).expect("the attempt waits");
        let outcome = within(
            "the handle of a retry requested after shutdown_now",
            LIMIT,
            move || handle.join(),
        );
        // No retry follows a failure after shutdown_now: the job is
        // dead-lettered with its last error.
        assert_eq!(
            outcome,
            Err(JobError::Failed {
                attempts: 1,
                message: "attempt 1 failed".into()
            })
        );
        assert!(exec.await_termination(LIMIT).is_ok(), "the worker exited");
        let metrics = exec.metrics();
        let lane = metrics.lane(P).expect("lane");
        assert_eq!(
            lane.queued, 0,
            "no job left queued in a terminated executor"
        );
        assert_eq!(
            lane.settled(),
            lane.submitted,
            "every job settled: {lane:?}"
        );
    }

    #[test]
    fn an_immediate_retry_after_shutdown_now_resolves_its_handle() {
        retry_requested_after_shutdown_now(RetryPolicy::new(3));
    }

    #[test]
    fn a_backed_off_retry_after_shutdown_now_resolves_its_handle() {
        retry_requested_after_shutdown_now(
            RetryPolicy::new(3).backoff(Duration::from_secs(3600), 1.0),
        );
    }
}

// ===== 4. panicking destructors and wakers =====

mod item4;

// ===== 5. a NUL byte in an executor's name =====

mod item5;

// ===== 6. keep_alive(Duration::MAX) =====

mod item6;

// ===== 7. MaxRunning::Percent of a huge max_threads =====

mod item7;

// ===== issue 15: an explicit max_threads below the CPU count =====

mod issue15;
