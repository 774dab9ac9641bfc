//! Per-submission settings: how long to wait for room, a deadline, a
//! priority in place of the message's own, and retries with backoff.

use crate::priority::Priority;
use crate::sync::Wait;
use std::time::{Duration, Instant};

/// Options of one job: how long to wait for room in a full lane, and a
/// deadline after which it is not started.
///
/// Without options, [`Executor::enqueue`](crate::Executor::enqueue) waits
/// for room as long as it takes and the job never expires.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, JobOptions, Priority};
/// use std::time::Duration;
///
/// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
/// let h = exec
///     .enqueue_with(Priority(1), || 1, JobOptions::new().ttl(Duration::from_secs(60)))
///     .unwrap();
/// assert_eq!(h.join(), Ok(1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobOptions {
    expiry: Option<Expiry>,
    pub(crate) wait: Option<Duration>,
}

/// When a job expires: at an instant, or once it has waited a while from
/// its submission (options are `Copy` and may be kept and reused, so a
/// time to live counts from each submission, not from when it was set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expiry {
    At(Instant),
    After(Duration),
}

impl JobOptions {
    /// No deadline, and a full lane is waited on for as long as it takes.
    ///
    /// # Examples
    ///
    /// See [`JobOptions`].
    pub fn new() -> Self {
        JobOptions::default()
    }

    /// Not started after this instant: the handle resolves
    /// [`JobError::Expired`](crate::JobError::Expired) instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::JobOptions;
    /// use std::time::{Duration, Instant};
    ///
    /// let opts = JobOptions::new().deadline(Instant::now() + Duration::from_secs(1));
    /// # let _ = opts;
    /// ```
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.expiry = Some(Expiry::At(deadline));
        self
    }

    /// Not started once it has waited this long (time to live), counted
    /// from each submission these options go with: options kept and
    /// reused give every job its own time to live.
    ///
    /// # Examples
    ///
    /// See [`JobOptions`].
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.expiry = Some(Expiry::After(ttl));
        self
    }

    /// The instant a job submitted now expires at, if it does (a time to
    /// live past the clock's reach is none).
    #[inline]
    pub(crate) fn expires_at(&self) -> Option<Instant> {
        match self.expiry? {
            Expiry::At(at) => Some(at),
            Expiry::After(ttl) => Instant::now().checked_add(ttl),
        }
    }

    /// Waits at most `timeout` for room in a full lane whose policy
    /// blocks, then refuses the job
    /// ([`EnqueueError::Full`](crate::EnqueueError::Full), the job handed
    /// back); discard-oldest waits the same way when nothing is queued to
    /// push out; the other policies act at once, as without options.
    ///
    /// `Duration::ZERO` never blocks, never runs the job inline and never
    /// pushes another job out: a full lane refuses it under every policy
    /// (what other pools call `try_execute` or `try_send`).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, EnqueueError, Executor, JobOptions, Priority};
    /// use std::sync::mpsc;
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(1)
    ///     .max_threads(1)
    ///     .lane(Priority(1), Capacity::Bounded(1))
    ///     .build()?;
    /// let (started_tx, started) = mpsc::channel();
    /// let (release, gate) = mpsc::channel::<()>();
    /// exec.enqueue(Priority(1), move || {
    ///     started_tx.send(()).unwrap();
    ///     gate.recv().ok();
    /// })?;
    /// started.recv()?; // the worker is busy, the lane empty
    /// let no_wait = JobOptions::new().wait_at_most(Duration::ZERO);
    /// exec.enqueue_with(Priority(1), || (), no_wait)?; // fills the lane
    /// let err = exec.enqueue_with(Priority(1), || (), no_wait).unwrap_err();
    /// assert!(matches!(err, EnqueueError::Full { .. }));
    /// release.send(())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wait_at_most(mut self, timeout: Duration) -> Self {
        self.wait = Some(timeout);
        self
    }

    /// How a full lane is waited on, from the moment of the call.
    #[inline]
    pub(crate) fn wait_mode(&self) -> Wait {
        Wait::from_limit(self.wait)
    }

    /// A message's options as a job's: the same wait, no deadline.
    #[cfg(feature = "esb")]
    pub(crate) fn from_send(options: &SendOptions) -> JobOptions {
        JobOptions {
            expiry: None,
            wait: options.wait,
        }
    }
}

/// Options of one message whose priority travels with it (an actor's
/// letter, an ESB message run through a sequence): a priority in place of
/// the one its generator or rules would give, and how long to wait for
/// room in a full lane.
///
/// # Examples
///
/// ```
/// use priority_executor::{Priority, SendOptions};
/// use std::time::Duration;
///
/// let urgent = SendOptions::new().priority(Priority(10)).wait_at_most(Duration::ZERO);
/// assert_ne!(urgent, SendOptions::new());
/// ```
#[cfg(any(feature = "actor", feature = "esb"))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendOptions {
    pub(crate) priority: Option<Priority>,
    pub(crate) wait: Option<Duration>,
}

#[cfg(any(feature = "actor", feature = "esb"))]
impl SendOptions {
    /// The message's own priority, and a full lane waited on for as long
    /// as it takes.
    ///
    /// # Examples
    ///
    /// See [`SendOptions`].
    pub fn new() -> Self {
        SendOptions::default()
    }

    /// Sends at `priority`, in place of the one the message would get.
    ///
    /// # Examples
    ///
    /// See [`SendOptions`].
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Waits at most `timeout` for room in a full lane, then refuses the
    /// message (handed back in the error). `Duration::ZERO` never blocks.
    ///
    /// # Examples
    ///
    /// See [`SendOptions`].
    pub fn wait_at_most(mut self, timeout: Duration) -> Self {
        self.wait = Some(timeout);
        self
    }

    /// How a full lane is waited on, from the moment of the call.
    #[cfg(feature = "actor")]
    #[inline]
    pub(crate) fn wait_mode(&self) -> Wait {
        Wait::from_limit(self.wait)
    }
}

/// How a job run with
/// [`enqueue_retrying`](crate::Executor::enqueue_retrying) is tried again
/// when it fails (returns `Err` or panics).
///
/// # Examples
///
/// ```
/// use priority_executor::{Priority, RetryPolicy};
/// use std::time::Duration;
///
/// let policy = RetryPolicy::new(3)
///     .backoff(Duration::from_millis(10), 2.0) // 10 ms, 20 ms, 40 ms
///     .retry_at(Priority(10)); // retries jump the queue
/// assert_ne!(policy, RetryPolicy::new(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub(crate) max_retries: u32,
    pub(crate) initial_delay: Duration,
    pub(crate) multiplier: f64,
    pub(crate) max_delay: Duration,
    pub(crate) retry_priority: Option<Priority>,
}

impl RetryPolicy {
    /// Up to `max_retries` further attempts after the first, re-queued at
    /// once at the same priority.
    ///
    /// # Examples
    ///
    /// See [`RetryPolicy`].
    pub fn new(max_retries: u32) -> Self {
        RetryPolicy {
            max_retries,
            initial_delay: Duration::ZERO,
            multiplier: 1.0,
            max_delay: Duration::from_secs(3600),
            retry_priority: None,
        }
    }

    /// Wait `initial` before the first retry, then `multiplier` times
    /// longer before each next one (capped at one hour). The waiting job
    /// holds no worker.
    ///
    /// # Examples
    ///
    /// See [`RetryPolicy`].
    pub fn backoff(mut self, initial: Duration, multiplier: f64) -> Self {
        self.initial_delay = initial;
        self.multiplier = if multiplier.is_finite() && multiplier >= 1.0 {
            multiplier
        } else {
            1.0
        };
        self
    }

    /// Re-queue retries in the lane of this priority (it must exist, or the
    /// retry stays in its own lane).
    ///
    /// # Examples
    ///
    /// See [`RetryPolicy`].
    pub fn retry_at(mut self, priority: Priority) -> Self {
        self.retry_priority = Some(priority);
        self
    }

    /// The wait before retry number `n` (1-based).
    pub(crate) fn delay_after(&self, n: u32) -> Duration {
        if self.initial_delay.is_zero() {
            return Duration::ZERO;
        }
        let factor = self.multiplier.powi(n.saturating_sub(1).min(64) as i32);
        let secs = self.initial_delay.as_secs_f64() * factor;
        if !secs.is_finite() || secs >= self.max_delay.as_secs_f64() {
            self.max_delay
        } else {
            Duration::from_secs_f64(secs)
        }
    }
}

/// Which attempt of a retrying job is running.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority, RetryPolicy};
///
/// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
/// let h = exec
///     .enqueue_retrying(Priority(1), |attempt| {
///         if attempt.number < 3 { Err("not yet") } else { Ok(attempt.number) }
///     }, RetryPolicy::new(2))
///     .unwrap();
/// assert_eq!(h.join(), Ok(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempt {
    /// 1 for the first run, 2 for the first retry, …
    pub number: u32,
    /// No retry follows if this attempt fails.
    pub last: bool,
}

#[cfg(test)]
mod tests {
    use super::RetryPolicy;
    use crate::Priority;
    use std::time::Duration;

    #[test]
    fn backoff_doubles() {
        let policy = RetryPolicy::new(3)
            .backoff(Duration::from_millis(10), 2.0) // 10 ms, 20 ms, 40 ms
            .retry_at(Priority(10));
        assert_eq!(policy.delay_after(3), Duration::from_millis(40));
    }
}
