//! Idle shutdown's quiet period (rule 11 of `README.md`): the clock it is
//! measured by. Stages use real time; the unit tests drive a manual clock,
//! so that "a message inside the quiet period postpones the stop" is
//! checked as an outcome, with no timing in the test.

use super::signal::Signal;
use std::time::{Duration, Instant};

/// The clock a stage's quiet period is measured by.
#[derive(Clone, Default)]
pub(crate) enum Clock {
    /// `Instant::now()`.
    #[default]
    Real,
    /// Time that moves only when a test moves it.
    #[cfg(test)]
    Manual(std::sync::Arc<manual::ManualClock>),
}

impl Clock {
    /// Waits on `ready` until `changed()` holds or `quiet` has passed;
    /// returns the last answer of `changed()` (false: the period ran out).
    pub(crate) fn wait_quiet(
        &self,
        ready: &Signal,
        quiet: Duration,
        changed: impl Fn() -> bool,
    ) -> bool {
        match self {
            Clock::Real => ready.wait(Instant::now().checked_add(quiet), changed),
            #[cfg(test)]
            Clock::Manual(clock) => clock.wait_quiet(ready, quiet, changed),
        }
    }
}

#[cfg(test)]
pub(crate) mod manual {
    use super::Signal;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    /// What a waiting instance found when it looked at the clock.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct Check {
        /// The clock's time, in milliseconds since it was made.
        pub(crate) at: u64,
        /// Its quiet period had run out.
        pub(crate) over: bool,
    }

    /// A clock in milliseconds that moves only on [`advance`]; every look a
    /// waiting instance takes at it is logged, so a test can wait until an
    /// instance has seen a time and read what it decided.
    ///
    /// [`advance`]: ManualClock::advance
    #[derive(Default)]
    pub(crate) struct ManualClock {
        now_ms: AtomicU64,
        checks: Mutex<Vec<Check>>,
        checked: Condvar,
    }

    impl ManualClock {
        pub(super) fn wait_quiet(
            &self,
            ready: &Signal,
            quiet: Duration,
            changed: impl Fn() -> bool,
        ) -> bool {
            let quiet = u64::try_from(quiet.as_millis()).unwrap_or(u64::MAX);
            // ORDERING: SeqCst, as every condition of a `Signal` (its
            // module docs): `advance` makes it true with a SeqCst RMW.
            let deadline = self.now_ms.load(Ordering::SeqCst).saturating_add(quiet);
            ready.wait(None, || {
                if changed() {
                    return true;
                }
                let at = self.now_ms.load(Ordering::SeqCst);
                let over = at >= deadline;
                self.log(Check { at, over });
                over
            });
            changed()
        }

        fn log(&self, check: Check) {
            self.checks.lock().expect("clock log").push(check);
            self.checked.notify_all();
        }

        /// Moves the clock on; the caller then wakes the stage's waiters.
        pub(crate) fn advance(&self, d: Duration) {
            let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
            self.now_ms.fetch_add(ms, Ordering::SeqCst);
        }

        /// Waits until, after the first `skip` looks, `n` were taken at
        /// `at` or later, or one of them found its period over; returns
        /// those looks.
        pub(crate) fn looks_from(&self, skip: usize, at: u64, n: usize) -> Vec<Check> {
            let since = |c: &Vec<Check>| -> Vec<Check> {
                c.iter()
                    .skip(skip)
                    .filter(|c| c.at >= at)
                    .copied()
                    .collect()
            };
            let checks = self.checks.lock().expect("clock log");
            let checks = self
                .checked
                .wait_while(checks, |c| {
                    let seen = since(c);
                    seen.len() < n && !seen.iter().any(|c| c.over)
                })
                .expect("clock log");
            since(&checks)
        }

        /// Waits for a look, after the first `skip`, equal to `check`.
        pub(crate) fn wait_for(&self, skip: usize, check: Check) {
            let checks = self.checks.lock().expect("clock log");
            drop(
                self.checked
                    .wait_while(checks, |c| !c.iter().skip(skip).any(|c| *c == check))
                    .expect("clock log"),
            );
        }

        /// How many looks have been logged.
        pub(crate) fn looks(&self) -> usize {
            self.checks.lock().expect("clock log").len()
        }

        /// Waits for a look, after the first `skip`, taken at `at` or
        /// later, and returns it.
        pub(crate) fn look_at(&self, skip: usize, at: u64) -> Check {
            let checks = self.checks.lock().expect("clock log");
            let checks = self
                .checked
                .wait_while(checks, |c| !c.iter().skip(skip).any(|c| c.at >= at))
                .expect("clock log");
            checks
                .iter()
                .skip(skip)
                .find(|c| c.at >= at)
                .copied()
                .expect("waited for")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Clock;
    use super::manual::{Check, ManualClock};
    use crate::actor::{Actor, ActorError, Outbox, Reason, SendError, Stage};
    use std::sync::{Arc, Mutex, mpsc};
    use std::time::Duration;

    /// Reports each message it performs.
    struct Echo(mpsc::Sender<u32>);

    impl Actor for Echo {
        type In = u32;
        type Out = ();
        fn perform(&mut self, n: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
            self.0.send(n)?;
            Ok(())
        }
    }

    const MS: Duration = Duration::from_millis(1);

    /// Reports each message it starts; holds message 1 until released.
    struct Latched {
        started: mpsc::Sender<u32>,
        release: Arc<Mutex<mpsc::Receiver<()>>>,
    }

    impl Actor for Latched {
        type In = u32;
        type Out = ();
        fn perform(&mut self, n: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
            self.started.send(n)?;
            if n == 1 {
                self.release.lock().map_err(|_| "poisoned")?.recv()?;
            }
            Ok(())
        }
    }

    /// Rule 11 with two instances: while one performs for longer than the
    /// idle period, the other's quiet period runs out and restarts; the
    /// stage's quiet period must then count from the end of that perform,
    /// not from the idle instance's last restart.
    #[test]
    fn with_two_instances_the_quiet_period_counts_from_the_end_of_the_last_perform() {
        let (done_tx, done) = mpsc::channel();
        let scenario = std::thread::spawn(move || {
            let clock = Arc::new(ManualClock::default());
            let (started_tx, started) = mpsc::channel();
            let (release_tx, release) = mpsc::channel::<()>();
            let release = Arc::new(Mutex::new(release));
            let stage = Stage::builder("idle-two", move |_| Latched {
                started: started_tx.clone(),
                release: release.clone(),
            })
            .instances(2)
            .idle_after(100 * MS)
            .idle_clock(Clock::Manual(clock.clone()))
            .spawn()
            .expect("spawn");
            // Dropped before the stage, should an assertion fail.
            let release_tx = release_tx;
            let advance = |ms: u32| {
                clock.advance(ms * MS);
                stage.wake();
            };
            // Both instances wait out a period due to end at 100.
            clock.looks_from(0, 0, 2);
            stage.addr().send(1).expect("accepted");
            assert_eq!(started.recv(), Ok(1), "one instance holds message 1");
            // The other is back in its wait (due to end at 100).
            while stage.waiting() != 1 {
                std::thread::yield_now();
            }
            // At 100 the idle instance's period runs out while the other
            // performs: the stage stays, and the idle one waits again, due
            // to end at 200.
            let before = clock.looks();
            advance(100);
            clock.wait_for(
                before,
                Check {
                    at: 100,
                    over: true,
                },
            );
            clock.wait_for(
                before,
                Check {
                    at: 100,
                    over: false,
                },
            );
            assert_eq!(stage.finished(), None, "a perform is running");
            // At 150 the perform ends, and both instances wait.
            advance(50);
            release_tx.send(()).expect("release");
            while stage.metrics().running != 0 || stage.waiting() != 2 {
                std::thread::yield_now();
            }
            // At 200, 50 after the perform ended, no quiet period is over.
            let before = clock.looks();
            advance(50);
            let looks = clock.looks_from(before, 200, 2);
            assert!(
                looks.iter().all(|c| !c.over),
                "the stage went idle 50 after its last perform, with a period of 100: {looks:?}"
            );
            assert_eq!(stage.finished(), None);
            // Past 100 after the perform ended, it is.
            advance(100);
            let exit = stage.join();
            assert_eq!(exit.reason, Reason::Idle);
            assert_eq!(exit.metrics.performed, 1);
            let _ = done_tx.send(());
        });
        match done.recv_timeout(Duration::from_secs(20)) {
            Ok(()) => scenario.join().expect("scenario"),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::panic::resume_unwind(scenario.join().expect_err("the scenario failed"))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("HANG: the idle scenario did not finish within 20 s")
            }
        }
    }

    #[test]
    fn a_message_inside_the_quiet_period_postpones_the_stop() {
        let clock = Arc::new(ManualClock::default());
        let (tx, performed) = mpsc::channel();
        let stage = Stage::builder("idle", move |_| Echo(tx.clone()))
            .idle_after(100 * MS)
            .idle_clock(Clock::Manual(clock.clone()))
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        let advance = |ms: u32| {
            clock.advance(ms * MS);
            stage.wake();
        };

        // At 0 the stage waits out its quiet period, due to end at 100.
        assert_eq!(clock.look_at(0, 0), Check { at: 0, over: false });
        // At 60, inside it, a message arrives: the period starts again.
        advance(60);
        let before = clock.looks();
        addr.send(1).expect("accepted inside the quiet period");
        assert_eq!(performed.recv(), Ok(1));
        assert_eq!(
            clock.look_at(before, 60),
            Check {
                at: 60,
                over: false
            }
        );
        // At 100 the first period would have run out: the stage still
        // waits, and takes a message.
        let before = clock.looks();
        advance(40);
        assert_eq!(
            clock.look_at(before, 100),
            Check {
                at: 100,
                over: false
            },
            "the message at 60 postponed the stop"
        );
        assert_eq!(stage.finished(), None);
        let before = clock.looks();
        addr.send(2).expect("accepted: the stage is not idle");
        assert_eq!(performed.recv(), Ok(2));
        // Nothing more: 100 after the last message, the stage ends.
        assert_eq!(
            clock.look_at(before, 100),
            Check {
                at: 100,
                over: false
            }
        );
        advance(99);
        assert_eq!(
            clock.look_at(before, 199),
            Check {
                at: 199,
                over: false
            }
        );
        advance(1);
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Idle);
        assert_eq!(
            clock.look_at(0, 200),
            Check {
                at: 200,
                over: true
            }
        );
        assert_eq!((exit.metrics.performed, exit.metrics.offered), (2, 2));
        assert!(exit.metrics.is_balanced());
        assert!(matches!(
            addr.send(3).unwrap_err(),
            SendError::ShutDown { .. }
        ));
    }
}
