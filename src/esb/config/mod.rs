//! `executors.toml`: its shape, its defaults and the path from the file to
//! [`ExecutorBuilder`], the one place executor settings are validated.
//!
//! Loading is two steps. [`parse`] reads the text into a [`Plan`]: the
//! document read with every value's type and every key checked
//! (`raw.rs`, over the typed reading of `document.rs`), durations, pickers
//! and rules checked, every rule priority matched against the lanes of the
//! executors that use it. [`Plan::build`] (`build.rs`) then hands each
//! executor's settings to the builder and maps a
//! [`BuildError`](crate::BuildError) back to the key that caused it.

mod build;
pub(crate) mod document;
mod raw;

pub(crate) use document::Spanned;
use document::{KEEP_ALIVE, PROMOTE_AFTER};

use crate::esb::config_error::{ConfigError, Issue};
use crate::esb::rules::{self, RawRules, Rules};
use crate::util::List;
use crate::{LaneConfig, Picker, Priority, RejectionPolicy};
use raw::{RawExecutor, RawLane};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

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
    /// The name's key in the file.
    name_span: Range<usize>,
    pub(crate) spec: ExecutorSpec,
    pub(crate) rules: Option<Arc<Rules>>,
    raw: Spanned<RawExecutor>,
}

/// The priorities of one `[mailboxes.NAME]` section (the seed's
/// `priority.default`, `priority.poison-pill`, `priority.kill-pill`); what
/// is left out keeps the mailbox's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MailboxSpec {
    pub(crate) default: Option<Priority>,
    pub(crate) poison_pill: Option<Priority>,
    pub(crate) kill_pill: Option<Priority>,
}

/// A parsed and checked file: executors to build, the rules they use and
/// the mailbox settings of actor stages.
#[derive(Debug)]
pub(crate) struct Plan {
    source: String,
    path: Option<PathBuf>,
    /// By name.
    pub(crate) executors: Vec<ExecutorPlan>,
    /// Every rule set, used by an executor or not.
    pub(crate) rules: BTreeMap<String, Arc<Rules>>,
    /// Every `[mailboxes.NAME]` section, by name (read by the actor layer,
    /// which loom builds leave out).
    #[cfg_attr(any(not(feature = "actor"), loom), allow(dead_code))]
    pub(crate) mailboxes: BTreeMap<String, MailboxSpec>,
}

impl Plan {
    /// The executor `name` of the file, or an error naming the ones the
    /// file has.
    pub(crate) fn executor_named(&self, name: &str) -> Result<&ExecutorPlan, ConfigError> {
        self.executors
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| {
                let defined: Vec<&str> = self.executors.iter().map(|e| e.name.as_str()).collect();
                ConfigError::no_executor(self.path.as_deref(), name, &defined)
            })
    }

    /// Checks that the executor `name` of the file has a lane named by each
    /// of `lanes` (what the code needs); the error is placed at the
    /// executor's lanes and lists the names they have.
    pub(crate) fn check_lanes(&self, name: &str, lanes: &[String]) -> Result<(), ConfigError> {
        let plan = self.executor_named(name)?;
        let named: Vec<&str> = plan
            .spec
            .lanes
            .iter()
            .filter_map(|(_, lane)| lane.name.as_deref())
            .collect();
        let Some(missing) = lanes.iter().find(|l| !named.contains(&l.as_str())) else {
            return Ok(());
        };
        let raw = plan.raw.get_ref();
        let span = raw.lanes.as_ref().map_or(plan.raw.span(), Spanned::span);
        let has = if named.is_empty() {
            "none of its lanes has a name".to_owned()
        } else {
            let quoted: Vec<String> = named.iter().map(|n| format!("{n:?}")).collect();
            format!("its lanes are named {}", quoted.join(", "))
        };
        let issue = Issue::missing(
            span,
            format!(
                "no lane named {missing:?}, which the code needs (give a lane name = {missing:?}; \
                 {has})"
            ),
        )
        .with_field("name")
        .with_executor(name);
        Err(issue.locate(&self.source, self.path.as_deref()))
    }

    /// The settings of `[mailboxes.NAME]`, or an error naming the sections
    /// the file has.
    #[cfg_attr(any(not(feature = "actor"), loom), allow(dead_code))]
    pub(crate) fn mailbox(&self, name: &str) -> Result<MailboxSpec, ConfigError> {
        self.mailboxes.get(name).copied().ok_or_else(|| {
            let defined: Vec<&str> = self.mailboxes.keys().map(String::as_str).collect();
            ConfigError::no_mailbox(self.path.as_deref(), name, &defined)
        })
    }
}

/// Reads a file into a [`Plan`].
pub(crate) fn read(path: &Path) -> Result<Plan, ConfigError> {
    let source = std::fs::read_to_string(path).map_err(|e| ConfigError::unreadable(path, e))?;
    parse(source, Some(path))
}

/// Parses and checks `source` (from `path`, if any) into a [`Plan`].
pub(crate) fn parse(source: String, path: Option<&Path>) -> Result<Plan, ConfigError> {
    match check(&source) {
        Ok((executors, rules, mailboxes)) => Ok(Plan {
            source,
            path: path.map(Path::to_owned),
            executors,
            rules,
            mailboxes,
        }),
        Err(issue) => Err(issue.locate(&source, path)),
    }
}

type Checked = (
    Vec<ExecutorPlan>,
    BTreeMap<String, Arc<Rules>>,
    BTreeMap<String, MailboxSpec>,
);

fn check(source: &str) -> Result<Checked, Issue> {
    let document = toml_edit::ImDocument::parse(source).map_err(|e| Issue::syntax(&e, source))?;
    let file = raw::file(document.as_table())?;

    let mut rule_sets = BTreeMap::new();
    for (name, raw) in &file.rules {
        let compiled = rules::compile(name.get_ref(), raw.get_ref())?;
        rule_sets.insert(name.get_ref().clone(), Arc::new(compiled));
    }

    let mut executors = Vec::with_capacity(file.executors.len());
    for (name, raw) in file.executors {
        let name_span = name.span();
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
            name_span,
            spec,
            rules: bound,
            raw,
        });
    }
    let mailboxes = file
        .mailboxes
        .into_iter()
        .map(|(name, raw)| {
            let priority = |p: Option<Spanned<Priority>>| p.map(Spanned::into_inner);
            let spec = MailboxSpec {
                default: priority(raw.default),
                poison_pill: priority(raw.poison_pill),
                kill_pill: priority(raw.kill_pill),
            };
            (name.into_inner(), spec)
        })
        .collect();
    Ok((executors, rule_sets, mailboxes))
}

/// Parses the duration `key = text`; `expected` says which ones are allowed.
fn duration(key: &str, text: &Spanned<String>, expected: &str) -> Result<Duration, Issue> {
    humantime::parse_duration(text.get_ref()).map_err(|err| {
        Issue::invalid(
            text.span(),
            format!(
                "{key} = {:?} is not a duration: {err} (expected {expected})",
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
        lane = lane.capacity(*capacity.get_ref());
    }
    if let Some(limit) = &raw.max_running {
        lane = lane.max_running(*limit.get_ref());
    }
    if let Some(after) = &raw.promote_after {
        lane = lane.promote_after(duration("promote_after", after, PROMOTE_AFTER)?);
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
    if let Some(name) = &raw.name {
        if name.get_ref().is_empty() {
            return Err(Issue::invalid(
                name.span(),
                "name = \"\" is not allowed (a lane's name is a non-empty string)",
            ));
        }
        lane = lane.name(name.get_ref().clone());
    }
    Ok((priority, lane))
}

fn spec(raw: &RawExecutor) -> Result<ExecutorSpec, Issue> {
    let keep_alive = match &raw.keep_alive {
        None => None,
        Some(text) => Some(duration("keep_alive", text, KEEP_ALIVE)?),
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
    raw_rules: &[(Spanned<String>, Spanned<RawRules>)],
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
