//! What a job cell runs: a plain closure once, a value and the function to
//! run on it once, or a retrying closure under a [`RetryPolicy`].

use super::options::{Attempt, RetryPolicy};
use crate::priority::Priority;
use std::time::Duration;

/// What a cell runs: one attempt at a time.
pub(crate) trait Body: Send + 'static {
    type Output: Send + 'static;
    /// What the caller handed in, given back if the job is refused.
    type Payload;
    fn into_payload(self) -> Option<Self::Payload>;
    /// Attempts made so far.
    fn attempts(&self) -> u32;
    /// Runs the next attempt (number `attempts() + 1`). `Err` carries the
    /// attempt's error.
    fn attempt(&mut self) -> Result<Self::Output, String>;
    /// After failed attempt `n`: another attempt, or `None` to give up.
    fn retry_after(&self, n: u32) -> Option<(Duration, Option<Priority>)>;
    /// Whether failures are retried (a panic then counts as a failed
    /// attempt rather than ending the job).
    fn retries(&self) -> bool;
}

/// A plain closure, run once.
pub(crate) struct Once<F>(pub(crate) Option<F>);

impl<F, T> Body for Once<F>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    type Output = T;
    type Payload = F;

    fn into_payload(self) -> Option<F> {
        self.0
    }

    #[inline]
    fn attempts(&self) -> u32 {
        u32::from(self.0.is_none())
    }

    #[inline]
    fn attempt(&mut self) -> Result<T, String> {
        match self.0.take() {
            Some(f) => Ok(f()),
            None => Err("job body already consumed".to_owned()),
        }
    }

    fn retry_after(&self, _n: u32) -> Option<(Duration, Option<Priority>)> {
        None
    }

    fn retries(&self) -> bool {
        false
    }
}

/// A value and the function to run on it, once. Refused, it gives the
/// value back (a closure would only give back itself, opaque).
pub(crate) struct Call<V, T> {
    pub(crate) value: Option<V>,
    pub(crate) run: fn(V) -> T,
}

impl<V, T> Body for Call<V, T>
where
    V: Send + 'static,
    T: Send + 'static,
{
    type Output = T;
    type Payload = V;

    fn into_payload(self) -> Option<V> {
        self.value
    }

    #[inline]
    fn attempts(&self) -> u32 {
        u32::from(self.value.is_none())
    }

    #[inline]
    fn attempt(&mut self) -> Result<T, String> {
        match self.value.take() {
            Some(value) => Ok((self.run)(value)),
            None => Err("job body already consumed".to_owned()),
        }
    }

    fn retry_after(&self, _n: u32) -> Option<(Duration, Option<Priority>)> {
        None
    }

    fn retries(&self) -> bool {
        false
    }
}

/// A closure that may fail and be tried again under a [`RetryPolicy`].
pub(crate) struct Retrying<F> {
    f: F,
    policy: RetryPolicy,
    made: u32,
}

impl<F> Retrying<F> {
    pub(crate) fn new(f: F, policy: RetryPolicy) -> Self {
        Retrying { f, policy, made: 0 }
    }
}

impl<F, T, E> Body for Retrying<F>
where
    F: FnMut(Attempt) -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: std::fmt::Display,
{
    type Output = T;
    type Payload = F;

    fn into_payload(self) -> Option<F> {
        Some(self.f)
    }

    fn attempts(&self) -> u32 {
        self.made
    }

    fn attempt(&mut self) -> Result<T, String> {
        self.made += 1;
        let n = self.made;
        let last = n > self.policy.max_retries;
        (self.f)(Attempt { number: n, last }).map_err(|e| e.to_string())
    }

    fn retry_after(&self, n: u32) -> Option<(Duration, Option<Priority>)> {
        (n <= self.policy.max_retries)
            .then(|| (self.policy.delay_after(n), self.policy.retry_priority))
    }

    fn retries(&self) -> bool {
        true
    }
}
