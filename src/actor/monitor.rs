//! A stage seen from outside, without owning it ([`StageMonitor`]): its
//! counters, how it ended, the latest faults and dead letters it keeps,
//! and a drain begun without waiting. For dashboards and health checks.

use super::letters::{DeadLetter, Fault};
use super::metrics::StageMetrics;
use super::reason::Reason;
use super::shared::Link;
use std::fmt;
use std::sync::Arc;

/// A cheap, cloneable view of a running stage, whatever its message
/// types, from [`Stage::monitor`](super::Stage::monitor) or
/// [`Pipeline::monitors`](super::Pipeline::monitors).
///
/// It does not own the stage: the stage ends when its handle is drained,
/// joined or dropped, whatever monitors exist; a monitor then reads the
/// counters the stage ended with. It keeps the stage's mailbox and the
/// faults and dead letters it holds in memory while it lives.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{Actor, ActorError, Outbox, Reason, Stage};
///
/// struct Nop;
/// impl Actor for Nop {
///     type In = u8;
///     type Out = ();
///     fn perform(&mut self, _: u8, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
///         Ok(())
///     }
/// }
/// let stage = Stage::builder("nop", |_| Nop).spawn()?;
/// let monitor = stage.monitor();
/// assert_eq!(monitor.name(), "nop");
/// stage.addr().send(1).unwrap();
/// monitor.drain(); // returns at once: the stage performs what it accepted, then ends
/// let exit = stage.join();
/// assert_eq!(exit.reason, Reason::Drained);
/// assert_eq!(monitor.finished(), Some(Reason::Drained));
/// assert_eq!(monitor.metrics().performed, 1);
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
#[derive(Clone)]
pub struct StageMonitor {
    pub(crate) link: Arc<dyn Link>,
    pub(crate) name: String,
}

impl StageMonitor {
    pub(crate) fn new(link: Arc<dyn Link>) -> StageMonitor {
        let name = link.metrics().name;
        StageMonitor { link, name }
    }

    /// The stage's name.
    ///
    /// # Examples
    ///
    /// See [`StageMonitor`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A snapshot of the stage's counters, as
    /// [`Stage::metrics`](super::Stage::metrics).
    ///
    /// # Examples
    ///
    /// See [`StageMonitor`].
    pub fn metrics(&self) -> StageMetrics {
        self.link.metrics()
    }

    /// Has the stage ended, and why?
    ///
    /// # Examples
    ///
    /// See [`StageMonitor`].
    pub fn finished(&self) -> Option<Reason> {
        self.link.finished()
    }

    /// Begins a drain and returns at once, as
    /// [`Outbox::drain_pipeline`](super::Outbox::drain_pipeline): the
    /// drain marker starts at the first stage of this stage's pipeline
    /// (this stage, outside one), behind everything accepted so far; every
    /// stage performs what it accepted, then its instances are destroyed
    /// with `Reason::Drained`. Sends after it are refused. Asking again,
    /// or once the stage has ended, does nothing.
    ///
    /// # Examples
    ///
    /// See [`StageMonitor`].
    pub fn drain(&self) {
        self.link.drain_pipeline();
    }

    /// The last `n` faults the stage keeps, oldest first, without their
    /// messages (`message` is `Some(())` where the stage kept a copy). They
    /// stay kept: [`Stage::take_faults`](super::Stage::take_faults) still
    /// returns them, and once it has, they are no longer shown here. A
    /// stage with an `on_fault` callback keeps none: then only
    /// [`StageMetrics::faulted`] counts them.
    ///
    /// # Examples
    ///
    /// See `tests/actor/monitor.rs`.
    pub fn latest_faults(&self, n: usize) -> Vec<Fault<()>> {
        self.link.latest_faults(n)
    }

    /// The last `n` dead letters the stage keeps, oldest first, without
    /// their messages; kept and shown as [`latest_faults`](Self::latest_faults)
    /// (a stage with an `on_dead_letter` callback keeps none: then only
    /// [`StageMetrics::dead_lettered`] counts them).
    ///
    /// # Examples
    ///
    /// See `tests/actor/monitor.rs`.
    pub fn latest_dead_letters(&self, n: usize) -> Vec<DeadLetter<()>> {
        self.link.latest_dead_letters(n)
    }
}

impl fmt::Debug for StageMonitor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StageMonitor")
            .field("stage", &self.name)
            .field("finished", &self.link.finished())
            .finish_non_exhaustive()
    }
}
