//! The executor's identity, metrics, waits and shutdown.

use super::Executor;
use crate::error::TimedOut;
use crate::job::PendingJob;
use crate::metrics::{LaneMetrics, Metrics, ThreadMetrics};
use crate::priority::Priority;
use crate::sync::atomic::Ordering;
use crate::sync::deadline_after;
use std::time::Duration;

impl Executor {
    /// The executor's name.
    ///
    /// # Examples
    ///
    /// See [`Executor`](crate::Executor).
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Are `self` and `other` handles of one pool?
    #[cfg(feature = "esb")]
    pub(crate) fn same_pool(&self, other: &Executor) -> bool {
        crate::sync::Arc::ptr_eq(self.shared(), other.shared())
    }

    /// The pool behind this executor (what the registry hands to be
    /// retired).
    #[cfg(feature = "esb")]
    pub(crate) fn shared(&self) -> &crate::sync::Arc<crate::pool::Shared> {
        &self.shared
    }

    /// The priorities that have lanes, highest first.
    pub(crate) fn priorities(&self) -> Vec<Priority> {
        self.shared.priorities()
    }

    /// Blocks until the executor is idle: no job queued, none running, no
    /// retry waiting out its backoff (`threadpool`'s and `rusty_pool`'s
    /// `join`). The executor keeps running and accepting jobs; any number
    /// of threads may wait at once. Returns at once if it is idle already,
    /// and also once it has terminated.
    ///
    /// It is a moment, not a state: jobs enqueued concurrently may or may
    /// not be waited for. Every thread waiting when the moment comes
    /// returns, even if by the time it wakes another waiter has already
    /// made the executor busy again (an idle generation, as in
    /// `threadpool` and `rusty_pool`). Not counted: jobs running on a producer's thread
    /// under [`RejectionPolicy::CallerRuns`](crate::RejectionPolicy), and a
    /// future from [`spawn_future`](Executor::spawn_future) parked
    /// until its waker is woken (it is neither queued nor running). After
    /// [`shutdown_now`](Executor::shutdown_now), what was queued
    /// will not run, so only the running jobs are waited for.
    ///
    /// Called from inside one of the executor's own jobs, it waits for
    /// everything but that job and the other jobs that are themselves
    /// waiting on the executor (in `wait_idle`, `shutdown` or the drop of
    /// the last `Executor`), so any number of jobs may wait at once; if
    /// only such waiting jobs' workers are left to run what is queued,
    /// the wait never ends.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let done = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..100 {
    ///     let done = done.clone();
    ///     let _detached = exec.enqueue(Priority(1), move || done.fetch_add(1, Ordering::SeqCst));
    /// }
    /// exec.wait_idle();
    /// assert_eq!(done.load(Ordering::SeqCst), 100);
    /// // Still running: more jobs are welcome.
    /// assert_eq!(exec.enqueue(Priority(1), || 1).unwrap().join(), Ok(1));
    /// ```
    pub fn wait_idle(&self) {
        self.shared.wait_idle(None);
    }

    /// Like [`wait_idle`](Executor::wait_idle), but waits at most
    /// `timeout`.
    ///
    /// # Errors
    ///
    /// [`TimedOut`], with the jobs still queued and running, if the
    /// executor was not idle (nor terminated) in time.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::mpsc;
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let (release, gate) = mpsc::channel::<()>();
    /// let job = exec.enqueue(Priority(1), move || gate.recv().ok()).unwrap();
    /// let busy = exec.wait_idle_timeout(Duration::from_millis(10)).unwrap_err();
    /// assert_eq!(busy.running, 1); // the job waits for the gate
    /// release.send(()).unwrap();
    /// assert!(exec.wait_idle_timeout(Duration::from_secs(30)).is_ok());
    /// assert!(job.is_finished());
    /// ```
    pub fn wait_idle_timeout(&self, timeout: Duration) -> Result<(), TimedOut> {
        if self.shared.wait_idle_timeout(timeout) {
            Ok(())
        } else {
            Err(self.timed_out())
        }
    }

    /// What is left when a wait runs out of time.
    fn timed_out(&self) -> TimedOut {
        let m = self.metrics();
        TimedOut {
            queued: m.queued(),
            running: m.threads.busy,
        }
    }

    /// A snapshot of the counters, per lane and for the threads: relaxed
    /// atomic loads, and the list of workers locked for a moment to add up
    /// the counts each worker keeps of its own jobs.
    ///
    /// # Examples
    ///
    /// See [`Metrics`].
    pub fn metrics(&self) -> Metrics {
        let counts = self.shared.dispatched_completed();
        let waits = self.shared.waits();
        let lanes = self
            .shared
            .lanes
            .iter()
            .zip(counts.into_iter().zip(waits))
            .map(|(lane, ((dispatched, completed), waits))| {
                let c = &lane.counters;
                LaneMetrics {
                    priority: lane.priority,
                    weight: lane.weight,
                    capacity: lane.capacity,
                    queued: lane.queued(),
                    submitted: lane.submitted(dispatched),
                    dispatched,
                    completed,
                    panicked: c.panicked.load(Ordering::Relaxed),
                    rejected: c.rejected.load(Ordering::Relaxed),
                    handed_back: c.handed_back.load(Ordering::Relaxed),
                    expired: c.expired.load(Ordering::Relaxed),
                    discarded: c.discarded.load(Ordering::Relaxed),
                    retried: c.retried.load(Ordering::Relaxed),
                    dead_lettered: c.dead_lettered.load(Ordering::Relaxed),
                    caller_ran: c.caller_ran.load(Ordering::Relaxed),
                    promoted: c.promoted.load(Ordering::Relaxed),
                    cancelled: c.cancelled.load(Ordering::Relaxed),
                    running: lane.running(),
                    max_running: lane.running().map(|_| lane.max_running()),
                    when_full: lane.when_full,
                    paused: lane.is_paused(),
                    waits,
                }
            })
            .collect();
        let (live, idle, peak, sleeping) = self.shared.thread_counts();
        Metrics {
            name: self.shared.name.clone(),
            lanes,
            threads: ThreadMetrics {
                live,
                idle,
                busy: live - idle,
                peak,
                sleeping,
                spawn_failures: self.shared.spawn_failures(),
            },
        }
    }

    /// Has shutdown begun (no new job is accepted)?
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// assert!(!exec.is_shut_down());
    /// let _ = exec.shutdown_now();
    /// assert!(exec.is_shut_down());
    /// ```
    pub fn is_shut_down(&self) -> bool {
        self.shared.is_closed()
    }

    /// Graceful shutdown through `&self`: stops accepting jobs, runs every
    /// job already queued (and retries waiting out a backoff, at once), and
    /// waits for the worker threads to exit and joins them. Producers
    /// blocked on a full lane get their job back as
    /// [`EnqueueError::ShutDown`](crate::EnqueueError::ShutDown). Idempotent, and callable from any number
    /// of threads.
    ///
    /// Called from inside one of the executor's own jobs it does not wait
    /// for the thread running that job (it cannot), nor for the workers
    /// whose jobs are themselves waiting on the executor (any number of
    /// jobs may shut it down at once): it returns once every other worker
    /// has exited, and the calling worker, once its job returns, runs what
    /// is still queued and exits too. Nothing queued is dropped either
    /// way. Its thread is joined by a later shutdown from outside the
    /// pool (such as dropping the last clone there), which joins every
    /// worker thread; without one it still exits, unjoined.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let ran = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..100 {
    ///     let ran = ran.clone();
    ///     let _detached = exec.enqueue(Priority(1), move || ran.fetch_add(1, Ordering::Relaxed));
    /// }
    /// exec.shutdown();
    /// assert_eq!(ran.load(Ordering::Relaxed), 100);
    /// assert!(exec.is_terminated());
    /// ```
    pub fn shutdown(&self) {
        self.shared.shut_down(None);
    }

    /// Like [`shutdown`](Executor::shutdown), but waits at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`TimedOut`] with the jobs still queued and running when the
    /// time ran out. The threads go on draining in the background: nothing
    /// queued is dropped, and dropping the last clone afterwards does not
    /// wait for them either.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let _detached = exec.enqueue(Priority(1), || ());
    /// assert!(exec.shutdown_timeout(Duration::from_secs(10)).is_ok());
    /// assert!(exec.is_terminated());
    /// ```
    pub fn shutdown_timeout(&self, timeout: Duration) -> Result<(), TimedOut> {
        if self.shared.shut_down(deadline_after(timeout)) {
            Ok(())
        } else {
            self.shared.detach();
            Err(self.timed_out())
        }
    }

    /// Has the executor terminated: shutdown has begun, every worker has
    /// exited, and no accepted job is left queued (Java's `isTerminated`)?
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// exec.enqueue(Priority(1), || ()).unwrap().join().unwrap();
    /// assert!(!exec.is_terminated()); // running: not even shut down
    /// exec.shutdown();
    /// assert!(exec.is_terminated());
    /// ```
    pub fn is_terminated(&self) -> bool {
        self.shared.is_terminated()
    }

    /// Stops at once: no new job is accepted, workers start no further job,
    /// and every job that never started is handed back, highest priority
    /// first, retries waiting out a backoff included. Jobs already running
    /// finish their attempt; a retrying job whose attempt then fails is not
    /// queued again but dead-lettered with its error
    /// ([`JobError::Failed`](crate::JobError::Failed), the `on_dead_letter`
    /// hook, counted `dead_lettered`). Dropping the last clone afterwards
    /// (or [`shutdown`](Executor::shutdown)) joins the threads.
    ///
    /// A [`PendingJob`] can be [run](PendingJob::run) or dropped (its handle
    /// then resolves [`JobError::Cancelled`](crate::JobError::Cancelled)).
    ///
    /// # Examples
    ///
    /// See [`PendingJob`].
    pub fn shutdown_now(&self) -> Vec<PendingJob> {
        self.shared.stop_now()
    }

    /// After [`shutdown_now`](Executor::shutdown_now), waits up to
    /// `timeout` for the jobs still running to finish and every worker to
    /// exit (Java's `awaitTermination`).
    ///
    /// # Errors
    ///
    /// [`TimedOut`], with the jobs still queued and running, if they did
    /// not all finish in time; at once if shutdown has not begun, since
    /// the workers of a running executor do not exit.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let _detached = exec.enqueue(Priority(1), || ());
    /// assert!(exec.await_termination(Duration::from_secs(1)).is_err()); // not shut down
    /// let _pending = exec.shutdown_now();
    /// assert!(exec.await_termination(Duration::from_secs(30)).is_ok());
    /// assert_eq!(exec.metrics().threads.live, 0);
    /// ```
    pub fn await_termination(&self, timeout: Duration) -> Result<(), TimedOut> {
        if self.shared.is_closed() && self.shared.wait_exited(deadline_after(timeout)) {
            Ok(())
        } else {
            Err(self.timed_out())
        }
    }
}
