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
