//! Helpers shared by the integration tests: gates and latches, never sleeps.
#![allow(dead_code)]

use priority_executor::{Executor, JobOptions, LaneConfig, Priority};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
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

/// Options that never wait for room: a full lane refuses the job at once.
pub fn no_wait() -> JobOptions {
    JobOptions::new().wait_at_most(Duration::ZERO)
}

/// Options that wait at most `timeout` for room in a full lane.
pub fn wait_at_most(timeout: Duration) -> JobOptions {
    JobOptions::new().wait_at_most(timeout)
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

/// Runs `f` on its own thread and returns its result; panics with `what`
/// if it does not finish within `limit` (the thread is then leaked), and
/// re-raises its panic if it panicked.
pub fn within<T: Send + 'static>(
    what: &str,
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done_tx, done) = mpsc::channel();
    let runner = thread::Builder::new()
        .name(format!("watched: {what}"))
        .spawn(move || {
            let _ = done_tx.send(f());
        })
        .expect("spawn the watched thread");
    match done.recv_timeout(limit) {
        Ok(value) => {
            let _ = runner.join();
            value
        }
        Err(RecvTimeoutError::Timeout) => {
            panic!("HANG: {what} did not finish within {limit:?} (its thread is leaked)")
        }
        Err(RecvTimeoutError::Disconnected) => match runner.join() {
            Err(payload) => panic!("{what} panicked: {}", panic_text(payload.as_ref())),
            Ok(()) => unreachable!("the watched thread sends its result before it ends"),
        },
    }
}

pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_owned())
}

/// Hides the panics a test causes on purpose: those whose message starts
/// with `prefix`. Any other panic is reported as usual. One hook for the
/// whole test binary, however many prefixes are added.
pub fn quiet_panics(prefix: &'static str) {
    static PREFIXES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    static HOOK: std::sync::Once = std::sync::Once::new();
    {
        let mut prefixes = PREFIXES.lock().unwrap_or_else(|p| p.into_inner());
        if !prefixes.contains(&prefix) {
            prefixes.push(prefix);
        }
    }
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let text = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            let quiet = text.is_some_and(|text| {
                let prefixes = PREFIXES.lock().unwrap_or_else(|p| p.into_inner());
                prefixes.iter().any(|p| text.starts_with(p))
            });
            if !quiet {
                default(info);
            }
        }));
    });
}

/// [`within`] a generous minute: a deadlock shows as a failure instead of
/// a hung test run. This asserts no timing.
pub fn watchdog<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    within(what, Duration::from_secs(60), f)
}
