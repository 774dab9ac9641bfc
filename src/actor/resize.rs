//! Instances that come and go (rule 26 of `README.md`): what a stage
//! keeps to make instances after `spawn` (its factory and settings), and
//! the resize itself. The handle's method is in `stage.rs`, the resizer
//! that calls it by the mailbox's depth in `resizer.rs`.

use super::actor::Actor;
use super::current::Holding;
use super::error::ResizeError;
use super::instance::{self, Settings};
use super::letters::Phase;
use super::outcome::{fault, panicked};
use super::reason::Reason;
use super::shared::Core;
use crate::error::InvalidSetting;
use crate::executor::Executor;
use crate::sync::{Mutex, lock};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The most instances a stage has: each is a thread of the stage's own
/// executor.
pub const MAX_INSTANCES: usize = 1024;

/// A stage's instance factory: called with the new instance's index.
pub(crate) type Factory<A> = Box<dyn FnMut(usize) -> A + Send>;

/// A spawned stage.
pub(crate) struct Spawned<A: Actor> {
    /// What its instances share.
    pub(crate) core: Arc<Core<A::In>>,
    pub(crate) exec: Executor,
    /// What it keeps to add instances.
    pub(crate) grow: Arc<Grow<A>>,
    /// The thread of its resizer's checks, if it has one.
    pub(crate) resizer: Option<JoinHandle<()>>,
}

/// What a stage keeps to add instances once it runs. The factory's lock
/// also makes resizes one at a time.
pub(crate) struct Grow<A: Actor> {
    factory: Mutex<Factory<A>>,
    settings: Arc<Settings<A>>,
}

impl<A: Actor> Grow<A> {
    pub(crate) fn new(factory: Factory<A>, settings: Arc<Settings<A>>) -> Grow<A> {
        Grow {
            factory: Mutex::new(factory),
            settings,
        }
    }

    /// Makes the stage `n` instances: asks the surplus to leave, or makes
    /// the missing ones (on this thread) and waits for their `init`.
    /// Returns the stage's size then.
    pub(crate) fn resize(
        &self,
        core: &Arc<Core<A::In>>,
        exec: &Executor,
        n: usize,
    ) -> Result<usize, ResizeError> {
        check(n)?;
        self.resize_by(core, exec, |_| n)
    }

    /// Makes the stage `target(size)` instances, `size` being its size
    /// read under the factory's lock, so that no other resize comes
    /// between the reading and the resize (the resizer's step).
    pub(crate) fn resize_by(
        &self,
        core: &Arc<Core<A::In>>,
        exec: &Executor,
        target: impl FnOnce(usize) -> usize,
    ) -> Result<usize, ResizeError> {
        let ending = || ResizeError::Ending {
            stage: core.mb.name.clone(),
        };
        // Rule 26: the factory, or an `init` this resize waits for, that
        // resized the same stage would wait for itself.
        let Some(entered) = Holding::enter(core.mb.id()) else {
            return Err(ResizeError::Reentrant {
                stage: core.mb.name.clone(),
            });
        };
        let mut factory = lock(&self.factory);
        if core.mb.is_closed() || core.finished().is_some() {
            return Err(ending());
        }
        let size = core.size();
        let n = target(size);
        check(n)?;
        if n < size {
            core.remove(size - n);
            core.mb.resized();
            fit_threads(exec, n, core.running());
            return Ok(n);
        }
        if n == size {
            return Ok(n);
        }
        // No instance serves nor will: every one started has run `init`
        // and none is left (every `init` of the spawn failed, say). The
        // stage is ending; an instance added now would revive it.
        if core.serves_none() {
            return Err(ending());
        }
        // Removals asked for and not yet taken are taken back first: the
        // instances asked to leave stay, and only the rest is made.
        let size = size + core.take_back(n - size);
        if size == n {
            core.mb.resized();
            fit_threads(exec, n, core.running());
            return Ok(n);
        }
        // A thread for every job running (instances leaving included,
        // until they are gone) and for every new instance.
        fit_threads(exec, n, core.running() + (n - size));
        let mut added = 0;
        // Faults of the factory, handed out once the lock is released.
        let mut failed = Vec::new();
        for _ in size..n {
            // `None`: the stage's last instance is exiting; nothing starts.
            let Some(index) = core.add_instance() else {
                break;
            };
            added += 1;
            let factory = &mut *factory;
            match catch_unwind(AssertUnwindSafe(|| factory(index))) {
                Ok(actor) => instance::start(core, &self.settings, exec, actor, index),
                Err(payload) => {
                    // Reported as a failed `init` of that instance: the
                    // stage serves on with the others.
                    failed.push((index, format!("factory {}", panicked(payload))));
                    core.init_done(false);
                    core.exited(index, Reason::FailedInit);
                }
            }
        }
        core.wait_inits();
        core.mb.resized();
        let size = core.size();
        fit_threads(exec, size, core.running());
        drop(factory);
        drop(entered);
        for (index, error) in failed {
            fault(core, index, Phase::Init, error, 0, None, None);
        }
        if added == 0 {
            return Err(ending());
        }
        Ok(size)
    }
}

/// A size `resize` accepts.
fn check(n: usize) -> Result<(), ResizeError> {
    if (1..=MAX_INSTANCES).contains(&n) {
        Ok(())
    } else {
        Err(InvalidSetting::range("instances", n, 1, MAX_INSTANCES).into())
    }
}

/// Keeps `size` threads, and up to `running` while jobs run: a thread
/// above `size` leaves once idle for the executor's keep-alive.
fn fit_threads(exec: &Executor, size: usize, running: usize) {
    let max = running.max(size).max(1);
    // Cannot fail: 1 <= size <= max.
    let _ = exec.set_threads(size.clamp(1, max), max);
}
