//! Helpers of the `stress` and `destructors` tests: a seeded PRNG, a
//! watchdog that turns a hang into a failure with a thread dump, and a look
//! at this process's threads.
#![allow(dead_code)]

use std::io::Write;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// splitmix64: tiny, seedable, good enough to pick random operations.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next_u64() % den < num
    }
}

/// A seed that differs from run to run (printed, so a failure replays).
pub fn time_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5EED)
}

/// Runs `round` `STRESS_ROUNDS` times (`default` if unset), each time
/// with its round number and a seed drawn from `STRESS_SEED` (the time if
/// unset; printed, so a failure replays), under a watchdog of `limit` that
/// names `what`, the round and the seeds if the round hangs.
pub fn seeded_rounds(
    what: &str,
    default: usize,
    limit: Duration,
    mut round: impl FnMut(u64, usize),
) {
    let seed = std::env::var("STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(time_seed);
    let rounds = std::env::var("STRESS_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    println!("STRESS_SEED={seed} STRESS_ROUNDS={rounds}");
    let mut rng = Rng::new(seed);
    for r in 0..rounds {
        let round_seed = rng.next_u64();
        let watchdog = Watchdog::start(
            limit,
            format!("{what} round {r} (STRESS_SEED={seed}, round seed {round_seed}) hung"),
        );
        round(round_seed, r);
        watchdog.finish();
    }
}

/// The threads of this process whose name starts with `prefix`, as
/// `(tid, name, state)`. Linux names are cut to 15 bytes, so keep prefixes
/// short.
pub fn threads_named(prefix: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return found;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let comm = comm.trim_end().to_owned();
        if comm.starts_with(prefix) {
            found.push((
                task.file_name().to_string_lossy().into_owned(),
                comm,
                thread_state(&path),
            ));
        }
    }
    found
}

fn thread_state(task: &std::path::Path) -> String {
    let stat = std::fs::read_to_string(task.join("stat")).unwrap_or_default();
    // The state follows the parenthesised name, which may hold spaces.
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next())
        .unwrap_or("?")
        .to_owned();
    let wchan = std::fs::read_to_string(task.join("wchan")).unwrap_or_default();
    format!("{state} wchan={wchan}")
}

/// Fails the whole test process, with a thread dump, if `finish` is not
/// called within `limit`. A hang in a concurrency test is a bug; it should
/// read as one, not as a CI timeout.
pub struct Watchdog {
    done: mpsc::Sender<()>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Watchdog {
    pub fn start(limit: Duration, what: String) -> Watchdog {
        let (done, rx) = mpsc::channel::<()>();
        let thread = thread::Builder::new()
            .name("watchdog".into())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                    // Written straight to stderr: the test harness captures
                    // only the print macros, and we are about to exit.
                    let mut err = std::io::stderr().lock();
                    let _ = writeln!(err, "\nWATCHDOG: {what} (no progress for {limit:?})");
                    let _ = writeln!(err, "threads (tid, name, state):");
                    for t in threads_named("") {
                        let _ = writeln!(err, "  {t:?}");
                    }
                    dump_stacks(&mut err);
                    let _ = err.flush();
                    std::process::exit(1);
                }
            })
            .expect("spawn watchdog");
        Watchdog {
            done,
            thread: Some(thread),
        }
    }

    pub fn finish(mut self) {
        let _ = self.done.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Stack traces of every thread, from `eu-stack` or `gdb` if installed.
fn dump_stacks(err: &mut impl Write) {
    let pid = std::process::id().to_string();
    let tries: [(&str, Vec<&str>); 2] = [
        ("eu-stack", vec!["-p", &pid]),
        (
            "gdb",
            vec!["-p", &pid, "-batch", "-ex", "thread apply all bt"],
        ),
    ];
    for (tool, args) in tries {
        if let Ok(out) = std::process::Command::new(tool).args(&args).output() {
            let _ = writeln!(err, "--- {tool} ---");
            let _ = err.write_all(&out.stdout);
            let _ = err.write_all(&out.stderr);
            return;
        }
    }
    let _ = writeln!(err, "(no eu-stack or gdb for stack traces)");
}
