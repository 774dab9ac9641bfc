//! A mailbox's settings: lanes, picker, what happens to a priority with no
//! lane, and the priorities of unmarked messages, `stop` and `kill`.
//!
//! [`MailboxConfig`] is plain data checked once at spawn, so a
//! configuration file can fill it: the seed's `priority.default`,
//! `priority.poison-pill` and `priority.kill-pill` are
//! [`default_priority`](MailboxConfig::default_priority),
//! [`stop_priority`](MailboxConfig::stop_priority) and
//! [`kill_priority`](MailboxConfig::kill_priority).

use super::error::SpawnError;
use crate::error::{InvalidSetting, check_capacity};
use crate::lane::config::{LaneConfig, RejectionPolicy};
use crate::lane::picker::{MAX_CYCLE, Picker};
use crate::priority::{Capacity, Priority};

/// Most lanes one mailbox holds (declared and created on first use).
pub(crate) const MAX_LANES: usize = 64;

/// The largest capacity of a bounded lane: a lane counts its slots in the
/// bits of a `usize` below the closed bit (`lane/`).
pub const MAX_CAPACITY: usize = usize::MAX >> 1;

/// What the mailbox does with a priority that has no declared lane.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{MailboxConfig, Unlisted};
///
/// let config = MailboxConfig::new().unlisted(Unlisted::Refuse);
/// # let _ = config;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Unlisted {
    /// It gets a lane of its own on first use, with the default capacity
    /// (past 64 lanes: as `Nearest`). The default; needs
    /// [`Picker::Strict`].
    #[default]
    NewLane,
    /// It goes to the nearest lane below it, or the lowest lane if none is
    /// below.
    Nearest,
    /// It is handed back as
    /// [`SendError::UnknownPriority`](super::SendError::UnknownPriority).
    Refuse,
}

/// One declared lane of a mailbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaneSpec {
    pub(crate) priority: Priority,
    pub(crate) weight: u32,
    pub(crate) capacity: Capacity,
}

/// The settings of a stage's mailbox. The default is Akka's
/// `UnboundedStablePriorityMailbox` with the seed's generator: strict
/// priority, FIFO among equals, unbounded lanes created on first use,
/// unmarked messages at [`Priority::MEDIUM`], `stop` and `kill` at
/// [`Priority::HIGH`].
///
/// | seed (`application.conf`) | here |
/// |---|---|
/// | `priority.default` | [`default_priority`](MailboxConfig::default_priority) |
/// | `priority.poison-pill` | [`stop_priority`](MailboxConfig::stop_priority) |
/// | `priority.kill-pill` | [`kill_priority`](MailboxConfig::kill_priority) |
///
/// A bounded lane of up to 65 536 entries allocates its slots when the
/// lane is made (declared lanes with the stage, others on first use):
/// its capacity, rounded up to a power of two, times the size of a queued
/// message plus 24 bytes, rounded up to a multiple of 32 (32 bytes for a
/// `u64` message, 64 for a `String`). Larger bounded lanes, and unbounded ones,
/// grow as they fill. A bounded capacity is 1 to
/// [`MAX_CAPACITY`]: `spawn` refuses others with a `SpawnError` naming the
/// lane.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::MailboxConfig;
/// use priority_executor::{Capacity, LaneConfig, Picker, Priority};
///
/// // Bounded lanes served 10:1, with a graceful stop that waits for the lows.
/// let config = MailboxConfig::new()
///     .lane_config(LaneConfig::new(Priority::HIGH).weight(10).capacity(Capacity::Bounded(1024)))
///     .lane_config(LaneConfig::new(Priority::LOW).weight(1).capacity(Capacity::Bounded(1024)))
///     .picker(Picker::Smooth)
///     .unlisted(priority_executor::actor::Unlisted::Nearest)
///     .default_priority(Priority::LOW)
///     .stop_priority(Priority::LOW);
/// # let _ = config;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "a config does nothing until given to a stage"]
pub struct MailboxConfig {
    pub(crate) lanes: Vec<LaneSpec>,
    pub(crate) picker: Picker,
    pub(crate) unlisted: Unlisted,
    pub(crate) default_capacity: Capacity,
    pub(crate) default_priority: Priority,
    pub(crate) stop_priority: Priority,
    pub(crate) kill_priority: Priority,
    /// A lane setting that only an executor's lane has, refused by `check`.
    pub(crate) refused: Option<InvalidSetting>,
}

impl Default for MailboxConfig {
    fn default() -> Self {
        MailboxConfig::new()
    }
}

impl MailboxConfig {
    /// The default settings (see [`MailboxConfig`]).
    ///
    /// # Examples
    ///
    /// See [`MailboxConfig`].
    pub fn new() -> Self {
        MailboxConfig {
            lanes: Vec::new(),
            picker: Picker::Strict,
            unlisted: Unlisted::NewLane,
            default_capacity: Capacity::Unbounded,
            default_priority: Priority::MEDIUM,
            stop_priority: Priority::HIGH,
            kill_priority: Priority::HIGH,
            refused: None,
        }
    }

    /// Declares a lane whose weight is its priority (at least 1), as
    /// [`ExecutorBuilder::lane`](crate::ExecutorBuilder::lane) does; the
    /// weight matters only to a weighted picker. A shorthand for
    /// `.lane_config(LaneConfig::new(priority).capacity(capacity))`.
    ///
    /// # Examples
    ///
    /// See [`MailboxConfig`].
    pub fn lane(self, priority: Priority, capacity: Capacity) -> Self {
        self.lane_config(LaneConfig::new(priority).capacity(capacity))
    }

    /// Declares a lane with its settings, as
    /// [`ExecutorBuilder::lane_config`](crate::ExecutorBuilder::lane_config)
    /// takes them: its priority, [weight](LaneConfig::weight) (for
    /// [`Picker::Smooth`] or [`Picker::Classic`]) and capacity. A mailbox's
    /// lane has no name, `max_running`, `promote_after` or `when_full` (a
    /// full lane makes its sender wait, as far as
    /// [`SendOptions::wait_at_most`](crate::SendOptions::wait_at_most)
    /// allows): `spawn` refuses a lane that sets one, naming it.
    ///
    /// # Examples
    ///
    /// See [`MailboxConfig`].
    pub fn lane_config(mut self, lane: LaneConfig) -> Self {
        if self.refused.is_none() {
            self.refused = executor_only(&lane);
        }
        self.lanes.push(LaneSpec {
            priority: lane.priority,
            weight: lane.weight,
            capacity: lane.capacity,
        });
        self
    }

    /// How the next lane is chosen: [`Picker::Strict`] (the default, as
    /// Akka) or a weighted picker over the declared lanes.
    ///
    /// # Examples
    ///
    /// See [`MailboxConfig`].
    pub fn picker(mut self, picker: Picker) -> Self {
        self.picker = picker;
        self
    }

    /// What happens to a priority with no declared lane.
    ///
    /// # Examples
    ///
    /// See [`Unlisted`].
    pub fn unlisted(mut self, unlisted: Unlisted) -> Self {
        self.unlisted = unlisted;
        self
    }

    /// The capacity of lanes created on first use.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Capacity;
    /// use priority_executor::actor::MailboxConfig;
    ///
    /// let config = MailboxConfig::new().default_capacity(Capacity::Bounded(1024));
    /// # let _ = config;
    /// ```
    pub fn default_capacity(mut self, capacity: Capacity) -> Self {
        self.default_capacity = capacity;
        self
    }

    /// The priority of a message its generator gives none (seed:
    /// `priority.default`, default [`Priority::MEDIUM`]).
    ///
    /// # Examples
    ///
    /// See [`MailboxConfig`].
    pub fn default_priority(mut self, priority: Priority) -> Self {
        self.default_priority = priority;
        self
    }

    /// The priority `stop` is queued at (seed: `priority.poison-pill`,
    /// default [`Priority::HIGH`]).
    ///
    /// # Examples
    ///
    /// See [`MailboxConfig`].
    pub fn stop_priority(mut self, priority: Priority) -> Self {
        self.stop_priority = priority;
        self
    }

    /// The priority `kill` is queued at (seed: `priority.kill-pill`,
    /// default [`Priority::HIGH`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Priority;
    /// use priority_executor::actor::MailboxConfig;
    ///
    /// let config = MailboxConfig::new().kill_priority(Priority::URGENT);
    /// # let _ = config;
    /// ```
    pub fn kill_priority(mut self, priority: Priority) -> Self {
        self.kill_priority = priority;
        self
    }

    /// The default settings with the priorities of the `[mailboxes.NAME]`
    /// section of an `executors.toml` file (feature `esb`):
    /// `priority.default`, `priority.poison-pill` and `priority.kill-pill`,
    /// each a whole number (larger is more important) or one of
    /// `"urgent"`, `"high"`, `"medium"`, `"low"`. A setting left out keeps
    /// its default (MEDIUM, HIGH, HIGH, as the seed). Lanes, picker and
    /// capacities are set in code on the result.
    ///
    /// The whole file is checked, as [`Registry::from_path`] checks it; an
    /// error names the file, line, mailbox, setting and value, and a
    /// missing section names the ones the file has.
    ///
    /// [`Registry::from_path`]: crate::Registry::from_path
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use priority_executor::actor::MailboxConfig;
    ///
    /// // executors.toml:
    /// //   [mailboxes.printer]
    /// //   priority.poison-pill = "medium"
    /// let config = MailboxConfig::from_path("executors.toml", "printer")?;
    /// # let _ = config;
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    #[cfg(feature = "esb")]
    pub fn from_path(
        path: impl AsRef<std::path::Path>,
        name: &str,
    ) -> Result<Self, crate::ConfigError> {
        let plan = crate::esb::config::read(path.as_ref())?;
        Ok(MailboxConfig::new().with_file(plan.mailbox(name)?))
    }

    /// As [`from_path`](MailboxConfig::from_path), from TOML text.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Priority;
    /// use priority_executor::actor::MailboxConfig;
    ///
    /// let toml = r#"
    ///     [mailboxes.printer]
    ///     priority.default = "low"
    ///     priority.poison-pill = 150   # between LOW (100) and MEDIUM (200)
    /// "#;
    /// let config = MailboxConfig::from_toml_str(toml, "printer")?;
    /// assert_eq!(
    ///     config,
    ///     MailboxConfig::new()
    ///         .default_priority(Priority::LOW)
    ///         .stop_priority(Priority(150))
    ///         .kill_priority(Priority::HIGH)
    /// );
    ///
    /// let err = MailboxConfig::from_toml_str(toml, "writer").unwrap_err();
    /// assert_eq!(err.to_string(), "no [mailboxes.writer] section (defined: \"printer\")");
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    #[cfg(feature = "esb")]
    pub fn from_toml_str(toml: &str, name: &str) -> Result<Self, crate::ConfigError> {
        let plan = crate::esb::config::parse(toml.to_owned(), None)?;
        Ok(MailboxConfig::new().with_file(plan.mailbox(name)?))
    }

    /// The default settings with the priorities of the `[mailboxes.NAME]`
    /// section of the file a running registry was loaded from (or last
    /// reloaded from): [`from_path`](MailboxConfig::from_path) without
    /// reading the file again. `None` if the file has no such section.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Priority};
    /// use priority_executor::actor::MailboxConfig;
    ///
    /// let executors = Registry::from_toml_str(
    ///     "[executors.a]\nlanes = [{ priority = 1 }]\n\
    ///      [mailboxes.printer]\npriority.poison-pill = \"low\"\n",
    /// )?;
    /// let config = MailboxConfig::from_registry(&executors, "printer").unwrap();
    /// assert_eq!(config, MailboxConfig::new().stop_priority(Priority::LOW));
    /// assert!(MailboxConfig::from_registry(&executors, "writer").is_none());
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    #[cfg(feature = "esb")]
    pub fn from_registry(executors: &crate::Registry, name: &str) -> Option<Self> {
        executors
            .mailbox_spec(name)
            .map(|spec| MailboxConfig::new().with_file(spec))
    }

    /// These settings with the priorities a file sets.
    #[cfg(feature = "esb")]
    fn with_file(mut self, spec: crate::esb::config::MailboxSpec) -> Self {
        self.default_priority = spec.default.unwrap_or(self.default_priority);
        self.stop_priority = spec.poison_pill.unwrap_or(self.stop_priority);
        self.kill_priority = spec.kill_pill.unwrap_or(self.kill_priority);
        self
    }

    /// Checks the settings; the stage's `spawn` calls it.
    pub(crate) fn check(&self) -> Result<(), SpawnError> {
        if let Some(refused) = &self.refused {
            return Err(refused.clone().into());
        }
        let mut seen: Vec<Priority> = Vec::with_capacity(self.lanes.len());
        for lane in &self.lanes {
            if seen.contains(&lane.priority) {
                return Err(SpawnError::DuplicateLane {
                    priority: lane.priority,
                });
            }
            seen.push(lane.priority);
            if lane.weight == 0 {
                let weight = InvalidSetting::of_lane(lane.priority, "weight", 0, "at least 1");
                return Err(weight.into());
            }
            check_capacity(Some(lane.priority), "capacity", lane.capacity, MAX_CAPACITY)?;
        }
        check_capacity(
            None,
            "default_capacity",
            self.default_capacity,
            MAX_CAPACITY,
        )?;
        if self.lanes.len() > MAX_LANES {
            return Err(SpawnError::TooManyLanes {
                lanes: self.lanes.len(),
                limit: MAX_LANES,
            });
        }
        if self.unlisted != Unlisted::NewLane
            && self.lanes.is_empty()
            && self.picker == Picker::Strict
        {
            return Err(SpawnError::NoLanes {
                unlisted: self.unlisted,
            });
        }
        if self.picker != Picker::Strict {
            if self.lanes.is_empty() || self.unlisted == Unlisted::NewLane {
                return Err(SpawnError::WeightedNeedsFixedLanes {
                    picker: self.picker,
                });
            }
            let sum: u64 = self.lanes.iter().map(|l| u64::from(l.weight)).sum();
            if sum > MAX_CYCLE {
                return Err(SpawnError::WeightsTooLarge {
                    sum,
                    limit: MAX_CYCLE,
                });
            }
        }
        Ok(())
    }
}

/// The first setting of `lane` that only an executor's lane has, as the
/// error that refuses it in a mailbox.
fn executor_only(lane: &LaneConfig) -> Option<InvalidSetting> {
    let refused = |setting, value: String| {
        let expected = "unset: a mailbox's lane has a priority, a weight and a capacity";
        Some(InvalidSetting::of_lane(
            lane.priority,
            setting,
            value,
            expected,
        ))
    };
    if let Some(name) = &lane.name {
        return refused("name", format!("{name:?}"));
    }
    if let Some(max) = lane.max_running {
        return refused("max_running", format!("{max:?}"));
    }
    if let Some(after) = lane.promote_after {
        return refused("promote_after", format!("{after:?}"));
    }
    if lane.when_full != RejectionPolicy::Block {
        return refused("when_full", lane.when_full.as_str().to_owned());
    }
    None
}
