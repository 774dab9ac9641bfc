//! `executors.toml`: its shape, its defaults and the path from the file to
//! [`ExecutorBuilder`], the one place executor settings are validated.
//!
//! Loading is two steps. [`parse`] reads the text into a [`Plan`]: every
//! key known (serde's `deny_unknown_fields`), durations, pickers and rules
//! checked, every rule priority matched against the lanes of the executors
//! that use it. [`Plan::build`] then hands each executor's settings to the
//! builder and maps a [`BuildError`] back to the key that caused it.

use crate::esb::config_error::{ConfigError, Issue};
use crate::esb::rules::{self, RawRules, Rules};
use crate::util::List;
use crate::{
    BuildError, Capacity, Executor, ExecutorBuilder, LaneConfig, MaxRunning, Picker, Priority,
    RejectionPolicy,
};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use toml::Spanned;

// ===== The file's shape =====

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    executors: BTreeMap<Spanned<String>, Spanned<RawExecutor>>,
    #[serde(default)]
    rules: BTreeMap<Spanned<String>, Spanned<RawRules>>,
}

/// `[executors.NAME]` as written. Every key but `lanes` is optional; an
/// omitted key takes the builder's default.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExecutor {
    core_threads: Option<Spanned<usize>>,
    max_threads: Option<Spanned<usize>>,
    keep_alive: Option<Spanned<String>>,
    allow_core_timeout: Option<Spanned<bool>>,
    picker: Option<Spanned<String>>,
    rules: Option<Spanned<String>>,
    lanes: Option<Spanned<Vec<Spanned<RawLane>>>>,
}

/// `[[executors.NAME.lanes]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLane {
    priority: Spanned<u32>,
    capacity: Option<Spanned<RawCapacity>>,
    weight: Option<Spanned<u32>>,
    max_running: Option<Spanned<RawMaxRunning>>,
    promote_after: Option<Spanned<String>>,
    when_full: Option<Spanned<String>>,
}

/// `max_running = 4` (threads) or `max_running = "20%"` (of max_threads).
#[derive(Clone, Copy, Debug)]
struct RawMaxRunning(MaxRunning);

impl<'de> Deserialize<'de> for RawMaxRunning {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MaxRunningVisitor;
        impl Visitor<'_> for MaxRunningVisitor {
            type Value = RawMaxRunning;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number of threads >= 1 or a percentage such as \"20%\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawMaxRunning, E> {
                usize::try_from(v)
                    .map(|n| RawMaxRunning(MaxRunning::Threads(n)))
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawMaxRunning, E> {
                usize::try_from(v)
                    .map(|n| RawMaxRunning(MaxRunning::Threads(n)))
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawMaxRunning, E> {
                v.strip_suffix('%')
                    .and_then(|n| n.trim().parse::<u8>().ok())
                    .map(|p| RawMaxRunning(MaxRunning::Percent(p)))
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        deserializer.deserialize_any(MaxRunningVisitor)
    }
}

/// `capacity = 1000` or `capacity = "unbounded"` (the same as omitting it).
#[derive(Clone, Copy, Debug)]
struct RawCapacity(Capacity);

impl<'de> Deserialize<'de> for RawCapacity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CapacityVisitor;
        impl Visitor<'_> for CapacityVisitor {
            type Value = RawCapacity;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a whole number >= 1 or \"unbounded\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawCapacity, E> {
                usize::try_from(v)
                    .map(|n| RawCapacity(Capacity::Bounded(n)))
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawCapacity, E> {
                usize::try_from(v)
                    .map(|n| RawCapacity(Capacity::Bounded(n)))
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawCapacity, E> {
                if v == "unbounded" {
                    Ok(RawCapacity(Capacity::Unbounded))
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
        }
        deserializer.deserialize_any(CapacityVisitor)
    }
}

// ===== What the file asks for =====

/// One executor's settings with the file's spelling gone, compared on
/// reload to tell a changed executor from an unchanged one.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ExecutorSpec {
    core_threads: Option<usize>,
    max_threads: Option<usize>,
    keep_alive: Option<Duration>,
    allow_core_timeout: Option<bool>,
    picker: Option<Picker>,
    /// In the file's order.
    lanes: Vec<(Priority, LaneConfig)>,
}

/// One executor of a parsed file, ready to build.
#[derive(Debug)]
pub(crate) struct ExecutorPlan {
    pub(crate) name: String,
    pub(crate) spec: ExecutorSpec,
    pub(crate) rules: Option<Arc<Rules>>,
    raw: Spanned<RawExecutor>,
}

/// A parsed and checked file: executors to build and the rules they use.
#[derive(Debug)]
pub(crate) struct Plan {
    source: String,
    path: Option<PathBuf>,
    /// By name.
    pub(crate) executors: Vec<ExecutorPlan>,
    /// Every rule set, used by an executor or not.
    pub(crate) rules: BTreeMap<String, Arc<Rules>>,
}

/// Reads a file into a [`Plan`].
pub(crate) fn read(path: &Path) -> Result<Plan, ConfigError> {
    let source = std::fs::read_to_string(path).map_err(|e| ConfigError::io(path, e))?;
    parse(source, Some(path))
}

/// Parses and checks `source` (from `path`, if any) into a [`Plan`].
pub(crate) fn parse(source: String, path: Option<&Path>) -> Result<Plan, ConfigError> {
    match check(&source) {
        Ok((executors, rules)) => Ok(Plan {
            source,
            path: path.map(Path::to_owned),
            executors,
            rules,
        }),
        Err(issue) => Err(issue.locate(&source, path)),
    }
}

type Checked = (Vec<ExecutorPlan>, BTreeMap<String, Arc<Rules>>);

fn check(source: &str) -> Result<Checked, Issue> {
    let file: RawFile = toml::from_str(source).map_err(|e| Issue::from_toml(&e))?;

    let mut rule_sets = BTreeMap::new();
    for (name, raw) in &file.rules {
        let compiled = rules::compile(name.get_ref(), raw.get_ref())?;
        rule_sets.insert(name.get_ref().clone(), Arc::new(compiled));
    }

    let mut executors = Vec::with_capacity(file.executors.len());
    for (name, raw) in file.executors {
        let name = name.into_inner();
        let spec = spec(raw.get_ref())?;
        let bound = match &raw.get_ref().rules {
            None => None,
            Some(rule_name) => {
                let Some(rules) = rule_sets.get(rule_name.get_ref()) else {
                    return Err(Issue::invalid(
                        rule_name.span(),
                        format!(
                            "rules = {:?} names no rule set (defined: {})",
                            rule_name.get_ref(),
                            List(
                                &rule_sets
                                    .keys()
                                    .map(|k| format!("{k:?}"))
                                    .collect::<Vec<_>>()
                            )
                        ),
                    ));
                };
                check_rule_priorities(&name, &spec, &file.rules, rule_name.get_ref())?;
                Some(Arc::clone(rules))
            }
        };
        executors.push(ExecutorPlan {
            name,
            spec,
            rules: bound,
            raw,
        });
    }
    Ok((executors, rule_sets))
}

/// Parses the duration `key = text`.
fn duration(key: &str, text: &Spanned<String>) -> Result<Duration, Issue> {
    humantime::parse_duration(text.get_ref()).map_err(|err| {
        Issue::invalid(
            text.span(),
            format!(
                "{key} = {:?} is not a duration: {err} (expected a duration such as \
                 \"5s\", \"250ms\" or \"1m 30s\")",
                text.get_ref()
            ),
        )
        .with_source(err)
    })
}

fn lane(raw: &RawLane) -> Result<(Priority, LaneConfig), Issue> {
    let priority = Priority(*raw.priority.get_ref());
    let mut lane = LaneConfig::new(priority);
    if let Some(weight) = &raw.weight {
        lane = lane.weight(*weight.get_ref());
    }
    if let Some(capacity) = &raw.capacity {
        lane = lane.capacity(capacity.get_ref().0);
    }
    if let Some(limit) = &raw.max_running {
        lane = lane.max_running(limit.get_ref().0);
    }
    if let Some(after) = &raw.promote_after {
        lane = lane.promote_after(duration("promote_after", after)?);
    }
    if let Some(policy) = &raw.when_full {
        let parsed = policy.get_ref().parse::<RejectionPolicy>().map_err(|_| {
            Issue::invalid(
                policy.span(),
                format!(
                    "when_full = {:?} is not a policy (allowed: block, reject, caller-runs, \
                     discard-oldest)",
                    policy.get_ref()
                ),
            )
        })?;
        lane = lane.when_full(parsed);
    }
    Ok((priority, lane))
}

fn spec(raw: &RawExecutor) -> Result<ExecutorSpec, Issue> {
    let keep_alive = match &raw.keep_alive {
        None => None,
        Some(text) => Some(duration("keep_alive", text)?),
    };
    let picker = match &raw.picker {
        None => None,
        Some(text) => Some(text.get_ref().parse::<Picker>().map_err(|err| {
            Issue::invalid(
                text.span(),
                format!(
                    "picker = {:?} is not a picker (allowed: smooth, classic, strict)",
                    text.get_ref()
                ),
            )
            .with_source(err)
        })?),
    };
    let lanes = raw
        .lanes
        .iter()
        .flat_map(|lanes| lanes.get_ref())
        .map(|l| lane(l.get_ref()))
        .collect::<Result<_, _>>()?;
    Ok(ExecutorSpec {
        core_threads: raw.core_threads.as_ref().map(|n| *n.get_ref()),
        max_threads: raw.max_threads.as_ref().map(|n| *n.get_ref()),
        keep_alive,
        allow_core_timeout: raw.allow_core_timeout.as_ref().map(|b| *b.get_ref()),
        picker,
        lanes,
    })
}

/// Every priority the rule set `rule_name` can give must name a lane of
/// `executor`; a message could otherwise be refused long after loading.
fn check_rule_priorities(
    executor: &str,
    spec: &ExecutorSpec,
    raw_rules: &BTreeMap<Spanned<String>, Spanned<RawRules>>,
    rule_name: &str,
) -> Result<(), Issue> {
    let Some((_, raw)) = raw_rules.iter().find(|(k, _)| k.get_ref() == rule_name) else {
        return Ok(());
    };
    for priority in rules::priorities(raw.get_ref()) {
        let p = Priority(*priority.get_ref());
        if !spec.lanes.iter().any(|(lane, _)| *lane == p) {
            return Err(Issue::invalid(
                priority.span(),
                format!(
                    "priority = {p} names no lane of executor {executor:?}, which uses these \
                     rules (lanes: {})",
                    List(&spec.lanes.iter().map(|(l, _)| *l).collect::<Vec<_>>())
                ),
            )
            .with_executor(executor));
        }
    }
    Ok(())
}

// ===== Building =====

impl ExecutorSpec {
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
    /// Builds the executor `plan` (one of `self.executors`), placing a
    /// builder error at the key that caused it.
    pub(crate) fn build(&self, plan: &ExecutorPlan) -> Result<Executor, ConfigError> {
        plan.spec
            .builder(&plan.name)
            .build()
            .map_err(|err| build_issue(&plan.raw, err).locate(&self.source, self.path.as_deref()))
    }
}

/// Which key a [`BuildError`] is about, and what to say about it.
fn build_issue(raw: &Spanned<RawExecutor>, err: BuildError) -> Issue {
    let table = raw.span();
    let raw = raw.get_ref();
    let lanes: &[Spanned<RawLane>] = raw.lanes.as_ref().map_or(&[], |l| l.get_ref());
    let lane = |p: Priority| {
        lanes
            .iter()
            .map(Spanned::get_ref)
            .find(|l| *l.priority.get_ref() == p.0)
    };
    let value_span = |value: &Option<Spanned<usize>>| value.as_ref().map(Spanned::span);
    let lane_key =
        |p: Priority, key: fn(&RawLane) -> Option<std::ops::Range<usize>>| lane(p).and_then(key);
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
        BuildError::DuplicatePriority { priority } => {
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
        BuildError::ZeroWeight { priority } => match lane(*priority) {
            Some(RawLane {
                weight: Some(w), ..
            }) => Issue::invalid(w.span(), "weight = 0 is not allowed (weight must be >= 1)"),
            Some(l) => Issue::invalid(
                l.priority.span(),
                format!(
                    "priority = {priority} needs an explicit weight >= 1 (a lane's weight \
                     defaults to its priority, and weight 0 is not allowed)"
                ),
            ),
            None => Issue::invalid(table, err.to_string()),
        },
        BuildError::ZeroCapacity { priority } => {
            let span = lane(*priority)
                .and_then(|l| l.capacity.as_ref())
                .map_or(table, Spanned::span);
            Issue::invalid(
                span,
                "capacity = 0 is not allowed (capacity must be >= 1; omit it for an unbounded lane)",
            )
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
        BuildError::ZeroMaxThreads => Issue::invalid(
            value_span(&raw.max_threads).unwrap_or(table),
            "max_threads = 0 is not allowed (max_threads must be >= 1)",
        ),
        BuildError::WeightsTooLarge { sum, limit } => Issue::invalid(
            raw.lanes.as_ref().map_or(table, Spanned::span),
            format!(
                "lane weights add up to {sum}, more than the limit of {limit} (give the lanes \
                 smaller explicit weights: only their ratios matter)"
            ),
        ),
        BuildError::ZeroMaxRunning { priority } => Issue::invalid(
            lane_key(*priority, |l| l.max_running.as_ref().map(Spanned::span)).unwrap_or(table),
            "max_running = 0 is not allowed (at least 1 thread, or a percentage such as \"20%\")",
        ),
        BuildError::BadMaxRunningPercent { priority, percent } => Issue::invalid(
            lane_key(*priority, |l| l.max_running.as_ref().map(Spanned::span)).unwrap_or(table),
            format!("max_running = \"{percent}%\" is not allowed (a percentage is 1% to 100%)"),
        ),
        BuildError::ZeroPromoteAfter { priority } => Issue::invalid(
            lane_key(*priority, |l| l.promote_after.as_ref().map(Spanned::span)).unwrap_or(table),
            "promote_after must be longer than zero (omit it for no aging)",
        ),
        BuildError::InvalidName { .. } => Issue::invalid(
            table,
            "the executor's name contains a NUL byte, which a thread name cannot hold",
        ),
    };
    issue.with_source(err)
}
