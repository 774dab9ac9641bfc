//! From checked settings to a running executor: the builder, and a
//! builder error placed back at the key that caused it.

use super::document::{MAX_RUNNING, POSITIVE, PROMOTE_AFTER, WEIGHT};
use super::raw::{RawExecutor, RawLane};
use super::{ExecutorPlan, ExecutorSpec, Plan, Spanned};
use crate::esb::config_error::{ConfigError, Issue};
use crate::pool::PoolConfig;
use crate::{BuildError, Executor, ExecutorBuilder, InvalidSetting, MaxRunning, Priority};

impl ExecutorSpec {
    /// Do these settings differ from `other`'s in nothing but what a
    /// running executor can take in place: `core_threads`, `max_threads`
    /// and `keep_alive`?
    pub(crate) fn differs_only_in_threads(&self, other: &ExecutorSpec) -> bool {
        let mut same = other.clone();
        same.core_threads = self.core_threads;
        same.max_threads = self.max_threads;
        same.keep_alive = self.keep_alive;
        same == *self
    }

    /// The builder for these settings; what is not set keeps the builder's
    /// default.
    pub(crate) fn builder(&self, name: &str) -> ExecutorBuilder {
        let mut builder = Executor::builder().name(name);
        if let Some(n) = self.core_threads {
            builder = builder.core_threads(n);
        }
        if let Some(n) = self.max_threads {
            builder = builder.max_threads(n);
        }
        if let Some(d) = self.keep_alive {
            builder = builder.keep_alive(d);
        }
        if let Some(allow) = self.allow_core_timeout {
            builder = builder.allow_core_timeout(allow);
        }
        if let Some(picker) = self.picker {
            builder = builder.picker(picker);
        }
        for (_, lane) in &self.lanes {
            builder = builder.lane_config(lane.clone());
        }
        builder
    }
}

impl Plan {
    /// Builds the executor `plan` (one of `self.executors`), its builder
    /// first given to `finish` (the code's configure function), placing a
    /// builder error at the key that caused it.
    pub(crate) fn build(
        &self,
        plan: &ExecutorPlan,
        finish: impl FnOnce(ExecutorBuilder) -> ExecutorBuilder,
    ) -> Result<Executor, ConfigError> {
        finish(plan.spec.builder(&plan.name))
            .build()
            .map_err(|err| self.build_error(plan, err))
    }

    /// The thread settings of `plan` (one of `self.executors`) for a
    /// running executor to take in place, from its builder given to
    /// `finish` (the code's configure function) as [`Plan::build`] gives
    /// it, and checked as `build` checks them.
    pub(crate) fn threads(
        &self,
        plan: &ExecutorPlan,
        finish: impl FnOnce(ExecutorBuilder) -> ExecutorBuilder,
    ) -> Result<PoolConfig, ConfigError> {
        finish(plan.spec.builder(&plan.name))
            .pool_config()
            .map_err(|err| self.build_error(plan, err))
    }

    /// Gives `executor` the thread settings `threads` (from
    /// [`Plan::threads`] for `plan`) in place: core and max threads (as a
    /// pair) and the keep-alive.
    pub(crate) fn resize(
        &self,
        plan: &ExecutorPlan,
        executor: &Executor,
        threads: &PoolConfig,
    ) -> Result<(), ConfigError> {
        executor
            .set_threads(threads.core, threads.max)
            .map_err(|err| self.build_error(plan, err))?;
        executor.set_keep_alive(threads.keep_alive);
        Ok(())
    }

    fn build_error(&self, plan: &ExecutorPlan, err: BuildError) -> ConfigError {
        build_issue(plan, err).locate(&self.source, self.path.as_deref())
    }
}

/// Which key a [`BuildError`] is about, and what to say about it.
fn build_issue(plan: &ExecutorPlan, err: BuildError) -> Issue {
    let table = plan.raw.span();
    let raw = plan.raw.get_ref();
    let lanes: &[Spanned<RawLane>] = raw.lanes.as_ref().map_or(&[], |l| l.get_ref());
    let value_span = |value: &Option<Spanned<usize>>| value.as_ref().map(Spanned::span);
    let issue = match &err {
        BuildError::NoLanes => match &raw.lanes {
            Some(lanes) => Issue::invalid(
                lanes.span(),
                "lanes = [] is not allowed (an executor needs at least one lane)",
            ),
            None => Issue::missing(
                table,
                "no lanes (declare at least one [[executors.NAME.lanes]] with a priority)",
            )
            .with_field("lanes"),
        },
        BuildError::DuplicateLane { priority } => {
            let span = lanes
                .iter()
                .filter(|l| *l.get_ref().priority.get_ref() == priority.0)
                .nth(1)
                .map_or(table, |l| l.get_ref().priority.span());
            Issue::invalid(
                span,
                format!("priority = {priority} is declared twice (each priority has one lane)"),
            )
        }
        BuildError::Invalid(invalid) => {
            invalid_issue(raw, invalid).unwrap_or_else(|| Issue::invalid(table, err.to_string()))
        }
        BuildError::CoreExceedsMax { core, max } => {
            match (value_span(&raw.core_threads), value_span(&raw.max_threads)) {
                (Some(span), _) => Issue::invalid(
                    span,
                    format!(
                        "core_threads = {core} is greater than max_threads = {max} \
                         (core_threads must be <= max_threads)"
                    ),
                ),
                (None, Some(span)) => Issue::invalid(
                    span,
                    format!(
                        "max_threads = {max} is less than the default core_threads = {core} \
                         (one per CPU); set core_threads <= max_threads"
                    ),
                ),
                (None, None) => Issue::invalid(table, err.to_string()),
            }
        }
        BuildError::WeightsTooLarge { sum, limit } => weights_too_large(lanes, *limit)
            .unwrap_or_else(|| {
                Issue::invalid(
                    raw.lanes.as_ref().map_or(table, Spanned::span),
                    format!(
                        "lane weights add up to {sum}, more than the limit of {limit} (give the \
                         lanes smaller explicit weights: only their ratios matter)"
                    ),
                )
            }),
        BuildError::DuplicateLaneName { name } => {
            let span = lanes
                .iter()
                .filter_map(|l| l.get_ref().name.as_ref())
                .filter(|n| n.get_ref() == name)
                .nth(1)
                .map_or(table, Spanned::span);
            Issue::invalid(
                span,
                format!(
                    "name = {name:?} is given to two lanes (a lane's name is unique in its executor)"
                ),
            )
        }
        BuildError::InvalidName { .. } => Issue::invalid(
            plan.name_span.clone(),
            "the name contains a NUL byte, which a thread name cannot hold (an executor's \
             threads are named after it)",
        ),
        // Not a value of the file: the operating system refused a thread.
        BuildError::CannotStartThread { .. } => Issue::invalid(
            value_span(&raw.core_threads).unwrap_or(table),
            err.to_string(),
        ),
    };
    issue.with_source(err)
}

/// The file's lane of this priority.
fn raw_lane(raw: &RawExecutor, priority: Priority) -> Option<&RawLane> {
    let lanes: &[Spanned<RawLane>] = raw.lanes.as_ref().map_or(&[], |l| l.get_ref());
    lanes
        .iter()
        .map(Spanned::get_ref)
        .find(|l| *l.priority.get_ref() == priority.0)
}

/// An invalid setting placed at its key in the file, with the value as
/// the file wrote it and what the file allows; `None` if the file does not
/// set it (the setting's default is not at fault then).
fn invalid_issue(raw: &RawExecutor, invalid: &InvalidSetting) -> Option<Issue> {
    let lane = || raw_lane(raw, invalid.lane?);
    let (span, value, expected) = match invalid.setting {
        "max_threads" => {
            let span = raw.max_threads.as_ref()?.span();
            (span, invalid.value.clone(), POSITIVE.to_owned())
        }
        "weight" => {
            let span = lane()?.weight.as_ref()?.span();
            (span, invalid.value.clone(), WEIGHT.to_owned())
        }
        "capacity" => {
            let span = lane()?.capacity.as_ref()?.span();
            let expected = format!("{POSITIVE}; omit it for an unbounded lane");
            (span, invalid.value.clone(), expected)
        }
        "max_running" => {
            let max_running = lane()?.max_running.as_ref()?;
            let value = match max_running.get_ref() {
                MaxRunning::Threads(n) => n.to_string(),
                MaxRunning::Percent(p) => format!("\"{p}%\""),
            };
            (max_running.span(), value, MAX_RUNNING.to_owned())
        }
        "promote_after" => {
            let after = lane()?.promote_after.as_ref()?;
            let value = format!("{:?}", after.get_ref());
            (
                after.span(),
                value,
                format!("{PROMOTE_AFTER}; omit it for no aging"),
            )
        }
        _ => return None,
    };
    let setting = invalid.setting;
    Some(Issue::invalid(
        span,
        format!("{setting} = {value} is not allowed (expected {expected})"),
    ))
}

/// The lane whose weight, added to those of the lanes declared before it,
/// takes the sum past `limit`: an issue at its `weight`, or at its
/// `priority` when the weight is the default (the priority).
fn weights_too_large(lanes: &[Spanned<RawLane>], limit: u64) -> Option<Issue> {
    let mut before = 0u64;
    for lane in lanes.iter().map(Spanned::get_ref) {
        let priority = *lane.priority.get_ref();
        let weight = lane.weight.as_ref().map_or(priority, |w| *w.get_ref());
        let sum = before + u64::from(weight);
        if sum <= limit {
            before = sum;
            continue;
        }
        let room = limit - before;
        let allowed = if before == 0 {
            format!("allowed: 1 to {limit}")
        } else if room == 0 {
            format!("the lanes declared before it already weigh {before}, the limit")
        } else {
            format!("the lanes declared before it weigh {before}, which leaves 1 to {room}")
        };
        let reason = if before == 0 {
            format!("an executor's lane weights add up to at most {limit}")
        } else {
            format!("the lane weights add up to {sum} with it, more than the limit of {limit}")
        };
        let issue = match &lane.weight {
            Some(w) => Issue::invalid(
                w.span(),
                format!(
                    "weight = {weight} is too large: {reason} ({allowed}; only the ratios of \
                     the weights matter)"
                ),
            ),
            None => Issue::invalid(
                lane.priority.span(),
                format!(
                    "priority = {priority} needs an explicit weight: the default, its priority, \
                     is too large: {reason} ({allowed}; only the ratios of the weights matter)"
                ),
            ),
        };
        return Some(issue);
    }
    None
}
