//! A thread that races the script: it resizes the pool and wakes parked
//! futures when the script says so, while the script goes on.

use arbitrary::Arbitrary;
use priority_executor::{BuildError, Executor};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::task::Waker;
use std::thread::JoinHandle;
use std::time::Duration;

/// What `set_threads` says to a max of 0.
const NO_THREADS: &str = "max_threads = 0 is not allowed (expected at least 1)";

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Resize {
    Threads { core: u8, max: u8 },
    Core(u8),
    Max(u8),
    KeepAlive { zero: bool },
}

pub enum Command {
    Resize(Resize),
    Wake(Waker),
}

/// The thread and what it knows of the limits (it is the only one that
/// changes them).
pub struct Helper {
    tx: Option<mpsc::Sender<Command>>,
    thread: Option<JoinHandle<()>>,
    /// The largest `max_threads` ever set, raised before the change.
    pub max_ever: Arc<AtomicUsize>,
}

impl Helper {
    pub fn start(exec: Executor, core: usize, max: usize) -> Helper {
        let (tx, rx) = mpsc::channel::<Command>();
        let max_ever = Arc::new(AtomicUsize::new(max));
        let seen = Arc::clone(&max_ever);
        let thread = std::thread::Builder::new()
            .name("fuzz-helper".into())
            .spawn(move || {
                let (mut core, mut max) = (core, max);
                for command in rx {
                    match command {
                        Command::Wake(waker) => waker.wake(),
                        Command::Resize(r) => apply(&exec, r, &mut core, &mut max, &seen),
                    }
                }
            })
            .expect("helper thread");
        Helper {
            tx: Some(tx),
            thread: Some(thread),
            max_ever,
        }
    }

    pub fn send(&self, command: Command) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(command);
        }
    }

    /// Lets the thread finish what it was sent, and joins it.
    pub fn finish(&mut self) {
        drop(self.tx.take());
        if let Some(thread) = self.thread.take() {
            thread.join().expect("helper thread failed a check");
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.finish();
    }
}

fn apply(exec: &Executor, r: Resize, core: &mut usize, max: &mut usize, max_ever: &AtomicUsize) {
    match r {
        Resize::Threads { core: c, max: m } => {
            let (c, m) = (usize::from(c % 5), usize::from(m % 6));
            // ORDERING: SeqCst, read by the script's checks after they
            // read the pool's thread counts.
            max_ever.fetch_max(m, Ordering::SeqCst);
            let result = exec.set_threads(c, m).map_err(|e| e.to_string());
            let expected = if m == 0 {
                Err(NO_THREADS.to_owned())
            } else if c > m {
                Err(BuildError::CoreExceedsMax { core: c, max: m }.to_string())
            } else {
                Ok(())
            };
            assert_eq!(
                result, expected,
                "set_threads({c}, {m}) with ({core}, {max})"
            );
            if result.is_ok() {
                (*core, *max) = (c, m);
            }
        }
        Resize::Core(c) => {
            let c = usize::from(c % 5);
            let result = exec.set_threads(c, *max).map_err(|e| e.to_string());
            let expected = if c > *max {
                Err(BuildError::CoreExceedsMax { core: c, max: *max }.to_string())
            } else {
                Ok(())
            };
            assert_eq!(
                result, expected,
                "set_threads({c}, {max}) with ({core}, {max})"
            );
            if result.is_ok() {
                *core = c;
            }
        }
        Resize::Max(m) => {
            let m = usize::from(m % 6);
            // ORDERING: as above.
            max_ever.fetch_max(m, Ordering::SeqCst);
            let result = exec.set_threads(*core, m).map_err(|e| e.to_string());
            let expected = if m == 0 {
                Err(NO_THREADS.to_owned())
            } else if *core > m {
                Err(BuildError::CoreExceedsMax {
                    core: *core,
                    max: m,
                }
                .to_string())
            } else {
                Ok(())
            };
            assert_eq!(
                result, expected,
                "set_threads({core}, {m}) with ({core}, {max})"
            );
            if result.is_ok() {
                *max = m;
            }
        }
        Resize::KeepAlive { zero } => exec.set_keep_alive(if zero {
            Duration::ZERO
        } else {
            Duration::from_millis(20)
        }),
    }
    let config = exec.config();
    assert_eq!((config.core_threads, config.max_threads), (*core, *max));
}
