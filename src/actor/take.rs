//! What the take lock of a mailbox guards: the phase the stage is in and
//! the order its lanes are served in (rules 4-11 of `README.md`).

use super::reason::Reason;
use crate::lane::picker::Schedule;
use crate::priority::Priority;
use crate::sync::atomic::AtomicUsize;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Running,
    Draining,
    /// A graceful stop of this priority was dispatched: only lanes above
    /// it are still served.
    Stopping(Priority),
    Closed(Reason),
}

/// What the take lock guards.
pub(crate) struct Take {
    pub(crate) phase: Phase,
    /// Live lane slots, highest priority first.
    pub(crate) order: Vec<usize>,
    /// The weighted picker over the declared lanes (fixed), if any.
    pub(crate) schedule: Option<Schedule>,
    /// The cursor that walks `schedule`'s cycle.
    pub(crate) cursor: AtomicUsize,
}
