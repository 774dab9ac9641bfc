//! One setting's bad value ([`InvalidSetting`]), as every builder of the
//! crate reports it.

use crate::priority::{Capacity, Priority};
use std::fmt;

/// A setting given a value it does not allow, in the one form every
/// builder of the crate reports it: the lane it belongs to (if any), the
/// setting as its builder method (and `executors.toml` key) names it, the
/// value, and what is allowed.
///
/// # Examples
///
/// ```
/// use priority_executor::{BuildError, Executor, Priority};
///
/// let err = Executor::builder().max_threads(0).lane(Priority(1), Default::default()).build();
/// let Err(BuildError::Invalid(invalid)) = err else { panic!("{err:?}") };
/// assert_eq!((invalid.lane, invalid.setting, invalid.value.as_str()), (None, "max_threads", "0"));
/// assert_eq!(invalid.to_string(), "max_threads = 0 is not allowed (expected at least 1)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct InvalidSetting {
    /// The lane the setting belongs to, or `None` for a setting of the
    /// whole executor or stage.
    pub lane: Option<Priority>,
    /// The setting: `weight`, `capacity`, `max_running`, `promote_after`,
    /// `max_threads`, `instances`, ...
    pub setting: &'static str,
    /// The value given, as text.
    pub value: String,
    /// What the setting allows.
    pub expected: String,
}

impl InvalidSetting {
    /// A setting of the whole executor or stage (or of a layer built on
    /// them, such as the RabbitMQ bridge's `prefetch`): `value` is shown
    /// as written, `expected` says what is allowed.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::InvalidSetting;
    ///
    /// let invalid = InvalidSetting::new("prefetch", 0, "at least 1");
    /// assert_eq!(invalid.to_string(), "prefetch = 0 is not allowed (expected at least 1)");
    /// ```
    pub fn new(
        setting: &'static str,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        InvalidSetting {
            lane: None,
            setting,
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    /// A setting of one lane.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{InvalidSetting, Priority};
    ///
    /// let invalid = InvalidSetting::of_lane(Priority(1), "weight", 0, "at least 1");
    /// assert_eq!(invalid.to_string(), "lane 1: weight = 0 is not allowed (expected at least 1)");
    /// ```
    pub fn of_lane(
        lane: Priority,
        setting: &'static str,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        InvalidSetting {
            lane: Some(lane),
            ..InvalidSetting::new(setting, value, expected)
        }
    }
}

#[cfg(feature = "actor")]
impl InvalidSetting {
    /// A setting of the whole stage outside `min..=max`.
    pub(crate) fn range(
        setting: &'static str,
        value: impl fmt::Display,
        min: impl fmt::Display,
        max: impl fmt::Display,
    ) -> Self {
        InvalidSetting::new(setting, value, format!("{min} to {max}"))
    }
}

/// A bounded capacity of 0, or above `max`, as every lane's builder
/// refuses it (`setting`: `capacity`, or a mailbox's `default_capacity`).
pub(crate) fn check_capacity(
    lane: Option<Priority>,
    setting: &'static str,
    capacity: Capacity,
    max: usize,
) -> Result<(), InvalidSetting> {
    match capacity {
        Capacity::Bounded(n) if n == 0 || n > max => {
            let bound = match n {
                0 => "at least 1".to_owned(),
                _ => format!("at most {max}"),
            };
            let expected = format!("{bound}, or Capacity::Unbounded for no limit");
            Err(InvalidSetting {
                lane,
                ..InvalidSetting::new(setting, n, expected)
            })
        }
        _ => Ok(()),
    }
}

impl fmt::Display for InvalidSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(lane) = self.lane {
            write!(f, "lane {lane}: ")?;
        }
        write!(
            f,
            "{} = {} is not allowed (expected {})",
            self.setting, self.value, self.expected
        )
    }
}

impl std::error::Error for InvalidSetting {}
