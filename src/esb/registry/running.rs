//! An executor of the registry, shared by the table and by whoever is
//! between looking it up and queueing into it, and retired by the last of
//! them to let go.
//!
//! A reload swaps the table without waiting for anyone: a producer that
//! looked an executor up just before may still be blocked on one of its
//! full lanes. Shutting the executor down then would refuse that producer's
//! message. Instead the reload marks the executor *retiring* and drops the
//! table's reference; whoever drops the last reference hands the executor
//! over a channel to the thread that retires it, which shuts it down
//! gracefully (every accepted job runs). Nobody ever shuts an executor down
//! inline on the way out of an enqueue, so a worker that enqueues into the
//! registry never ends up waiting for itself.

use crate::Executor;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::mpsc::{SendError, Sender};
use std::sync::{Arc, OnceLock};

/// An executor of the registry (see the module's documentation).
pub(crate) struct Running {
    /// Always `Some` until dropped.
    executor: Option<Executor>,
    /// Where the last reference sends the executor once it is retired.
    retire: OnceLock<Sender<Executor>>,
}

impl Running {
    pub(crate) fn new(executor: Executor) -> Arc<Self> {
        Arc::new(Running {
            executor: Some(executor),
            retire: OnceLock::new(),
        })
    }

    /// Marks the executor retired: once the last reference is dropped, it
    /// goes to `to`, to be shut down there.
    pub(crate) fn retire_to(&self, to: Sender<Executor>) {
        // Retired once: an executor leaves the table only once.
        let _ = self.retire.set(to);
    }

    pub(crate) fn executor(&self) -> &Executor {
        self.executor
            .as_ref()
            .expect("an executor is only taken out when dropped")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let Some(executor) = self.executor.take() else {
            return;
        };
        match self.retire.get() {
            Some(to) => {
                // The retiring side gone (its thread could not start), the
                // executor drains here.
                if let Err(SendError(executor)) = to.send(executor) {
                    drop(executor);
                }
            }
            // Never retired: only a registry torn down mid-way drops one.
            None => drop(executor),
        }
    }
}

/// One of the registry's executors, from [`Executors::get`](crate::Executors::get).
///
/// It dereferences to the [`Executor`]. It borrows the registry, and it
/// keeps its executor running: an executor a reload retires while it is
/// held goes on taking jobs through it, and shuts down (running every job
/// it accepted) only once it is dropped, so
/// [`Reload::wait`](crate::Reload::wait) waits for it too.
///
/// # Examples
///
/// ```
/// use priority_executor::{Executors, Priority};
///
/// let executors = Executors::from_toml_str("[executors.a]\nlanes = [{ priority = 3 }]\n")?;
/// let a = executors.get("a").expect("declared");
/// assert_eq!(a.name(), "a");
/// assert_eq!(a.enqueue(Priority(3), || 6 * 7).unwrap().join(), Ok(42));
/// drop(a);
/// executors.shutdown();
/// # Ok::<(), priority_executor::ConfigError>(())
/// ```
pub struct ExecutorRef<'a> {
    running: Arc<Running>,
    registry: PhantomData<&'a ()>,
}

impl ExecutorRef<'_> {
    pub(crate) fn new(running: Arc<Running>) -> Self {
        ExecutorRef {
            running,
            registry: PhantomData,
        }
    }
}

/// Dropping it may be what lets a retired executor drain. Declared so that
/// the borrow of the registry lasts until the drop: the registry cannot be
/// shut down (which waits for its executors) while this is held.
impl Drop for ExecutorRef<'_> {
    fn drop(&mut self) {}
}

impl Deref for ExecutorRef<'_> {
    type Target = Executor;

    fn deref(&self) -> &Executor {
        self.running.executor()
    }
}

impl fmt::Debug for ExecutorRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.running.executor(), f)
    }
}
