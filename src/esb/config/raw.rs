//! The file's shape: `[executors.NAME]`, its lanes and `[rules.NAME]`, read
//! from the parsed document with each value's span. Types and keys are
//! checked here; what the values mean is checked by the caller.

use super::document::{Fields, MAX_RUNNING, Node, POSITIVE, Spanned, U32, WEIGHT, WHOLE};
use crate::esb::config_error::Issue;
use crate::esb::rules::{self, RawRules};
use crate::{Capacity, MaxRunning, Priority};

/// `[amqp.NAME]` holds the RabbitMQ bridge's settings for executor NAME:
/// the `priority-executor-amqp` package reads and checks it; here it is
/// only allowed.
const FILE_KEYS: &[&str] = &["executors", "rules", "mailboxes", "amqp"];
const EXECUTOR_KEYS: &[&str] = &[
    "core_threads",
    "max_threads",
    "keep_alive",
    "allow_core_timeout",
    "picker",
    "rules",
    "lanes",
];
const LANE_KEYS: &[&str] = &[
    "priority",
    "capacity",
    "weight",
    "max_running",
    "promote_after",
    "when_full",
    "name",
];

const MAILBOX_KEYS: &[&str] = &["priority"];
const MAILBOX_PRIORITY_KEYS: &[&str] = &["default", "poison-pill", "kill-pill"];

/// The whole file, executors, rule sets and mailboxes each sorted by name.
#[derive(Debug)]
pub(crate) struct RawFile {
    pub(crate) executors: Vec<(Spanned<String>, Spanned<RawExecutor>)>,
    pub(crate) rules: Vec<(Spanned<String>, Spanned<RawRules>)>,
    pub(crate) mailboxes: Vec<(Spanned<String>, RawMailbox)>,
}

/// `[mailboxes.NAME]` as written: the seed's `priority.default`,
/// `priority.poison-pill` and `priority.kill-pill`, each optional.
#[derive(Debug, Default)]
pub(crate) struct RawMailbox {
    pub(crate) default: Option<Spanned<Priority>>,
    pub(crate) poison_pill: Option<Spanned<Priority>>,
    pub(crate) kill_pill: Option<Spanned<Priority>>,
}

/// `[executors.NAME]` as written. Every key but `lanes` is optional; an
/// omitted key takes the builder's default.
#[derive(Debug)]
pub(crate) struct RawExecutor {
    pub(crate) core_threads: Option<Spanned<usize>>,
    pub(crate) max_threads: Option<Spanned<usize>>,
    pub(crate) keep_alive: Option<Spanned<String>>,
    pub(crate) allow_core_timeout: Option<Spanned<bool>>,
    pub(crate) picker: Option<Spanned<String>>,
    pub(crate) rules: Option<Spanned<String>>,
    pub(crate) lanes: Option<Spanned<Vec<Spanned<RawLane>>>>,
}

/// `[[executors.NAME.lanes]]` as written.
#[derive(Debug)]
pub(crate) struct RawLane {
    pub(crate) priority: Spanned<u32>,
    pub(crate) capacity: Option<Spanned<Capacity>>,
    pub(crate) weight: Option<Spanned<u32>>,
    pub(crate) max_running: Option<Spanned<MaxRunning>>,
    pub(crate) promote_after: Option<Spanned<String>>,
    pub(crate) when_full: Option<Spanned<String>>,
    pub(crate) name: Option<Spanned<String>>,
}

/// Reads the document's root table.
pub(crate) fn file(root: &toml_edit::Table) -> Result<RawFile, Issue> {
    let root = Node::root(root).fields(FILE_KEYS)?;
    let executors = named(&root, "executors", executor)?;
    let rules = named(&root, "rules", |node| {
        let rules = rules::raw(node)?;
        Ok(Spanned::new(rules, node.span()))
    })?;
    let mailboxes = named(&root, "mailboxes", mailbox)?;
    Ok(RawFile {
        executors,
        rules,
        mailboxes,
    })
}

/// The tables under `[KEY.NAME]`, by name.
fn named<T>(
    root: &Fields<'_>,
    key: &str,
    read: impl Fn(&Node<'_>) -> Result<T, Issue>,
) -> Result<Vec<(Spanned<String>, T)>, Issue> {
    let Some(tables) = root.get(key) else {
        return Ok(Vec::new());
    };
    let mut named = tables
        .table()?
        .entries()
        .map(|(name, node)| Ok((name, read(&node)?)))
        .collect::<Result<Vec<_>, Issue>>()?;
    named.sort_by(|(a, _), (b, _)| a.get_ref().cmp(b.get_ref()));
    Ok(named)
}

fn executor(node: &Node<'_>) -> Result<Spanned<RawExecutor>, Issue> {
    let fields = node.fields(EXECUTOR_KEYS)?;
    let lanes = fields.read("lanes", |lanes| {
        let array = lanes.array()?;
        let span = array.span();
        let lanes = array
            .into_inner()
            .iter()
            .map(lane)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Spanned::new(lanes, span))
    })?;
    let executor = RawExecutor {
        core_threads: fields.read("core_threads", |n| n.integer(WHOLE))?,
        max_threads: fields.read("max_threads", |n| n.integer(POSITIVE))?,
        keep_alive: fields.read("keep_alive", Node::string)?,
        allow_core_timeout: fields.read("allow_core_timeout", Node::boolean)?,
        picker: fields.read("picker", Node::string)?,
        rules: fields.read("rules", Node::string)?,
        lanes,
    };
    Ok(Spanned::new(executor, fields.span()))
}

fn lane(node: &Node<'_>) -> Result<Spanned<RawLane>, Issue> {
    let fields = node.fields(LANE_KEYS)?;
    let Some(priority) = fields.read("priority", |n| n.integer(U32))? else {
        return Err(Issue::missing(
            fields.span(),
            "missing key `priority` (each lane declares its priority = N)",
        )
        .with_field("priority"));
    };
    let lane = RawLane {
        priority,
        capacity: fields.read("capacity", capacity)?,
        weight: fields.read("weight", |n| n.integer(WEIGHT))?,
        max_running: fields.read("max_running", max_running)?,
        promote_after: fields.read("promote_after", Node::string)?,
        when_full: fields.read("when_full", Node::string)?,
        name: fields.read("name", Node::string)?,
    };
    Ok(Spanned::new(lane, fields.span()))
}

/// `capacity = 1000` or `capacity = "unbounded"` (the same as omitting it).
fn capacity(node: &Node<'_>) -> Result<Spanned<Capacity>, Issue> {
    const EXPECTED: &str = "a whole number >= 1 or \"unbounded\"";
    let capacity = match (node.as_integer(), node.as_str()) {
        (Some(n), _) => usize::try_from(n)
            .map(Capacity::Bounded)
            .map_err(|_| node.not_allowed(EXPECTED))?,
        (None, Some("unbounded")) => Capacity::Unbounded,
        (None, Some(_)) => return Err(node.not_allowed(EXPECTED)),
        (None, None) => return Err(node.wrong_type(EXPECTED)),
    };
    Ok(Spanned::new(capacity, node.span()))
}

/// `max_running = 4` (threads) or `max_running = "20%"` (of max_threads).
fn max_running(node: &Node<'_>) -> Result<Spanned<MaxRunning>, Issue> {
    const EXPECTED: &str = MAX_RUNNING;
    let limit = match (node.as_integer(), node.as_str()) {
        (Some(n), _) => usize::try_from(n)
            .map(MaxRunning::Threads)
            .map_err(|_| node.not_allowed(EXPECTED))?,
        (None, Some(text)) => text
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<u8>().ok())
            .map(MaxRunning::Percent)
            .ok_or_else(|| node.not_allowed(EXPECTED))?,
        (None, None) => return Err(node.wrong_type(EXPECTED)),
    };
    Ok(Spanned::new(limit, node.span()))
}

fn mailbox(node: &Node<'_>) -> Result<RawMailbox, Issue> {
    let fields = node.fields(MAILBOX_KEYS)?;
    let Some(priorities) = fields.get("priority") else {
        return Ok(RawMailbox::default());
    };
    let priorities = priorities.fields(MAILBOX_PRIORITY_KEYS)?;
    Ok(RawMailbox {
        default: priorities.read("default", priority_level)?,
        poison_pill: priorities.read("poison-pill", priority_level)?,
        kill_pill: priorities.read("kill-pill", priority_level)?,
    })
}

/// `priority.default = 300` or `priority.default = "high"`: a whole number
/// (larger is more important) or one of the seed's level names.
fn priority_level(node: &Node<'_>) -> Result<Spanned<Priority>, Issue> {
    const EXPECTED: &str =
        "a whole number from 0 to 4294967295 or one of \"urgent\", \"high\", \"medium\", \"low\"";
    let priority = match (node.as_integer(), node.as_str()) {
        (Some(n), _) => u32::try_from(n)
            .map(Priority)
            .map_err(|_| node.not_allowed(EXPECTED))?,
        (None, Some(name)) => {
            Priority::from_level_name(name).ok_or_else(|| node.not_allowed(EXPECTED))?
        }
        (None, None) => return Err(node.wrong_type(EXPECTED)),
    };
    Ok(Spanned::new(priority, node.span()))
}
