//! Every `unsafe` path of the crate, driven through its public API with
//! counts small enough for Miri (`scripts/miri` runs this binary under
//! Stacked and Tree Borrows, with and without the cell cache). Outside
//! Miri it runs as an ordinary, quick test.
//!
//! The paths: a job cell joined, detached before and after its result,
//! polled then dropped, cancelled; a future woken during its own poll and
//! re-queued, one parked and woken from another thread, one dropped
//! pending; outputs over-aligned, zero-sized and large; handles that
//! outlive the thread that enqueued them; cells freed on threads that
//! exit; jobs handed back by `shutdown_now`, run and dropped on other
//! threads; a job retried, one dead-lettered, one refused by a full lane
//! and handed back, one given up while it waits out a backoff at shutdown;
//! stamped handles polled then dropped while the worker completes; a
//! bounded mailbox lane (its ring) with send-backs past the
//! capacity, then a drain.

#[path = "../common/mod.rs"]
mod common;

use common::{Gate, hold_worker, quiet_panics};
use priority_executor::{Attempt, Capacity, Executor, JobError, JobOptions, Priority, RetryPolicy};
use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

const HIGH: Priority = Priority(2);
const LOW: Priority = Priority(1);

fn pool(threads: usize) -> Executor {
    Executor::builder()
        .name("miri")
        .core_threads(threads)
        .max_threads(threads)
        .lane(HIGH, Capacity::Unbounded)
        .lane(LOW, Capacity::Bounded(2))
        .build()
        .expect("valid executor")
}

/// Wakes nothing: the test polls again itself.
struct Nothing;

impl Wake for Nothing {
    fn wake(self: Arc<Self>) {}
}

fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    let waker = Waker::from(Arc::new(Nothing));
    Pin::new(future).poll(&mut Context::from_waker(&waker))
}

#[test]
fn handles_joined_detached_polled_and_cancelled() {
    let exec = pool(1);
    // Joined, and detached after the result is ready.
    assert_eq!(exec.enqueue(HIGH, || 6 * 7).unwrap().join(), Ok(42));
    let ready = exec.enqueue(HIGH, || vec![1u8; 3]).unwrap();
    common::wait_until("result ready", || ready.is_finished());
    drop(ready);

    // Detached before it runs, polled then dropped while it waits, and
    // cancelled while queued, all behind a held worker.
    let gate = hold_worker(&exec, HIGH);
    drop(exec.enqueue(HIGH, || String::from("detached")).unwrap());
    let mut polled = exec.enqueue(HIGH, || String::from("polled")).unwrap();
    assert!(poll_once(&mut polled).is_pending());
    drop(polled);
    let cancelled = exec.enqueue(LOW, || String::from("cancelled")).unwrap();
    assert!(cancelled.cancel());
    assert_eq!(cancelled.join(), Err(JobError::Cancelled));
    let mut later = exec.enqueue(HIGH, || String::from("later")).unwrap();
    assert!(poll_once(&mut later).is_pending());
    drop(gate);
    assert_eq!(later.join().as_deref(), Ok("later"));
    exec.wait_idle();
}

/// Pending once after waking itself: woken during its own poll.
struct WokenDuringPoll(bool);

impl Future for WokenDuringPoll {
    type Output = u32;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        if self.0 {
            Poll::Ready(7)
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Pending until the test wakes the waker it left.
struct Parked(Arc<Mutex<(bool, Option<Waker>)>>);

impl Future for Parked {
    type Output = &'static str;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<&'static str> {
        let mut state = self.0.lock().unwrap();
        if state.0 {
            Poll::Ready("woken")
        } else {
            state.1 = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

#[test]
fn futures_woken_during_their_poll_parked_and_dropped() {
    let exec = pool(2);
    for _ in 0..2 {
        let handle = exec.spawn_future(HIGH, WokenDuringPoll(false)).unwrap();
        assert_eq!(handle.join(), Ok(7));
    }
    // Detached while it re-queues itself.
    drop(exec.spawn_future(HIGH, WokenDuringPoll(false)).unwrap());

    // Parked, then woken from another thread.
    let shared = Arc::new(Mutex::new((false, None::<Waker>)));
    let handle = exec.spawn_future(HIGH, Parked(shared.clone())).unwrap();
    common::wait_until("parked", || shared.lock().unwrap().1.is_some());
    let waker = thread::spawn(move || {
        let mut state = shared.lock().unwrap();
        state.0 = true;
        state.1.take()
    })
    .join()
    .unwrap();
    waker.expect("a waker").wake();
    assert_eq!(handle.join(), Ok("woken"));

    // A future still parked when the handle and the executor go.
    let never = Arc::new(Mutex::new((false, None::<Waker>)));
    let parked = exec.spawn_future(HIGH, Parked(never.clone())).unwrap();
    common::wait_until("parked", || never.lock().unwrap().1.is_some());
    drop(parked);
    drop(exec);
    // Whatever it holds is freed once its waker is let go of.
    drop(never.lock().unwrap().1.take());
}

#[repr(align(64))]
#[derive(Debug, PartialEq)]
struct OverAligned(u8);

#[test]
fn outputs_over_aligned_zero_sized_and_large() {
    let exec = pool(1);
    assert_eq!(
        exec.enqueue(HIGH, || OverAligned(3)).unwrap().join(),
        Ok(OverAligned(3))
    );
    assert_eq!(exec.enqueue(HIGH, || ()).unwrap().join(), Ok(()));
    let large = exec.enqueue(HIGH, || [7u64; 64]).unwrap().join().unwrap();
    assert!(large.iter().all(|&x| x == 7));
    let future = exec.spawn_future(HIGH, async { OverAligned(9) }).unwrap();
    assert_eq!(future.join(), Ok(OverAligned(9)));
    drop(exec.enqueue(HIGH, || OverAligned(1)).unwrap());
    exec.wait_idle();
}

#[test]
fn handles_outlive_the_thread_that_enqueued_and_cells_freed_on_exiting_threads() {
    let exec = pool(2);
    let producer = {
        let exec = exec.clone();
        thread::spawn(move || {
            (0..4u32)
                .map(|i| exec.enqueue(HIGH, move || i * 2).unwrap())
                .collect::<Vec<_>>()
        })
    };
    let handles = producer.join().unwrap();
    let results: Vec<u32> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results, [0, 2, 4, 6]);
    // A thread that frees cells (dropping finished handles) and exits
    // takes its spare cells with it to the shared cache.
    let (tx, rx) = mpsc::channel();
    for i in 0..4u32 {
        tx.send(exec.enqueue(HIGH, move || vec![i; 2]).unwrap())
            .unwrap();
    }
    drop(tx);
    thread::spawn(move || {
        for handle in rx {
            assert_eq!(handle.join().unwrap().len(), 2);
        }
    })
    .join()
    .unwrap();
    // And the workers exit with theirs.
    exec.shutdown();
    priority_executor::release_spare_cells();
}

#[test]
fn handed_back_jobs_run_and_dropped_on_other_threads() {
    let exec = pool(1);
    let gate = Gate::default();
    let (started_tx, started) = mpsc::channel();
    let held = {
        let gate = gate.clone();
        exec.enqueue(HIGH, move || {
            started_tx.send(()).unwrap();
            gate.wait();
        })
        .unwrap()
    };
    started.recv().unwrap();
    let handles: Vec<_> = (0..4u32)
        .map(|i| exec.enqueue(HIGH, move || i).unwrap())
        .collect();
    let pending = exec.shutdown_now();
    gate.open();
    held.join().ok();
    assert_eq!(pending.len(), 4);
    let runner = thread::spawn(move || {
        for (i, job) in pending.into_iter().enumerate() {
            if i % 2 == 0 {
                job.run();
            } else {
                drop(job);
            }
        }
    });
    runner.join().unwrap();
    let results: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
    assert_eq!(
        results,
        [
            Ok(0),
            Err(JobError::Cancelled),
            Ok(2),
            Err(JobError::Cancelled)
        ]
    );
}

#[test]
fn retried_dead_lettered_refused_and_given_up_jobs_keep_one_body() {
    let exec = pool(1);
    // Each body holds an `Arc`: a body dropped twice, or never, shows.
    let owned = Arc::new(());
    // Put back in the cell after each failed attempt, run again.
    let tracker = owned.clone();
    let retried = exec
        .enqueue_retrying(
            HIGH,
            move |attempt: Attempt| {
                let _held = &tracker;
                if attempt.number < 3 {
                    Err("not yet")
                } else {
                    Ok(attempt.number)
                }
            },
            RetryPolicy::new(2),
        )
        .unwrap();
    assert_eq!(retried.join(), Ok(3));
    // Out of retries: dead-lettered, its body dropped once.
    let tracker = owned.clone();
    let failed = exec
        .enqueue_retrying(
            HIGH,
            move |_: Attempt| -> Result<(), &str> {
                let _held = &tracker;
                Err("never")
            },
            RetryPolicy::new(1),
        )
        .unwrap();
    assert!(matches!(
        failed.join(),
        Err(JobError::Failed { attempts: 2, .. })
    ));
    // Refused by a full lane: the body comes back out of its cell, unrun.
    let release = hold_worker(&exec, HIGH);
    let queued: Vec<_> = (0..2)
        .map(|i| exec.enqueue(LOW, move || i).unwrap())
        .collect();
    let tracker = owned.clone();
    let refused = exec
        .enqueue_with(
            LOW,
            move || drop(tracker),
            JobOptions::new().wait_at_most(Duration::ZERO),
        )
        .unwrap_err();
    refused.into_inner()();
    release.send(()).unwrap();
    for handle in queued {
        handle.join().unwrap();
    }
    // Waiting out a backoff when the executor shuts down: given up, its
    // kept body dropped once.
    let tracker = owned.clone();
    let given_up = exec
        .enqueue_retrying(
            HIGH,
            move |_: Attempt| -> Result<(), &str> {
                let _held = &tracker;
                Err("again")
            },
            RetryPolicy::new(5).backoff(Duration::from_secs(3600), 1.0),
        )
        .unwrap();
    exec.shutdown();
    assert!(given_up.join().is_err());
    drop(exec);
    assert_eq!(Arc::strong_count(&owned), 1);
}

/// Stamped cells (a hook makes the executor stamp each job, so its cell
/// keeps the job's facts beside the state) whose handles are polled and
/// then dropped while the worker completes: the handle lets go while the
/// worker may free the cell at once, and no reference of the handle's
/// outlives its hold.
#[test]
fn stamped_handles_polled_then_dropped_while_the_worker_completes() {
    let exec = Executor::builder()
        .name("miri-stamped")
        .core_threads(1)
        .max_threads(1)
        .lane(HIGH, Capacity::Unbounded)
        .before_execute(|_| {})
        .build()
        .expect("valid executor");
    for i in 0..4u32 {
        let mut handle = exec.enqueue(HIGH, move || i).unwrap();
        let polled = poll_once(&mut handle);
        drop(handle);
        if let Poll::Ready(result) = polled {
            assert_eq!(result, Ok(i));
        }
    }
    exec.wait_idle();
}

/// An output whose destructor panics.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("miri: deliberate panic in a result's drop");
    }
}

#[test]
fn a_result_whose_destructor_panics_is_freed() {
    quiet_panics("miri: deliberate panic");
    let exec = pool(1);
    let handle = exec.enqueue(HIGH, || PanicsOnDrop).unwrap();
    common::wait_until("result ready", || handle.is_finished());
    drop(handle);
    exec.wait_idle();
}

#[cfg(feature = "actor")]
mod mailbox {
    use priority_executor::Capacity;
    use priority_executor::actor::{Actor, ActorError, MailboxConfig, Outbox, Stage, Strategy};
    use std::sync::{Arc, Mutex};

    struct Collect(Arc<Mutex<Vec<u32>>>);

    impl Actor for Collect {
        type In = u32;
        type Out = ();

        fn perform(&mut self, msg: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
            self.0.lock().unwrap().push(msg);
            Ok(())
        }
    }

    struct Echo(std::sync::mpsc::Sender<u32>);

    impl Actor for Echo {
        type In = u32;
        type Out = ();

        fn perform(&mut self, msg: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
            self.0.send(msg).expect("the test waits");
            Ok(())
        }
    }

    /// A send that creates its lane wakes an idle instance.
    #[test]
    fn a_lane_created_by_a_send_wakes_the_idle_instance() {
        use priority_executor::{Priority, SendOptions};
        let (tx, rx) = std::sync::mpsc::channel();
        let stage = Stage::builder("miri-new-lane", move |_| Echo(tx.clone()))
            .mailbox(MailboxConfig::new())
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        for p in 1..4u32 {
            addr.send_with(p, SendOptions::new().priority(Priority(p)))
                .expect("accepted");
            assert_eq!(rx.recv().expect("performed"), p);
        }
        assert_eq!(stage.drain().metrics.performed, 3);
    }

    #[test]
    fn a_bounded_lane_with_send_backs_then_a_drain() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stage = {
            let seen = seen.clone();
            Stage::builder("miri", move |_| Collect(seen.clone()))
                .mailbox(MailboxConfig::new().default_capacity(Capacity::Bounded(2)))
                // Every even letter is sent back once before it is performed.
                .strategy(Strategy::predicate(|m: &u32| m % 2 == 1, 1))
                .spawn()
                .expect("spawn")
        };
        let addr = stage.addr();
        let sender = std::thread::spawn(move || {
            for i in 0..6u32 {
                addr.send(i).expect("accepted");
            }
        });
        sender.join().unwrap();
        let exit = stage.drain();
        assert_eq!(exit.metrics.performed, 6);
        let mut seen = seen.lock().unwrap().clone();
        seen.sort_unstable();
        assert_eq!(seen, [0, 1, 2, 3, 4, 5]);
    }

    /// Permits on a ring lane of 2: one used, one dropped unused (its
    /// vacant slot passed over), and a future woken by the pop that frees
    /// a slot: every entry written once and read once, no leak.
    #[test]
    fn permits_used_dropped_and_awaited_on_a_ring_lane() {
        use priority_executor::Priority;
        use std::task::Poll;

        let seen = Arc::new(Mutex::new(Vec::new()));
        let stage = {
            let seen = seen.clone();
            Stage::builder("miri-permits", move |_| Collect(seen.clone()))
                .mailbox(MailboxConfig::new().lane(Priority(1), Capacity::Bounded(2)))
                .spawn()
                .expect("spawn")
        };
        let addr = stage.addr();
        let Poll::Ready(Ok(used)) = super::poll_once(&mut addr.reserve(Priority(1))) else {
            panic!("an empty lane has room");
        };
        let Poll::Ready(Ok(unused)) = super::poll_once(&mut addr.reserve(Priority(1))) else {
            panic!("a lane of 2 has room for two");
        };
        let mut third = addr.reserve(Priority(1));
        assert!(super::poll_once(&mut third).is_pending());
        used.send(1);
        drop(unused);
        // The instance pops both; a slot frees for the third.
        let permit = loop {
            if let Poll::Ready(result) = super::poll_once(&mut third) {
                break result.expect("the stage runs");
            }
            std::thread::yield_now();
        };
        permit.send(3);
        let exit = stage.drain();
        assert_eq!((exit.metrics.performed, exit.metrics.accepted), (2, 2));
        assert_eq!(*seen.lock().unwrap(), [1, 3]);
    }
}
