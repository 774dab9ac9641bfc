//! From settings to a running executor: the checks of
//! [`ExecutorBuilder::build`], and the thread settings they resolve.

use super::ExecutorBuilder;
use crate::error::{BuildError, InvalidSetting, check_capacity, check_threads};
use crate::executor::Executor;
use crate::lane::config::MaxRunning;
use crate::lane::picker::MAX_CYCLE;
use crate::pool::{PoolConfig, Shared};

impl ExecutorBuilder {
    /// The thread settings this builder asks for, with the defaults
    /// resolved, checked as [`build`](Self::build) checks them.
    pub(crate) fn pool_config(&self) -> Result<PoolConfig, BuildError> {
        let cpus = num_cpus::get().max(1);
        // The default core fits an explicit max (as rusty_pool's does).
        let core = self
            .core_threads
            .unwrap_or_else(|| self.max_threads.map_or(cpus, |max| cpus.min(max)));
        let max = self.max_threads.unwrap_or_else(|| core.max(cpus));
        check_threads(core, max)?;
        Ok(PoolConfig {
            core,
            max,
            keep_alive: self.keep_alive,
            allow_core_timeout: self.allow_core_timeout,
        })
    }

    /// Checks the settings and creates the executor. No thread starts until
    /// the first job (or [`Executor::prestart_core_threads`](crate::Executor::prestart_core_threads)).
    ///
    /// # Errors
    ///
    /// A [`BuildError`] naming the first wrong setting: no lanes, a
    /// duplicate priority, a weight or capacity of 0, `core_threads` above
    /// `max_threads`, `max_threads` of 0, or weights summing above 65 536.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{BuildError, Capacity, Executor, Priority};
    ///
    /// let err = Executor::builder()
    ///     .core_threads(4)
    ///     .max_threads(2)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err, BuildError::CoreExceedsMax { core: 4, max: 2 });
    /// ```
    pub fn build(self) -> Result<Executor, BuildError> {
        if self.lanes.is_empty() {
            return Err(BuildError::NoLanes);
        }
        // Checked after the lanes, as the errors are documented.
        let threads = self.pool_config();
        let mut lanes = self.lanes;
        // Highest priority first; the order is the lanes' index everywhere.
        lanes.sort_by_key(|l| std::cmp::Reverse(l.priority));
        for pair in lanes.windows(2) {
            if pair[0].priority == pair[1].priority {
                return Err(BuildError::DuplicateLane {
                    priority: pair[0].priority,
                });
            }
        }
        for lane in &lanes {
            let priority = lane.priority;
            let invalid = |setting, value: &dyn std::fmt::Display, expected| {
                Err(InvalidSetting::of_lane(priority, setting, value, expected).into())
            };
            if lane.weight == 0 {
                return invalid("weight", &0, "at least 1");
            }
            check_capacity(Some(priority), "capacity", lane.capacity, usize::MAX)?;
            match lane.max_running {
                Some(MaxRunning::Threads(0)) => {
                    return invalid("max_running", &"0 threads", "at least 1 thread");
                }
                Some(MaxRunning::Percent(p)) if p == 0 || p > 100 => {
                    let value = format!("{p}%");
                    return invalid("max_running", &value, "1 to 100 percent of max_threads");
                }
                _ => {}
            }
            if lane.promote_after == Some(std::time::Duration::ZERO) {
                return invalid("promote_after", &"0s", "longer than zero");
            }
        }
        let mut names: Vec<&str> = lanes.iter().filter_map(|l| l.name.as_deref()).collect();
        names.sort_unstable();
        if let Some(twice) = names.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(BuildError::DuplicateLaneName {
                name: twice[0].to_owned(),
            });
        }
        let sum: u64 = lanes.iter().map(|l| u64::from(l.weight)).sum();
        if sum > MAX_CYCLE {
            return Err(BuildError::WeightsTooLarge {
                sum,
                limit: MAX_CYCLE,
            });
        }
        if self.name.contains('\0') {
            return Err(BuildError::InvalidName { name: self.name });
        }
        let config = threads?;
        if config.core > 0 {
            crate::pool::probe_thread(config.core, self.threads.stack_size)?;
        }
        Ok(Executor::from_shared(Shared::new(
            self.name,
            config,
            self.picker,
            &lanes,
            self.hooks,
            self.threads,
            self.record_waits,
        )))
    }
}
