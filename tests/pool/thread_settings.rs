//! Worker thread customisation, as rayon's `ThreadPoolBuilder` offers: a
//! stack size, a name function, and hooks run on each worker as it starts
//! and before it exits. Hooks and name functions that panic, and names a
//! thread cannot take, never cost a worker or a job.

use crate::common::wait_until;
use priority_executor::{Capacity, Executor, ExecutorBuilder, Priority};
use std::cell::Cell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const P: Priority = Priority(1);

fn builder(threads: usize) -> ExecutorBuilder {
    Executor::builder()
        .name("custom")
        .core_threads(threads)
        .max_threads(threads)
        .lane(P, Capacity::Unbounded)
}

fn worker_name(exec: &Executor) -> String {
    exec.enqueue(P, || std::thread::current().name().map(str::to_owned))
        .unwrap()
        .join()
        .unwrap()
        .expect("workers are named")
}

#[test]
fn the_name_function_names_every_worker() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let exec = builder(2)
        .thread_name(move |n| {
            record.lock().unwrap().push(n);
            format!("io-{n}")
        })
        .build()
        .unwrap();
    assert_eq!(exec.prestart_core_threads(), 2);
    let numbers = seen.lock().unwrap().clone();
    assert_eq!(numbers, vec![1, 2]);
    assert!(worker_name(&exec).starts_with("io-"));
}

#[test]
fn a_name_with_a_nul_byte_falls_back_to_the_default_and_the_job_runs() {
    let exec = builder(1)
        .thread_name(|n| format!("bad\0{n}"))
        .build()
        .unwrap();
    assert_eq!(worker_name(&exec), "custom-1");
}

#[test]
fn a_panicking_name_function_falls_back_to_the_default_and_the_job_runs() {
    let exec = builder(1)
        .thread_name(|_| panic!("no name for you"))
        .build()
        .unwrap();
    assert_eq!(worker_name(&exec), "custom-1");
}

#[test]
fn a_large_stack_size_lets_jobs_use_large_frames() {
    // 8 MiB on the stack: more than a default thread's 2 MiB.
    let exec = builder(1).stack_size(64 << 20).build().unwrap();
    let len = exec
        .enqueue(P, || {
            let buf = std::hint::black_box([7u8; 8 << 20]);
            buf.len()
        })
        .unwrap();
    assert_eq!(len.join(), Ok(8 << 20));
    assert_eq!(exec.config().stack_size, Some(64 << 20));
}

thread_local!(static STARTED_HERE: Cell<bool> = const { Cell::new(false) });

#[test]
fn start_hooks_run_on_each_worker_before_its_jobs_and_stop_hooks_before_shutdown_returns() {
    let started = Arc::new(Mutex::new(HashSet::new()));
    let stopped = Arc::new(Mutex::new(HashSet::new()));
    let (s, t) = (Arc::clone(&started), Arc::clone(&stopped));
    let exec = builder(3)
        .on_thread_start(move || {
            STARTED_HERE.with(|c| c.set(true));
            s.lock().unwrap().insert(std::thread::current().id());
        })
        .on_thread_stop(move || {
            t.lock().unwrap().insert(std::thread::current().id());
        })
        .build()
        .unwrap();
    let handles: Vec<_> = (0..30)
        .map(|_| exec.enqueue(P, || STARTED_HERE.with(Cell::get)).unwrap())
        .collect();
    for h in handles {
        assert_eq!(
            h.join(),
            Ok(true),
            "a job ran before its worker's start hook"
        );
    }
    assert!(!started.lock().unwrap().is_empty());
    exec.shutdown();
    let started = started.lock().unwrap().clone();
    let stopped = stopped.lock().unwrap().clone();
    assert_eq!(
        started, stopped,
        "every worker started is stopped, on its own thread"
    );
}

#[test]
fn panicking_thread_hooks_are_caught() {
    let stops = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&stops);
    let exec = builder(2)
        .on_thread_start(|| panic!("start hook"))
        .on_thread_stop(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            panic!("stop hook");
        })
        .build()
        .unwrap();
    assert_eq!(exec.prestart_core_threads(), 2);
    for i in 0..10 {
        assert_eq!(exec.enqueue(P, move || i).unwrap().join(), Ok(i));
    }
    wait_until("both workers alive", || exec.metrics().threads.live == 2);
    exec.shutdown();
    assert_eq!(stops.load(Ordering::SeqCst), 2);
    assert_eq!(exec.metrics().threads.live, 0);
}
