//! Helpers shared by the integration tests: gates and latches, never sleeps.
#![allow(dead_code)]

use priority_executor::{Executor, LaneConfig, Priority};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// An executor with one worker and the given lanes (priority, weight).
pub fn single_worker(lanes: &[(u32, u32)], picker: priority_executor::Picker) -> Executor {
    let mut b = Executor::builder()
        .name("test")
        .core_threads(1)
        .max_threads(1)
        .picker(picker);
    for &(p, w) in lanes {
        b = b.lane_config(LaneConfig::new(Priority(p)).weight(w));
    }
    b.build().expect("valid test executor")
}

/// Occupies one worker until the returned sender is dropped or sent to.
/// Returns once the gate job is running.
pub fn hold_worker(exec: &Executor, priority: Priority) -> mpsc::Sender<()> {
    let (started_tx, started) = mpsc::channel();
    let (release, gate) = mpsc::channel::<()>();
    let _detached = exec
        .enqueue(priority, move || {
            started_tx.send(()).ok();
            gate.recv().ok();
        })
        .expect("gate job accepted");
    started.recv().expect("gate job started");
    release
}

/// Waits until `cond` holds, failing the test after a generous limit. This
/// waits for an outcome; it asserts no timing.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let give_up = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < give_up, "gave up waiting for: {what}");
        std::thread::yield_now();
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A gate jobs wait on until the test opens it, once, for all of them.
#[derive(Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    pub fn wait(&self) {
        let (open, changed) = &*self.0;
        let mut open = open.lock().expect("gate lock");
        while !*open {
            open = changed.wait(open).expect("gate lock");
        }
    }

    pub fn open(&self) {
        *self.0.0.lock().expect("gate lock") = true;
        self.0.1.notify_all();
    }
}

/// Runs `f` on its own thread and returns its result, failing the test if
/// it has not finished after a generous limit: a deadlock shows as a
/// failure instead of a hung test run. This asserts no timing.
pub fn watchdog<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(value) => {
            worker.join().expect("watchdog thread");
            value
        }
        // The thread panicked: surface its panic.
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the thread sends before it returns"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("deadlock? still waiting for: {what}"),
    }
}
