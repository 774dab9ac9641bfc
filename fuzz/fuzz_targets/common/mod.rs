//! What the fuzz targets share: the panic hook that lets deliberate panics
//! through, the per-item records of calls and drops, and the watchdog that
//! turns a hang into a finding.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// Every deliberate panic's message starts with this.
pub const PANIC_MESSAGE: &str = "fuzz: deliberate panic";

/// How long one input may run before the watchdog calls it a hang.
pub const HANG_LIMIT: Duration = Duration::from_secs(30);

/// Is this panic message one of ours?
pub fn is_deliberate(message: &str) -> bool {
    message.starts_with(PANIC_MESSAGE)
}

/// Installs, once, a panic hook that lets deliberate panics through (the
/// code under test catches them) and aborts on any other, as libFuzzer
/// expects; and starts the watchdog.
pub fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let text = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            if !text.is_some_and(is_deliberate) {
                previous(info);
                // A failed check on a worker or an instance thread is
                // caught there: abort so that it is a finding all the same.
                std::process::abort();
            }
        }));
        std::thread::Builder::new()
            .name("fuzz-watchdog".into())
            .spawn(watchdog)
            .expect("watchdog thread");
        if cfg!(priority_executor_no_recycle) {
            eprintln!("fuzz: built with --cfg priority_executor_no_recycle: job cells go to the allocator");
        } else {
            eprintln!("fuzz: built WITHOUT --cfg priority_executor_no_recycle: job cells are recycled, leak checks see less");
        }
    });
}

/// Input number (odd while one runs) and the step it is at.
static INPUT: AtomicU64 = AtomicU64::new(0);
static STEP: AtomicUsize = AtomicUsize::new(0);
static STEP_NAMES: Mutex<[&str; 1]> = Mutex::new([""]);

/// Names the step the input is at, for the watchdog's message.
pub fn step(name: &'static str) {
    STEP.fetch_add(1, Ordering::Relaxed);
    *STEP_NAMES.lock().unwrap_or_else(|p| p.into_inner()) = [name];
}

/// Marks the start and the end of one input, for the watchdog.
pub struct Running;

impl Running {
    pub fn start() -> Running {
        INPUT.fetch_add(1, Ordering::SeqCst);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        INPUT.fetch_add(1, Ordering::SeqCst);
    }
}

fn watchdog() {
    let mut seen = INPUT.load(Ordering::SeqCst);
    let mut since = Instant::now();
    loop {
        // Not synchronisation: the watchdog looks now and then, and only
        // acts on an input that has run for far longer than any should.
        std::thread::sleep(Duration::from_millis(250));
        let now = INPUT.load(Ordering::SeqCst);
        if now != seen {
            seen = now;
            since = Instant::now();
        } else if now % 2 == 1 && since.elapsed() > HANG_LIMIT {
            let name = STEP_NAMES.lock().unwrap_or_else(|p| p.into_inner())[0];
            eprintln!(
                "fuzz: HANG: one input has run for more than {HANG_LIMIT:?}, stuck at step {:?} (step #{})",
                name,
                STEP.load(Ordering::Relaxed)
            );
            std::process::abort();
        }
    }
}

/// Per job, future or letter: calls (or polls, or performs) and drops of
/// the closure or message, and clones of a message.
#[derive(Default, Debug)]
pub struct Record {
    pub calls: AtomicUsize,
    pub drops: AtomicUsize,
    pub clones: AtomicUsize,
    /// Letters: performs that succeeded.
    pub ok: AtomicUsize,
    /// Letters: times handed back to the sender.
    pub back: AtomicUsize,
}

impl Record {
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
    pub fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }
    pub fn clones(&self) -> usize {
        self.clones.load(Ordering::SeqCst)
    }
    pub fn ok(&self) -> usize {
        self.ok.load(Ordering::SeqCst)
    }
    pub fn back(&self) -> usize {
        self.back.load(Ordering::SeqCst)
    }
}

/// Counts its drop in its record; clones count as new copies.
#[derive(Debug)]
pub struct Guard(pub Arc<Record>);

impl Guard {
    pub fn new() -> (Guard, Arc<Record>) {
        let record = Arc::new(Record::default());
        (Guard(Arc::clone(&record)), record)
    }
    pub fn called(&self) {
        self.0.calls.fetch_add(1, Ordering::SeqCst);
    }
}

impl Clone for Guard {
    fn clone(&self) -> Self {
        self.0.clones.fetch_add(1, Ordering::SeqCst);
        Guard(Arc::clone(&self.0))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// Waits until no thread whose name starts with `prefix` is left in this
/// process (Linux: `/proc/self/task/*/comm`). Returns the names of those
/// still there after 100 ms: workers that outlived their executor's
/// shutdown, which libFuzzer's leak check would otherwise report as the
/// threads' memory (their `Thread` handles and names) still allocated when
/// the input ends. A thread just joined may still be listed for a moment
/// (`pthread_join` returns when the kernel clears its id, before the task
/// is released), hence the grace period before it counts.
pub fn wait_threads_gone(prefix: &str) -> Vec<String> {
    let start = Instant::now();
    let mut first: Option<Vec<String>> = None;
    loop {
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
            return Vec::new();
        };
        let alive: Vec<String> = tasks
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
            .filter(|name| name.starts_with(prefix))
            .map(|name| name.trim_end().to_owned())
            .collect();
        if alive.is_empty() {
            return first.unwrap_or_default();
        }
        if start.elapsed() > Duration::from_millis(100) {
            first.get_or_insert(alive);
        }
        // Not synchronisation: nothing to wait on for a detached thread's
        // exit; the watchdog bounds the wait.
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether to drive the paths of the findings the README lists (all
/// fixed now): on unless `PRIORITY_EXECUTOR_FUZZ_KNOWN=0`, which steps
/// around them, should one come back while a long run looks for new ones.
pub fn known_bugs() -> bool {
    static KNOWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KNOWN.get_or_init(|| std::env::var_os("PRIORITY_EXECUTOR_FUZZ_KNOWN").is_none_or(|v| v != "0"))
}
