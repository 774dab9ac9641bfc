//! The counters of a sequence, and their snapshot.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of one sequence, over every executor it ran on.
///
/// `ran` counts finished runs, failed or not; `failed` counts runs that
/// returned an error or panicked; `panicked` the panics among them. Once
/// every handle has been joined, `ran == enqueued`, unless some accepted
/// runs never started: those cancelled through their handle's
/// [`cancel`](crate::JobHandle::cancel) before a worker took them, those
/// [`Executor::shutdown_now`](crate::Executor::shutdown_now) handed back
/// (and that were not [run](crate::PendingJob::run) afterwards), and those
/// a `when_full = "discard-oldest"` lane pushed out. Each stays counted in
/// `enqueued` and never in `ran`.
///
/// # Examples
///
/// ```
/// use priority_executor::{Registry, Message};
///
/// let mut executors = Registry::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
/// executors.register_sequence("odd", |m: Message| {
///     if m.body().len() % 2 == 1 { Err(std::fmt::Error) } else { Ok(()) }
/// });
/// for body in ["a", "bb", "ccc"] {
///     let message = Message::new().with_body(body);
///     executors.enqueue_sequence("e", "odd", message)?.join()?.ok();
/// }
/// let metrics = executors.sequence_metrics("odd").expect("registered");
/// assert_eq!((metrics.enqueued, metrics.ran, metrics.failed, metrics.panicked), (3, 3, 2, 0));
/// executors.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SequenceMetrics {
    /// Runs accepted by an executor.
    pub enqueued: u64,
    /// Runs finished, failed or not.
    pub ran: u64,
    /// Runs that returned an error or panicked.
    pub failed: u64,
    /// Runs that panicked (also counted in `failed`).
    pub panicked: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    enqueued: AtomicU64,
    ran: AtomicU64,
    failed: AtomicU64,
    panicked: AtomicU64,
}

impl Counters {
    // ORDERING: the counters are independent tallies; a reader that joined
    // the handles already synchronised with the runs through the handles.
    pub(crate) fn snapshot(&self) -> SequenceMetrics {
        SequenceMetrics {
            enqueued: self.enqueued.load(Ordering::Relaxed),
            ran: self.ran.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            panicked: self.panicked.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn accepted(&self) {
        self.enqueued.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes back an [`accepted`](Counters::accepted) the executor refused.
    pub(crate) fn refused(&self) {
        self.enqueued.fetch_sub(1, Ordering::Relaxed);
    }

    /// A run finished, failed or not.
    pub(crate) fn record_run(&self) {
        self.ran.fetch_add(1, Ordering::Relaxed);
    }

    /// A run returned an error.
    pub(crate) fn record_failure(&self) {
        self.failed.fetch_add(1, Ordering::Relaxed);
    }

    /// A run panicked (a failure too).
    pub(crate) fn record_panic(&self) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        self.panicked.fetch_add(1, Ordering::Relaxed);
    }
}
