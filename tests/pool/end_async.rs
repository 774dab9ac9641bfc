//! `shutdown_async` and `wait_idle_async`: the blocking waits as futures
//! any runtime polls (tokio's current-thread and multi-thread runtimes,
//! futures' `block_on`). The first poll begins the end; a future dropped
//! then leaves it running; awaited on one of the pool's own workers, each
//! follows the blocking form's rule for a job.

use crate::common::{Gate, watchdog};
use priority_executor::{Capacity, EnqueueError, Executor, Priority};
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

const P: Priority = Priority(1);

fn exec(threads: usize) -> Executor {
    Executor::builder()
        .name("end-async")
        .core_threads(threads)
        .max_threads(threads)
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap()
}

/// `n` jobs that wait for `gate`, each counted in `ran` once it has run.
fn gated_jobs(exec: &Executor, n: usize, gate: &Gate, ran: &Arc<AtomicUsize>) {
    for _ in 0..n {
        let (gate, ran) = (gate.clone(), ran.clone());
        let _detached = exec.enqueue(P, move || {
            gate.wait();
            ran.fetch_add(1, Ordering::SeqCst);
        });
    }
}

/// One poll with a waker that does nothing.
fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    std::pin::Pin::new(future).poll(&mut Context::from_waker(Waker::noop()))
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

/// Shuts down with `block_on` while the jobs wait for the gate, opened by
/// another thread: the future is woken, not polled in a loop.
fn shuts_down_on(block_on: impl FnOnce(std::pin::Pin<&mut (dyn Future<Output = ()> + Send)>)) {
    let e = exec(2);
    let (gate, ran) = (Gate::default(), Arc::new(AtomicUsize::new(0)));
    gated_jobs(&e, 50, &gate, &ran);
    let opener = {
        let (gate, e) = (gate.clone(), e.clone());
        std::thread::spawn(move || {
            crate::common::wait_until("the shutdown has begun", || e.is_shut_down());
            gate.open();
        })
    };
    let shutdown = pin!(e.shutdown_async());
    block_on(shutdown);
    opener.join().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 50, "every accepted job ran");
    assert!(e.is_terminated());
    assert_eq!(e.metrics().threads.live, 0);
}

#[test]
fn shutdown_async_on_a_current_thread_runtime() {
    watchdog("shutdown_async on a current-thread runtime", || {
        shuts_down_on(|f| current_thread().block_on(f));
    });
}

#[test]
fn shutdown_async_on_a_multi_thread_runtime() {
    watchdog("shutdown_async on a multi-thread runtime", || {
        shuts_down_on(|f| multi_thread().block_on(f));
    });
}

#[test]
fn shutdown_async_with_futures_block_on() {
    watchdog("shutdown_async with futures' block_on", || {
        shuts_down_on(|f| ::futures::executor::block_on(f));
    });
}

#[test]
fn shutdown_async_in_a_spawned_task_refuses_jobs_from_its_first_poll() {
    watchdog("shutdown_async in a tokio task", || {
        let runtime = multi_thread();
        let e = exec(2);
        let (gate, ran) = (Gate::default(), Arc::new(AtomicUsize::new(0)));
        gated_jobs(&e, 10, &gate, &ran);
        let task = runtime.spawn(e.shutdown_async());
        crate::common::wait_until("the task's first poll", || e.is_shut_down());
        let refused = e.enqueue(P, || ()).unwrap_err();
        assert!(matches!(refused, EnqueueError::ShutDown { .. }));
        assert!(!task.is_finished(), "the jobs wait for the gate");
        gate.open();
        runtime.block_on(task).unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 10);
        assert!(e.is_terminated());
    });
}

#[test]
fn a_dropped_shutdown_future_leaves_the_shutdown_running() {
    watchdog("a dropped shutdown_async", || {
        let e = exec(1);
        let (gate, ran) = (Gate::default(), Arc::new(AtomicUsize::new(0)));
        gated_jobs(&e, 5, &gate, &ran);
        let mut shutdown = e.shutdown_async();
        assert!(poll_once(&mut shutdown).is_pending());
        drop(shutdown);
        assert!(e.is_shut_down());
        gate.open();
        crate::common::wait_until("the shutdown ends without its future", || e.is_terminated());
        assert_eq!(ran.load(Ordering::SeqCst), 5);
    });
}

#[test]
fn a_shutdown_future_never_polled_does_nothing() {
    let e = exec(1);
    drop(e.shutdown_async());
    assert!(!e.is_shut_down());
    assert_eq!(e.enqueue(P, || 7).unwrap().join(), Ok(7));
}

#[test]
fn wait_idle_async_on_each_runtime() {
    watchdog("wait_idle_async on three runtimes", || {
        let e = exec(2);
        let blockers: [&dyn Fn(&Executor); 3] = [
            &|e| current_thread().block_on(e.wait_idle_async()),
            &|e| multi_thread().block_on(e.wait_idle_async()),
            &|e| ::futures::executor::block_on(e.wait_idle_async()),
        ];
        for (round, block_on) in blockers.iter().enumerate() {
            let (gate, ran) = (Gate::default(), Arc::new(AtomicUsize::new(0)));
            gated_jobs(&e, 20, &gate, &ran);
            let opener = {
                let gate = gate.clone();
                std::thread::spawn(move || gate.open())
            };
            block_on(&e);
            opener.join().unwrap();
            assert_eq!(ran.load(Ordering::SeqCst), 20, "round {round}");
            assert!(!e.is_shut_down(), "the executor keeps running");
        }
        assert_eq!(e.enqueue(P, || 1).unwrap().join(), Ok(1));
    });
}

#[test]
fn wait_idle_async_stays_pending_while_a_job_runs() {
    watchdog("wait_idle_async behind a held job", || {
        let e = exec(1);
        let (gate, ran) = (Gate::default(), Arc::new(AtomicUsize::new(0)));
        gated_jobs(&e, 1, &gate, &ran);
        let mut idle = e.wait_idle_async();
        assert!(poll_once(&mut idle).is_pending());
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            poll_once(&mut idle).is_pending(),
            "the job waits for the gate"
        );
        gate.open();
        ::futures::executor::block_on(idle);
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn resolves_after_terminated_too() {
    watchdog("wait_idle_async after the end", || {
        let e = exec(1);
        e.shutdown();
        ::futures::executor::block_on(e.wait_idle_async());
        ::futures::executor::block_on(e.shutdown_async());
        assert!(e.is_terminated());
    });
}

#[test]
fn awaited_on_its_own_worker_each_follows_the_rule_for_a_job() {
    watchdog("the async ends in a future of spawn_future", || {
        let e = exec(2);
        let (gate, ran) = (Gate::default(), Arc::new(AtomicUsize::new(0)));
        gated_jobs(&e, 1, &gate, &ran);
        let opener = {
            let gate = gate.clone();
            std::thread::spawn(move || gate.open())
        };
        let inner = e.clone();
        let task = e
            .spawn_future(P, async move {
                // Waits for everything but this task, then shuts down
                // without waiting for its own worker.
                inner.wait_idle_async().await;
                inner.shutdown_async().await;
                inner.is_shut_down()
            })
            .unwrap();
        assert_eq!(task.join(), Ok(true));
        opener.join().unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        // From outside, a shutdown joins the worker that ran the task.
        ::futures::executor::block_on(e.shutdown_async());
        assert!(e.is_terminated());
    });
}
