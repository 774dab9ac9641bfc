//! What a thread of the pool may wait for (rule 8 of `sleep/README.md`):
//! jobs that wait on their own executor (`shutdown`, dropping the last
//! `Executor`, `wait_idle`) never wait for each other, however many do it
//! at once, and dropping the last clone outside the pool still joins
//! every worker thread.
//!
//! Each scenario runs under a watchdog ([`within`]): a deadlock fails the
//! test with what hung, instead of hanging the test binary.

use crate::common::within;
use priority_executor::{Capacity, Executor, Priority};
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Condvar, Mutex, mpsc};
use std::time::Duration;

const P: Priority = Priority(1);
/// A hang detector, not a timing assertion.
const LIMIT: Duration = Duration::from_secs(20);

fn exec(threads: usize) -> Executor {
    Executor::builder()
        .name("waits")
        .core_threads(threads)
        .max_threads(threads)
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap()
}

/// `jobs` jobs, one per worker, meet at a barrier and then all call
/// `shutdown` on their own executor; then the test drops the last clone.
fn jobs_shut_down_at_once(jobs: usize) {
    within(
        "jobs shutting down their own executor at once",
        LIMIT,
        move || {
            let e = exec(jobs);
            let all_in = Arc::new(Barrier::new(jobs));
            let handles: Vec<_> = (0..jobs)
                .map(|i| {
                    let (handle, all_in) = (e.clone(), Arc::clone(&all_in));
                    e.enqueue(P, move || {
                        all_in.wait();
                        handle.shutdown();
                        i
                    })
                    .unwrap()
                })
                .collect();
            let done: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
            assert_eq!(done, (0..jobs).map(Ok).collect::<Vec<_>>());
            drop(e);
        },
    );
}

#[test]
fn two_jobs_shutting_down_at_once_both_return() {
    jobs_shut_down_at_once(2);
}

#[test]
fn four_jobs_shutting_down_at_once_all_return() {
    jobs_shut_down_at_once(4);
}

#[test]
fn a_job_shutting_down_while_another_drops_the_last_executor() {
    let (done_tx, done) = mpsc::channel();
    let e = exec(2);
    let all_in = Arc::new(Barrier::new(3));
    let (handle, barrier) = (e.clone(), Arc::clone(&all_in));
    let tx = done_tx.clone();
    let _a = e.enqueue(P, move || {
        barrier.wait();
        handle.shutdown();
        tx.send("shutdown").unwrap();
    });
    let (owner, barrier) = (e.clone(), Arc::clone(&all_in));
    let _b = e.enqueue(P, move || {
        barrier.wait();
        // The last clone but for the other job's: whichever of the two
        // jobs lets go last shuts the executor down from inside a job.
        drop(owner);
        done_tx.send("dropped").unwrap();
    });
    drop(e);
    all_in.wait();
    let mut seen = within(
        "a job's shutdown racing a job's last drop",
        LIMIT,
        move || vec![done.recv().unwrap(), done.recv().unwrap()],
    );
    seen.sort_unstable();
    assert_eq!(seen, ["dropped", "shutdown"]);
}

#[test]
fn two_jobs_waiting_for_idle_at_once_both_return() {
    let idle = within("two jobs in wait_idle at once", LIMIT, || {
        let e = exec(2);
        let all_in = Arc::new(Barrier::new(2));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (handle, all_in) = (e.clone(), Arc::clone(&all_in));
                e.enqueue(P, move || {
                    all_in.wait();
                    // Generous: before the fix each waits for the other
                    // until this runs out, and reports busy.
                    handle.wait_idle_timeout(Duration::from_secs(10)).is_ok()
                })
                .unwrap()
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    assert_eq!(
        idle,
        [Ok(true), Ok(true)],
        "each job waits for no other waiter"
    );
}

#[test]
fn a_job_waiting_for_idle_and_a_job_shutting_down_both_return() {
    let idle = within("one job in wait_idle, one in shutdown", LIMIT, || {
        let e = exec(2);
        let all_in = Arc::new(Barrier::new(2));
        let (handle, barrier) = (e.clone(), Arc::clone(&all_in));
        let waiter = e
            .enqueue(P, move || {
                barrier.wait();
                handle.wait_idle_timeout(Duration::from_secs(10)).is_ok()
            })
            .unwrap();
        let (handle, barrier) = (e.clone(), Arc::clone(&all_in));
        let closer = e
            .enqueue(P, move || {
                barrier.wait();
                handle.shutdown();
            })
            .unwrap();
        let out = (waiter.join(), closer.join());
        drop(e);
        out
    });
    assert_eq!(idle, (Ok(true), Ok(())));
}

/// Set once a thread-local destructor has finished.
#[derive(Default)]
struct Finished(Mutex<bool>, Condvar);

/// Dropped at its thread's exit: says it started, then waits (for a go
/// that never comes, bounded, so nothing hangs) and counts itself done.
struct Local {
    started: mpsc::Sender<()>,
    go: Arc<Finished>,
    finished: Arc<AtomicUsize>,
}

impl Drop for Local {
    fn drop(&mut self) {
        let _ = self.started.send(());
        let guard = self.go.0.lock().unwrap();
        let _unused = self
            .go
            .1
            .wait_timeout_while(guard, Duration::from_millis(300), |go| !*go)
            .unwrap();
        self.finished.fetch_add(1, Ordering::SeqCst);
    }
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// The worker whose job called `shutdown` is joined by the drop of the
/// last clone outside the pool:
/// when `drop` returns, that thread's thread-local destructors are done.
#[test]
fn drop_joins_the_worker_that_shut_down_from_its_job() {
    let (started_tx, started) = mpsc::channel();
    let finished = Arc::new(AtomicUsize::new(0));
    let local = Local {
        started: started_tx,
        go: Arc::new(Finished::default()),
        finished: Arc::clone(&finished),
    };
    let e = exec(1);
    let handle = e.clone();
    e.enqueue(P, move || {
        LOCAL.with(|l| *l.borrow_mut() = Some(local));
        handle.shutdown();
    })
    .unwrap()
    .join()
    .unwrap();
    within("the last clone's drop", LIMIT, move || drop(e));
    assert_eq!(
        finished.load(Ordering::SeqCst),
        1,
        "drop returned before the worker's thread-local destructors ran"
    );
    assert!(started.try_recv().is_ok());
}
