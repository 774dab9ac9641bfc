//! Graceful shutdown: accepts nothing new, runs everything queued, joins
//! every thread; `shutdown_timeout` reports what was still pending.

use crate::common::hold_worker;
use priority_executor::{Capacity, Executor, Priority, TimedOut};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn exec(core: usize, max: usize) -> Executor {
    Executor::builder()
        .name("shut")
        .core_threads(core)
        .max_threads(max)
        .lane(Priority(10), Capacity::Bounded(1000))
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap()
}

#[test]
fn shutdown_runs_every_queued_job() {
    let e = exec(1, 1);
    let gate = hold_worker(&e, Priority(1));
    let ran = Arc::new(AtomicUsize::new(0));
    for i in 0..500 {
        let ran = ran.clone();
        let p = if i % 2 == 0 {
            Priority(10)
        } else {
            Priority(1)
        };
        let _detached = e.enqueue(p, move || ran.fetch_add(1, Ordering::SeqCst));
    }
    drop(gate);
    e.shutdown();
    assert_eq!(ran.load(Ordering::SeqCst), 500);
}

#[test]
fn drop_is_a_graceful_shutdown() {
    let ran = Arc::new(AtomicUsize::new(0));
    {
        let e = exec(0, 2);
        for _ in 0..100 {
            let ran = ran.clone();
            let _detached = e.enqueue(Priority(1), move || ran.fetch_add(1, Ordering::SeqCst));
        }
    }
    assert_eq!(ran.load(Ordering::SeqCst), 100);
}

#[test]
fn shutdown_timeout_reports_pending_work_and_loses_none() {
    let e = exec(1, 1);
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let (started_tx, started) = std::sync::mpsc::channel();
    let _blocker = e
        .enqueue(Priority(1), move || {
            started_tx.send(()).unwrap();
            gate.recv().ok();
        })
        .unwrap();
    started.recv().unwrap();
    let last = e.enqueue(Priority(10), || "ran after all").unwrap();
    let err = e.shutdown_timeout(Duration::from_millis(10)).unwrap_err();
    assert_eq!(
        err,
        TimedOut {
            queued: 1,
            running: 1
        }
    );
    assert!(e.is_shut_down());
    // Given up: dropping the last clone does not wait for the held job.
    crate::common::within(
        "dropping after a timed-out shutdown",
        Duration::from_secs(20),
        move || drop(e),
    );
    // The threads drain in the background: the queued job still runs.
    release.send(()).unwrap();
    assert_eq!(last.join(), Ok("ran after all"));
}

#[test]
fn shutdown_with_no_thread_started_runs_the_queue() {
    // core 0 and a job queued: shutdown must still find a thread for it.
    let e = exec(0, 1);
    let h = e.enqueue(Priority(1), || 1).unwrap();
    e.shutdown();
    assert_eq!(h.join(), Ok(1));
}

#[test]
fn dropping_the_last_reference_inside_a_job_does_not_deadlock() {
    let e = exec(1, 1);
    let inner = e.clone();
    let (done_tx, done) = std::sync::mpsc::channel();
    let _detached = e.enqueue(Priority(1), move || {
        // This job may hold the last reference; dropping it here must not
        // wait for this very thread.
        drop(inner);
        done_tx.send(()).unwrap();
    });
    drop(e);
    done.recv().unwrap();
}

/// A worker that exited by keep-alive is joined, not detached, when a new
/// worker replaces it: its thread-local destructors have finished by the
/// time `shutdown` returns. (Detached, it could still be running them.)
#[test]
fn shutdown_waits_for_the_thread_locals_of_workers_that_timed_out() {
    use std::cell::RefCell;
    use std::sync::mpsc;
    use std::sync::{Condvar, Mutex};

    /// Set once a destructor has finished.
    #[derive(Default)]
    struct Finished(Mutex<bool>, Condvar);

    /// Dropped at thread exit: reports that it started, then waits (for
    /// the test's go, at most a bound so nothing can hang) and marks
    /// itself finished.
    struct Local {
        started: mpsc::Sender<()>,
        go: Arc<Finished>,
        finished: Arc<AtomicUsize>,
    }

    impl Drop for Local {
        fn drop(&mut self) {
            let _ = self.started.send(());
            let (go, changed) = (&self.go.0, &self.go.1);
            let guard = go.lock().unwrap();
            let _unused = changed
                .wait_timeout_while(guard, Duration::from_millis(300), |go| !*go)
                .unwrap();
            self.finished.fetch_add(1, Ordering::SeqCst);
        }
    }

    thread_local! {
        static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
    }

    let e = Executor::builder()
        .name("tls")
        .core_threads(0)
        .max_threads(1)
        .keep_alive(Duration::ZERO)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let (started_tx, started) = mpsc::channel();
    let go = Arc::new(Finished::default());
    let finished = Arc::new(AtomicUsize::new(0));
    let local = Local {
        started: started_tx,
        go: go.clone(),
        finished: finished.clone(),
    };
    e.enqueue(Priority(1), move || {
        LOCAL.with(|l| *l.borrow_mut() = Some(local))
    })
    .unwrap()
    .join()
    .unwrap();
    // The worker timed out and its main function returned: its
    // thread-local destructor runs now.
    started.recv().unwrap();
    // A new worker is started for this job, replacing the one exiting.
    e.enqueue(Priority(1), || ()).unwrap().join().unwrap();
    e.shutdown();
    assert_eq!(finished.load(Ordering::SeqCst), 1);
    *go.0.lock().unwrap() = true;
    go.1.notify_all();
}
