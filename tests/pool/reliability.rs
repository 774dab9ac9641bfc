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
use priority_executor::{ConfigError, Executors, Message};
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
fn load(toml: &str) -> Result<Owned<Executors>, ConfigError> {
    Executors::from_toml_str(toml).map(Owned::new)
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
                let terminated = inner.await_termination(Duration::from_secs(3600));
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
            exec.await_termination(LIMIT),
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
        assert!(exec.await_termination(LIMIT), "the worker exited");
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

mod item4 {
    use super::*;

    /// An expired job whose capture panics when dropped: the handle
    /// resolves `Expired` and the worker lives on.
    #[test]
    fn an_expired_job_whose_capture_panics_on_drop() {
        quiet_panics(DELIBERATE);
        let exec = one_worker("expired-bomb", LaneConfig::new(P));
        let worker = worker_name(&exec, P);
        let release = crate::common::hold_worker(&exec, P);
        let bomb = PanicsOnDrop;
        let handle = exec
            .enqueue_with(
                P,
                move || {
                    let _bomb = bomb;
                    "ran"
                },
                JobOptions::new().deadline(Instant::now()),
            )
            .expect("accepted");
        drop(release);
        let outcome = within("the expired job's handle", LIMIT, move || handle.join());
        assert_eq!(outcome, Err(JobError::Expired));
        assert_eq!(worker_name(&exec, P), worker, "the worker survived");
        assert_eq!(exec.metrics().lane(P).expect("lane").expired, 1);
    }

    /// A retrying job holding a capture that panics when dropped, failing
    /// once and succeeding on attempt 2: its handle resolves (with the
    /// value, or as a panic) and the worker lives on.
    #[test]
    fn a_retrying_job_whose_capture_panics_on_drop_succeeds_on_attempt_2() {
        quiet_panics(DELIBERATE);
        let exec = one_worker("retry-bomb", LaneConfig::new(P));
        let worker = worker_name(&exec, P);
        let bomb = PanicsOnDrop;
        let handle = exec
            .enqueue_retrying(
                P,
                move |attempt| {
                    let _held = &bomb;
                    if attempt.number == 1 {
                        Err("the first attempt fails")
                    } else {
                        Ok(attempt.number)
                    }
                },
                RetryPolicy::new(1),
            )
            .expect("accepted");
        let outcome = within("the retrying job's handle", LIMIT, move || handle.join());
        assert!(
            matches!(outcome, Ok(2) | Err(JobError::Panicked { .. })),
            "got {outcome:?}"
        );
        assert_eq!(worker_name(&exec, P), worker, "the worker survived");
    }

    /// A discard-oldest lane pushes out a job whose capture panics when
    /// dropped: the producer's `enqueue` does not panic, the pushed-out
    /// handle resolves `Discarded`, the new job runs.
    #[test]
    fn discard_oldest_pushing_out_a_job_whose_capture_panics_on_drop() {
        quiet_panics(DELIBERATE);
        let exec = one_worker(
            "discard-bomb",
            LaneConfig::new(P)
                .capacity(Capacity::Bounded(1))
                .when_full(RejectionPolicy::DiscardOldest),
        );
        let release = crate::common::hold_worker(&exec, P);
        let bomb = PanicsOnDrop;
        let oldest = exec
            .enqueue(P, move || {
                let _bomb = bomb;
                "the oldest ran"
            })
            .expect("accepted");
        let newer = catch_unwind(AssertUnwindSafe(|| exec.enqueue(P, || "the newer ran")))
            .unwrap_or_else(|payload| {
                panic!(
                    "the producer's enqueue panicked: {}",
                    panic_text(payload.as_ref())
                )
            })
            .expect("accepted, pushing the oldest out");
        let outcome = within("the pushed-out job's handle", LIMIT, move || oldest.join());
        assert_eq!(outcome, Err(JobError::Discarded));
        drop(release);
        let outcome = within("the newer job's handle", LIMIT, move || newer.join());
        assert_eq!(outcome, Ok("the newer ran"));
        assert_eq!(exec.metrics().lane(P).expect("lane").discarded, 1);
    }

    /// Dropping a `PendingJob` whose capture panics when dropped: its
    /// handle resolves `Cancelled` and the drop does not panic.
    #[test]
    fn dropping_a_pending_job_whose_capture_panics_on_drop() {
        quiet_panics(DELIBERATE);
        let exec = one_worker("pending-bomb", LaneConfig::new(P));
        let release = crate::common::hold_worker(&exec, P);
        let bomb = PanicsOnDrop;
        let handle = exec
            .enqueue(P, move || {
                let _bomb = bomb;
            })
            .expect("accepted");
        let pending = exec.shutdown_now();
        assert_eq!(pending.len(), 1);
        let dropped = catch_unwind(AssertUnwindSafe(move || drop(pending)));
        drop(release);
        let outcome = within("the dropped pending job's handle", LIMIT, move || {
            handle.join()
        });
        assert_eq!(outcome, Err(JobError::Cancelled));
        if let Err(payload) = dropped {
            panic!(
                "dropping the PendingJob panicked: {}",
                panic_text(payload.as_ref())
            );
        }
    }

    /// After a panic on a `max_running` lane's worker, the lane must run
    /// later jobs on the same worker, and once shut down its running count
    /// must be 0 with no thread left.
    fn capped_lane_still_runs(exec: &Owned<Executor>, worker: String) {
        let later = exec
            .enqueue(P, || thread::current().name().map(str::to_owned))
            .expect("accepted");
        let outcome = within("a later job on the max_running lane", LIMIT, move || {
            later.join()
        });
        assert_eq!(outcome, Ok(Some(worker)), "ran, on the same worker");
        assert_eq!(exec.shutdown_now().len(), 0);
        assert!(exec.await_termination(LIMIT), "the worker exited");
        let metrics = exec.metrics();
        assert_eq!(metrics.lane(P).expect("lane").running, Some(0));
        assert_eq!(metrics.threads.live, 0);
    }

    /// A job's result whose destructor panics, dropped on the worker
    /// because the handle was dropped first.
    #[test]
    fn a_max_running_lane_survives_a_result_whose_drop_panics() {
        quiet_panics(DELIBERATE);
        let exec = one_worker(
            "result-bomb",
            LaneConfig::new(P).max_running(MaxRunning::Threads(1)),
        );
        let worker = worker_name(&exec, P);
        let (release, gate) = mpsc::channel::<()>();
        let handle = exec
            .enqueue(P, move || {
                let _ = gate.recv();
                PanicsOnDrop
            })
            .expect("accepted");
        drop(handle);
        release.send(()).expect("the job waits");
        capped_lane_still_runs(&exec, worker);
    }

    /// The handle polled once as a future with a waker whose `wake`
    /// panics; then the job finishes and wakes it.
    #[test]
    fn a_max_running_lane_survives_a_waker_that_panics() {
        quiet_panics(DELIBERATE);
        let exec = one_worker(
            "waker-bomb",
            LaneConfig::new(P).max_running(MaxRunning::Threads(1)),
        );
        let worker = worker_name(&exec, P);
        let (release, gate) = mpsc::channel::<()>();
        let mut handle = exec
            .enqueue(P, move || {
                let _ = gate.recv();
                7
            })
            .expect("accepted");
        let waker = Waker::from(Arc::new(PanickyWaker));
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut handle).poll(&mut cx).is_pending());
        release.send(()).expect("the job waits");
        let outcome = within("the polled handle", LIMIT, move || handle.join());
        assert_eq!(outcome, Ok(7));
        capped_lane_still_runs(&exec, worker);
    }
}

// ===== 5. a NUL byte in an executor's name =====

mod item5 {
    use super::*;

    fn names_the_nul_byte(message: &str) -> bool {
        message.to_lowercase().contains("nul")
    }

    /// `.name("bad\0name")`: refused by `build` with an error about the
    /// NUL byte, or it works (a job runs, no phantom thread, the drop
    /// returns).
    #[test]
    fn a_nul_byte_in_a_built_name() {
        let built = Executor::builder()
            .name("bad\0name")
            .core_threads(1)
            .max_threads(1)
            .lane(P, Capacity::Unbounded)
            .build();
        let exec = match built {
            Err(err) => {
                assert!(names_the_nul_byte(&err.to_string()), "unclear error: {err}");
                return;
            }
            Ok(exec) => Owned::new(exec),
        };
        let queued = catch_unwind(AssertUnwindSafe(|| exec.enqueue(P, || "ran")))
            .unwrap_or_else(|payload| {
                panic!(
                    "build accepted the name, then enqueue panicked in the caller: {}",
                    panic_text(payload.as_ref())
                )
            })
            .expect("accepted");
        let outcome = within("a job on the NUL-named executor", LIMIT, move || {
            queued.join()
        });
        assert_eq!(outcome, Ok("ran"));
        let threads = exec.metrics().threads;
        assert!(threads.live <= 1, "phantom threads: {threads:?}");
    }

    /// `[executors."a\u0000b"]`: refused at load with an error about the
    /// NUL byte, or it works.
    #[cfg(feature = "esb")]
    #[test]
    fn a_nul_byte_in_a_configured_name() {
        let toml = "[executors.\"a\\u0000b\"]\ncore_threads = 1\nmax_threads = 1\n\
                    lanes = [{ priority = 1 }]\n";
        let executors = match Executors::from_toml_str(toml) {
            Err(err) => {
                assert!(names_the_nul_byte(&err.to_string()), "unclear error: {err}");
                return;
            }
            Ok(executors) => executors,
        };
        executors.register_sequence("noop", |_m: Message| Ok::<(), std::io::Error>(()));
        let executors = Owned::new(executors);
        let queued = catch_unwind(AssertUnwindSafe(|| {
            executors.enqueue_sequence("a\0b", "noop", Message::new())
        }))
        .unwrap_or_else(|payload| {
            panic!(
                "the file loaded, then enqueue_sequence panicked in the caller: {}",
                panic_text(payload.as_ref())
            )
        })
        .expect("accepted");
        let outcome = within("a sequence on the NUL-named executor", LIMIT, move || {
            queued.join()
        });
        assert!(matches!(outcome, Ok(Ok(()))), "got {outcome:?}");
    }
}

// ===== 6. keep_alive(Duration::MAX) =====

mod item6 {
    use super::*;

    /// A job runs, the worker goes to sleep with a huge keep-alive, and a
    /// later job must still run on a live worker.
    fn later_jobs_run(exec: &Executor) {
        let first = exec.enqueue(P, || 1).expect("accepted");
        assert_eq!(within("the first job", LIMIT, move || first.join()), Ok(1));
        // No event marks "the worker went to sleep": wait for the outcome.
        crate::common::wait_until("the worker is asleep", || {
            exec.metrics().threads.sleeping == 1
        });
        let later = exec.enqueue(P, || 2).expect("accepted");
        assert_eq!(
            within(
                "a job queued after the worker slept with a huge keep-alive",
                LIMIT,
                move || later.join()
            ),
            Ok(2)
        );
        let threads = exec.metrics().threads;
        assert_eq!(threads.live, 1, "the worker is alive: {threads:?}");
        assert!(exec.metrics().threads.sleeping <= threads.live);
    }

    #[test]
    fn a_core_thread_allowed_to_time_out() {
        let exec = Owned::new(
            Executor::builder()
                .name("forever-core")
                .core_threads(1)
                .max_threads(1)
                .allow_core_timeout(true)
                .keep_alive(Duration::MAX)
                .lane(P, Capacity::Unbounded)
                .build()
                .expect("valid settings"),
        );
        later_jobs_run(&exec);
    }

    #[test]
    fn a_thread_above_core() {
        let exec = Owned::new(
            Executor::builder()
                .name("forever-extra")
                .core_threads(0)
                .max_threads(1)
                .keep_alive(Duration::MAX)
                .lane(P, Capacity::Unbounded)
                .build()
                .expect("valid settings"),
        );
        later_jobs_run(&exec);
    }

    #[cfg(feature = "esb")]
    #[test]
    fn a_huge_keep_alive_in_executors_toml() {
        let executors = load(
            "[executors.k]\ncore_threads = 1\nmax_threads = 1\nallow_core_timeout = true\n\
             keep_alive = \"18446744073709551615s\"\nlanes = [{ priority = 1 }]\n",
        )
        .expect("a huge keep-alive is valid");
        later_jobs_run(&executors.get("k").expect("declared"));
    }
}

// ===== 7. MaxRunning::Percent of a huge max_threads =====

mod item7 {
    use super::*;

    #[test]
    fn percent_of_usize_max_does_not_overflow() {
        for (percent, expected) in [
            (1, usize::MAX / 100 + 1),
            (50, usize::MAX / 2 + 1),
            (100, usize::MAX),
        ] {
            let resolved = catch_unwind(|| MaxRunning::Percent(percent).resolve(usize::MAX))
                .unwrap_or_else(|payload| {
                    panic!(
                        "Percent({percent}).resolve(usize::MAX) panicked: {}",
                        panic_text(payload.as_ref())
                    )
                });
            assert_eq!(resolved, expected, "Percent({percent}) of usize::MAX");
        }
    }

    #[test]
    fn build_with_a_huge_max_threads_and_a_percent_cap() {
        let built = catch_unwind(|| {
            Executor::builder()
                .name("huge-max")
                .core_threads(1)
                .max_threads(usize::MAX)
                .lane_config(LaneConfig::new(P).max_running(MaxRunning::Percent(50)))
                .build()
        })
        .unwrap_or_else(|payload| panic!("build() panicked: {}", panic_text(payload.as_ref())));
        let exec = Owned::new(built.expect("valid settings"));
        assert_eq!(
            exec.metrics().lane(P).expect("lane").max_running,
            Some(usize::MAX / 2 + 1)
        );
        let job = exec.enqueue(P, || "ran").expect("accepted");
        assert_eq!(within("a job", LIMIT, move || job.join()), Ok("ran"));
    }
}

// ===== issue 15: an explicit max_threads below the CPU count =====

mod issue15 {
    use super::*;

    fn cpus() -> usize {
        thread::available_parallelism().map_or(1, usize::from)
    }

    /// The default core (one per CPU) is lowered to fit an explicit
    /// `max_threads`, so the same program builds on every machine.
    #[test]
    fn max_threads_1_builds_on_any_machine() {
        let exec = Executor::builder()
            .name("max-1")
            .max_threads(1)
            .lane(P, Capacity::Unbounded)
            .build()
            .unwrap_or_else(|err| panic!("refused on a {}-CPU machine: {err}", cpus()));
        let exec = Owned::new(exec);
        assert_eq!(exec.prestart_core_threads(), 1, "core lowered to 1");
        let job = exec.enqueue(P, || "ran").expect("accepted");
        assert_eq!(within("a job", LIMIT, move || job.join()), Ok("ran"));
    }

    #[cfg(feature = "esb")]
    #[test]
    fn max_threads_1_alone_in_executors_toml() {
        let executors = load("[executors.a]\nmax_threads = 1\nlanes = [{ priority = 1 }]\n")
            .unwrap_or_else(|err| panic!("refused on a {}-CPU machine: {err}", cpus()));
        assert_eq!(
            executors.get("a").expect("a").prestart_core_threads(),
            1,
            "core lowered to 1"
        );
    }
}
