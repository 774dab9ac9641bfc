//! The executor's waits as futures: [`Executor::shutdown_async`] and
//! [`Executor::wait_idle_async`], each the blocking form run on a thread of
//! its own (`sync/ending.rs`).

use super::Executor;
use crate::pool::Shared;
use crate::sync::Arc;
use crate::sync::ending::{Begun, Ending};
use std::future::Future;

impl Executor {
    /// [`shutdown`](Executor::shutdown) as a future, for async code: any
    /// runtime can poll it, and it needs none. Its first poll closes the
    /// executor (no new job is accepted from then on, as
    /// [`is_shut_down`](Executor::is_shut_down) says) and starts the wait
    /// for the workers on a thread of its own, named after the executor;
    /// it resolves once every accepted job has run and the workers have
    /// exited and been joined: [`is_terminated`](Executor::is_terminated)
    /// holds then. The future is `'static`, `Send` and `Unpin`, and keeps
    /// no clone of the executor: it does not keep it open.
    ///
    /// Cancel-safe: dropping the future once polled leaves the shutdown
    /// running on its thread; dropped before its first poll, it did
    /// nothing.
    ///
    /// Awaited on one of the executor's own workers (a future of
    /// [`spawn_future`](Executor::spawn_future) on this executor), it
    /// follows the rule of `shutdown` called from a job: its first poll
    /// waits, on that worker, for every other worker to exit, and it is
    /// ready then. The calling worker exits once its task returns.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
    /// let ran = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..100 {
    ///     let ran = ran.clone();
    ///     let _detached = exec.enqueue(Priority(1), move || ran.fetch_add(1, Ordering::Relaxed));
    /// }
    /// // In an async fn or block, on any runtime (futures' block_on here):
    /// futures::executor::block_on(exec.shutdown_async());
    /// assert_eq!(ran.load(Ordering::Relaxed), 100);
    /// assert!(exec.is_terminated());
    /// # Ok::<(), priority_executor::BuildError>(())
    /// ```
    pub fn shutdown_async(&self) -> impl Future<Output = ()> + Send + Unpin + 'static + use<> {
        self.end_async(
            "shutdown",
            |shared| shared.close(),
            |shared| {
                shared.shut_down(None);
            },
        )
    }

    /// [`wait_idle`](Executor::wait_idle) as a future, for async code: any
    /// runtime can poll it, and it needs none. Its first poll starts the
    /// wait on a thread of its own, named after the executor; it resolves
    /// at the idle moment `wait_idle` would return at, called then (or
    /// once the executor has terminated). The executor keeps running and
    /// accepting jobs. The future is `'static`, `Send` and `Unpin`, and
    /// keeps no clone of the executor: it does not keep it open.
    ///
    /// Cancel-safe: dropping the future gives up the wait (its thread
    /// still returns at that moment, and nothing else happens).
    ///
    /// Awaited on one of the executor's own workers (a future of
    /// [`spawn_future`](Executor::spawn_future) on this executor), it
    /// follows the rule of `wait_idle` called from a job: its first poll
    /// waits on that worker for everything but that task and the jobs
    /// themselves waiting on the executor, and it is ready then.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
    /// let done = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..100 {
    ///     let done = done.clone();
    ///     let _detached = exec.enqueue(Priority(1), move || done.fetch_add(1, Ordering::SeqCst));
    /// }
    /// // In an async fn or block, on any runtime (futures' block_on here):
    /// futures::executor::block_on(exec.wait_idle_async());
    /// assert_eq!(done.load(Ordering::SeqCst), 100);
    /// // Still running: more jobs are welcome.
    /// assert_eq!(exec.enqueue(Priority(1), || 1).unwrap().join(), Ok(1));
    /// # Ok::<(), priority_executor::BuildError>(())
    /// ```
    pub fn wait_idle_async(&self) -> impl Future<Output = ()> + Send + Unpin + 'static + use<> {
        self.end_async(
            "wait-idle",
            |_| {},
            |shared| {
                shared.wait_idle(None);
            },
        )
    }

    /// A blocking end of the pool as a future: on the first poll `begin`
    /// (its non-blocking part) runs, then `rest` on a thread named
    /// `{executor}-{what}`; on one of the pool's own workers, `rest` alone
    /// runs right there (the blocking forms' rules for a job, which do
    /// the beginning themselves).
    fn end_async(&self, what: &str, begin: fn(&Arc<Shared>), rest: fn(&Arc<Shared>)) -> Ending<()> {
        let shared = Arc::clone(&self.shared);
        let thread = std::thread::Builder::new().name(format!("{}-{what}", shared.name));
        Ending::new(thread, move || {
            if shared.is_own_worker() {
                rest(&shared);
                return Begun::Done(());
            }
            begin(&shared);
            Begun::Wait(Box::new(move || rest(&shared)))
        })
    }
}
