//! Models: shutdown racing producers and workers (sleep/README.md, rules 5
//! and 6). Each job runs, is handed back, or is refused with the job
//! returned: exactly one of the three.
//!
//! Both `shutdown_now` and the graceful `shutdown` (through `&self`, on an
//! `Executor` clone) start with the same close (`Shared::close`), and both
//! race producers here. The graceful path is also modelled as the drop of
//! the last clone: jobs accepted just before it goes, with the worker on
//! its way to sleep.
use crate::support::{HIGH, LOW};
use crate::support::{Runs, model, model_with_bound};
use priority_executor::{Capacity, EnqueueError, Executor, JobError, Priority, RetryPolicy};
use std::time::Duration;

/// A producer enqueues two jobs in a lane of capacity 1 (so the second may
/// be blocked waiting for a slot) while the main thread calls
/// `shutdown_now`, which closes the executor.
#[test]
fn close_racing_enqueue_runs_or_refuses_each_job_once() {
    // Bound 2 (54 757 interleavings, 5 s; the bound-3 search took near five
    // minutes): the shutdown path is long, as in the models below.
    // `LOOM_MAX_PREEMPTIONS=3` runs the deeper search.
    model_with_bound(2, || {
        let exec = Executor::builder()
            .name("loom")
            .core_threads(1)
            .max_threads(1)
            .lane(HIGH, Capacity::Bounded(1))
            .lane(LOW, Capacity::Bounded(1))
            .build()
            .unwrap();
        let runs = Runs::new(2);
        let producer = {
            let exec = exec.clone();
            let runs = runs.clone();
            loom::thread::spawn(move || {
                let mut outcomes = Vec::new();
                for id in 0..2 {
                    outcomes.push(match exec.enqueue(HIGH, runs.job(id)) {
                        Ok(handle) => Some(handle),
                        Err(e) => {
                            assert!(matches!(e, EnqueueError::ShutDown { .. }), "{e}");
                            // The job came back unrun; dropping it here is
                            // the caller's choice.
                            drop(e.into_inner());
                            None
                        }
                    });
                }
                outcomes
            })
        };
        let pending = exec.shutdown_now();
        let handed_back = pending.len();
        for job in pending {
            assert_eq!(job.priority(), HIGH);
            job.run();
        }
        let outcomes = producer.join().unwrap();
        let mut accepted = 0;
        for (id, outcome) in outcomes.into_iter().enumerate() {
            match outcome {
                Some(handle) => {
                    accepted += 1;
                    // Run by the worker or by us after being handed back.
                    assert_eq!(handle.join(), Ok(()));
                    assert_eq!(runs.get(id), 1, "accepted job {id}");
                }
                None => assert_eq!(runs.get(id), 0, "refused job {id} ran"),
            }
        }
        assert!(handed_back <= accepted);
        drop(exec);
    });
}

/// Graceful shutdown drains: jobs accepted from another thread just before
/// the executor's last handle goes (on whichever thread) all run, while the
/// only worker races to sleep.
#[test]
fn shutdown_after_enqueue_runs_every_accepted_job() {
    // Bound 2: with 3, 340 000 interleavings (3 minutes on 2 cores).
    model_with_bound(2, || {
        let exec = Executor::builder()
            .name("loom")
            .core_threads(1)
            .max_threads(1)
            .lane(HIGH, Capacity::Unbounded)
            .lane(LOW, Capacity::Unbounded)
            .build()
            .unwrap();
        assert_eq!(exec.prestart_core_threads(), 1);
        let runs = Runs::new(2);
        let producer = {
            let exec = exec.clone();
            let runs = runs.clone();
            loom::thread::spawn(move || {
                let high = exec.enqueue(HIGH, runs.job(0)).unwrap();
                let low = exec.enqueue(LOW, runs.job(1)).unwrap();
                drop(exec);
                (high, low)
            })
        };
        // Whichever of the two drops last runs the shutdown.
        drop(exec);
        let (high, low) = producer.join().unwrap();
        assert_eq!(high.join(), Ok(()));
        assert_eq!(low.join(), Ok(()));
        assert_eq!((runs.get(0), runs.get(1)), (1, 1));
    });
}

/// `shutdown_now` racing the worker's dispatch of two queued jobs: each is
/// run by the worker or handed back, exactly once. The handed-back jobs are
/// dropped, so their handles report `Cancelled`.
#[test]
fn shutdown_now_racing_dispatch_hands_back_or_runs_each_job_once() {
    // Bound 2: the main thread's shutdown path is long (close, claim every
    // lane, then the graceful drop); with 3 this model alone explores 1.9
    // million interleavings (8 minutes on 2 cores).
    model_with_bound(2, || {
        let exec = Executor::builder()
            .name("loom")
            .core_threads(1)
            .max_threads(1)
            .lane(HIGH, Capacity::Unbounded)
            .lane(LOW, Capacity::Unbounded)
            .build()
            .unwrap();
        assert_eq!(exec.prestart_core_threads(), 1);
        let runs = Runs::new(2);
        let high = exec.enqueue(HIGH, runs.job(0)).unwrap();
        let low = exec.enqueue(LOW, runs.job(1)).unwrap();
        let pending = exec.shutdown_now();
        let back: Vec<Priority> = pending.iter().map(|p| p.priority()).collect();
        drop(pending);
        for (id, (priority, handle)) in [(HIGH, high), (LOW, low)].into_iter().enumerate() {
            let handed_back = back.contains(&priority);
            let result = handle.join();
            if handed_back {
                assert_eq!(result, Err(JobError::Cancelled), "job {id}");
                assert_eq!(runs.get(id), 0, "handed-back job {id} also ran");
            } else {
                assert_eq!(result, Ok(()), "job {id}");
                assert_eq!(runs.get(id), 1, "job {id}");
            }
        }
        let m = exec.metrics();
        assert_eq!(
            m.lanes.iter().map(|l| l.handed_back).sum::<u64>(),
            back.len() as u64
        );
        exec.shutdown();
    });
}

/// A graceful `shutdown` through a handle on one thread racing a producer
/// on another: each job is accepted and run before `shutdown` returns, or
/// refused with the job handed back (rule 5), never both, never neither.
///
/// No worker is started before: the producer starts the first (rule 3),
/// which then races the close on its way to sleep or out. loom has five
/// threads, `main` among them, and this race may start three workers one
/// after the other (at most one alive at a time): one that leaves the
/// closed executor before the job's slot opens is replaced, by the
/// producer after publishing or by the shutdown's look at the lanes (rule
/// 5), and when both decide to, the second starts a worker that finds
/// nothing and leaves. A worker started before would be a fourth, one
/// thread more than loom has. (Without the shutdown's look at the lanes,
/// this model fails: an accepted job is left unrun.)
#[test]
fn graceful_shutdown_racing_enqueue_runs_or_refuses_each_job() {
    model(|| {
        let exec = Executor::builder()
            .name("loom")
            .core_threads(1)
            .max_threads(1)
            .lane(HIGH, Capacity::Unbounded)
            .lane(LOW, Capacity::Unbounded)
            .build()
            .unwrap();
        let runs = Runs::new(1);
        let handle = exec.clone();
        let producer = {
            let runs = runs.clone();
            loom::thread::spawn(move || match handle.enqueue(LOW, runs.job(0)) {
                Ok(job) => Some(job),
                Err(e) => {
                    assert!(matches!(e, EnqueueError::ShutDown { .. }), "{e}");
                    drop(e.into_inner());
                    None
                }
            })
        };
        exec.shutdown();
        let accepted = producer.join().unwrap();
        match accepted {
            Some(job) => {
                // Run by the worker before `shutdown` returned.
                assert_eq!(runs.get(0), 1);
                assert_eq!(job.join(), Ok(()));
            }
            None => assert_eq!(runs.get(0), 0),
        }
        // loom never times out a wait: this waits for the last exit.
        assert!(exec.await_termination(Duration::from_secs(1)).is_ok());
        assert!(exec.is_terminated());
    });
}

/// A retrying job's first attempt fails while the main thread calls
/// `shutdown_now` (the re-queue lock of `Shared::retry` against
/// `Shared::stop_now`): the retry is either queued before the lanes are
/// emptied and handed back, or sees the executor stopped and is
/// dead-lettered with its error. Never stranded, never both.
#[test]
fn retry_racing_shutdown_now_is_handed_back_or_dead_lettered() {
    model(|| {
        let exec = Executor::builder()
            .name("loom")
            .core_threads(1)
            .max_threads(1)
            .lane(HIGH, Capacity::Unbounded)
            .build()
            .unwrap();
        assert_eq!(exec.prestart_core_threads(), 1);
        let handle = exec
            .enqueue_retrying(
                HIGH,
                |attempt| Err::<(), _>(format!("attempt {}", attempt.number)),
                RetryPolicy::new(1),
            )
            .unwrap();
        let pending = exec.shutdown_now();
        let handed_back = pending.len();
        assert!(handed_back <= 1);
        drop(pending);
        let result = handle.join();
        let m = exec.metrics();
        let lane = &m.lanes[0];
        match result {
            // Handed back before its first run, or as a waiting retry.
            Err(JobError::Cancelled) => assert_eq!(handed_back, 1),
            // Its retry also ran, or the retry was refused after the stop.
            Err(JobError::Failed { attempts, .. }) => {
                assert_eq!(handed_back, 0);
                assert!(attempts == 1 || attempts == 2, "attempts {attempts}");
                assert_eq!(lane.dead_lettered, 1);
            }
            other => panic!("unexpected {other:?}"),
        }
        exec.shutdown();
        assert_eq!(lane.handed_back, handed_back as u64);
    });
}

/// Rule 8: two jobs, one per worker, each shut their own executor down
/// through a clone. Neither waits for the other (each is waiting on the
/// pool), both return, and the last clone's drop then joins both threads
/// (with each waiting for the other, loom reports the deadlock).
#[test]
fn two_jobs_shutting_down_at_once_both_return() {
    // One lane, bound 1 (13 052 interleavings, 3 s): three threads, each
    // through close, the exit wait and the join. A second lane is not what
    // rule 8 is about and multiplies the interleavings (each worker's look
    // at the lanes loads both): with two lanes bound 1 ran past 30
    // minutes; with one lane bound 2 takes 5 minutes
    // (`LOOM_MAX_PREEMPTIONS=2`).
    model_with_bound(1, || {
        let exec = Executor::builder()
            .name("loom")
            .core_threads(2)
            .max_threads(2)
            .lane(HIGH, Capacity::Unbounded)
            .build()
            .unwrap();
        assert_eq!(exec.prestart_core_threads(), 2);
        // The first job may shut the executor down before the second is
        // enqueued: then that one is refused, and only one job shuts down.
        let jobs: Vec<_> = (0..2)
            .filter_map(|_| {
                let handle = exec.clone();
                match exec.enqueue(HIGH, move || handle.shutdown()) {
                    Ok(job) => Some(job),
                    Err(e) => {
                        assert!(matches!(e, EnqueueError::ShutDown { .. }), "{e}");
                        None
                    }
                }
            })
            .collect();
        assert!(!jobs.is_empty());
        for job in jobs {
            assert_eq!(job.join(), Ok(()));
        }
        drop(exec);
    });
}
