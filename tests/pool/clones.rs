//! `Executor` clones: cheap, `Send` and `Sync`; each enqueues, reads metrics
//! and shuts down through `&self`, also from inside the executor's own
//! jobs; the pool shuts down gracefully when the last clone is dropped,
//! wherever that happens.

use crate::common::{Gate, hold_worker, watchdog};
use priority_executor::{Capacity, EnqueueError, Executor, Priority};
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

const P: Priority = Priority(1);

fn exec(core: usize, max: usize) -> Executor {
    Executor::builder()
        .name("handle")
        .core_threads(core)
        .max_threads(max)
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap()
}

fn counting_job(ran: &Arc<AtomicUsize>) -> impl FnOnce() + Send + 'static {
    let ran = Arc::clone(ran);
    move || {
        ran.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_clone_is_send_and_sync() {
    fn assert_traits<H: Clone + Send + Sync + 'static>() {}
    assert_traits::<Executor>();
    let e = exec(1, 1);
    let clone = e.clone();
    std::thread::spawn(move || assert_eq!(clone.name(), "handle"))
        .join()
        .unwrap();
}

#[test]
fn clones_on_other_threads_enqueue_and_read_metrics() {
    let e = exec(2, 2);
    let ran = Arc::new(AtomicUsize::new(0));
    let producers: Vec<_> = (0..4)
        .map(|_| {
            let handle = e.clone();
            let ran = Arc::clone(&ran);
            std::thread::spawn(move || {
                for _ in 0..50 {
                    handle
                        .enqueue(P, counting_job(&ran))
                        .unwrap()
                        .join()
                        .unwrap();
                }
                handle.metrics().lane(P).unwrap().completed
            })
        })
        .collect();
    for producer in producers {
        assert!(producer.join().unwrap() >= 50);
    }
    assert_eq!(ran.load(Ordering::SeqCst), 200);
    assert_eq!(e.clone().name(), "handle");
    assert!(!e.is_shut_down(), "the clones dropped were not the last");
}

#[test]
fn shutdown_through_a_shared_reference_drains_the_queue() {
    // Any clone can stop the executor gracefully while others remain.
    let e = exec(1, 1);
    let gate = hold_worker(&e, P);
    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let _detached = e.enqueue(P, counting_job(&ran));
    }
    let other = e.clone();
    let stopper = std::thread::spawn(move || other.shutdown());
    // The shutdown is waiting for the held worker; new jobs are refused.
    crate::common::wait_until("the executor closes", || e.is_shut_down());
    assert!(matches!(
        e.enqueue(P, || ()).unwrap_err(),
        EnqueueError::ShutDown { .. }
    ));
    drop(gate);
    stopper.join().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 100);
    assert!(e.is_terminated());
}

#[test]
fn shutdown_from_inside_a_job_returns_and_the_executor_terminates() {
    for (core, max) in [(1, 1), (2, 2)] {
        let (ran, terminated) = watchdog("a job shutting down its own executor", move || {
            let e = exec(core, max);
            let ran = Arc::new(AtomicUsize::new(0));
            let start = Gate::default();
            let handle = e.clone();
            let opened = start.clone();
            let stopper = e
                .enqueue(P, move || {
                    opened.wait();
                    handle.shutdown(); // must not wait for this very thread
                    "returned"
                })
                .unwrap();
            // Queued behind the stopping job: they still run.
            for _ in 0..10 {
                let _detached = e.enqueue(P, counting_job(&ran));
            }
            start.open();
            assert_eq!(stopper.join(), Ok("returned"));
            let terminated = e.await_termination(Duration::from_secs(30)).is_ok();
            (ran.load(Ordering::SeqCst), terminated)
        });
        assert_eq!(ran, 10, "core {core}");
        assert!(terminated, "core {core}");
    }
}

#[test]
fn an_explicit_shutdown_through_one_clone_closes_every_clone() {
    let e = exec(1, 1);
    let clone = e.clone();
    let gate = hold_worker(&e, P);
    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..20 {
        let _detached = clone.enqueue(P, counting_job(&ran));
    }
    let (stopped_tx, stopped) = mpsc::channel();
    let stopper = std::thread::spawn(move || {
        e.shutdown();
        stopped_tx.send(()).unwrap();
    });
    crate::common::wait_until("the shutdown closes the executor", || clone.is_shut_down());
    drop(gate);
    stopped.recv().unwrap();
    stopper.join().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 20);
    assert!(clone.is_terminated());
    // The clone outlives the shutdown: it refuses, handing the job back.
    let err = clone.enqueue(P, || 7).unwrap_err();
    assert!(matches!(err, EnqueueError::ShutDown { .. }));
    assert_eq!(err.into_inner()(), 7);
}

/// Sends on its channel when its worker thread exits (a thread-local's
/// destructor, the last thing the thread runs).
struct ExitSignal(mpsc::Sender<()>);

impl Drop for ExitSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

thread_local! {
    static EXIT: RefCell<Option<ExitSignal>> = const { RefCell::new(None) };
}

/// An executor of `threads` prestarted workers, each of which says on the
/// returned channel when its thread exits.
fn exec_telling_exits(threads: usize) -> (Executor, mpsc::Receiver<()>) {
    let (exited_tx, exited) = mpsc::channel();
    let e = Executor::builder()
        .name("handle")
        .core_threads(threads)
        .max_threads(threads)
        .lane(P, Capacity::Unbounded)
        .on_thread_start(move || {
            let signal = ExitSignal(exited_tx.clone());
            EXIT.with(|exit| *exit.borrow_mut() = Some(signal));
        })
        .build()
        .unwrap();
    assert_eq!(e.prestart_core_threads(), threads);
    (e, exited)
}

#[test]
fn dropping_a_clone_that_is_not_the_last_keeps_the_executor_running() {
    let e = exec(1, 1);
    let clone = e.clone();
    std::thread::spawn(move || drop(clone)).join().unwrap();
    assert!(!e.is_shut_down());
    assert_eq!(e.enqueue(P, || 5).unwrap().join(), Ok(5));
}

#[test]
fn the_last_clone_dropped_on_another_thread_shuts_down_gracefully() {
    let (e, exited) = exec_telling_exits(2);
    let gate = hold_worker(&e, P);
    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..20 {
        let _detached = e.enqueue(P, counting_job(&ran));
    }
    let last = e.clone();
    drop(e);
    let (dropping_tx, dropping) = mpsc::channel();
    let (dropped_tx, dropped) = mpsc::channel();
    let owner = std::thread::spawn(move || {
        dropping_tx.send(()).unwrap();
        drop(last);
        dropped_tx.send(()).unwrap();
    });
    dropping.recv().unwrap();
    // The drop waits for the held job, which the test releases.
    drop(gate);
    dropped.recv().unwrap();
    // The drop returned after every accepted job ran, and after joining
    // every worker thread: both have said they exited.
    assert_eq!(ran.load(Ordering::SeqCst), 20);
    assert_eq!(exited.try_iter().count(), 2);
    owner.join().unwrap();
}

#[test]
fn the_last_clone_dropped_inside_its_own_job_runs_every_job_and_ends_every_thread() {
    for threads in [1, 2] {
        let (ran, exits) = watchdog("the last clone dropped inside a job", move || {
            let (e, exited) = exec_telling_exits(threads);
            let ran = Arc::new(AtomicUsize::new(0));
            let start = Gate::default();
            let (opened, last) = (start.clone(), e.clone());
            let (returned_tx, returned) = mpsc::channel();
            let _detached = e.enqueue(P, move || {
                opened.wait();
                // The last clone: its drop is a graceful shutdown from
                // inside the pool, which must not wait for this thread.
                drop(last);
                returned_tx.send(()).unwrap();
            });
            // Queued behind the dropping job: they still run.
            for _ in 0..10 {
                let _detached = e.enqueue(P, counting_job(&ran));
            }
            drop(e);
            start.open();
            returned.recv().unwrap();
            // Every worker thread exits, the one that dropped it included.
            for _ in 0..threads {
                exited.recv().unwrap();
            }
            (ran.load(Ordering::SeqCst), threads)
        });
        assert_eq!(ran, 10, "{threads} threads");
        assert_eq!(exits, threads);
    }
}

#[test]
fn is_terminated_only_once_every_worker_has_exited() {
    let e = exec(1, 1);
    let release = hold_worker(&e, P);
    assert!(!e.is_terminated());
    let pending = e.shutdown_now();
    assert!(pending.is_empty());
    assert!(e.is_shut_down());
    assert!(!e.is_terminated(), "the held job is still running");
    drop(release);
    assert!(e.await_termination(Duration::from_secs(30)).is_ok());
    assert!(e.is_terminated());
}
