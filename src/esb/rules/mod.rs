//! Message priority rules: which priority a [`Message`] gets, decided by
//! conditions on its properties, as the Synapse HTTP transport's priority
//! configuration did.
//!
//! # Grammar
//!
//! ```toml
//! [rules.visa]
//! default_priority = 1          # optional; else the executor's lowest lane
//!
//! [[rules.visa.when]]           # tried in order, first match wins
//! priority = 10
//! header = "PRIORITYID"         # or `property`: the same key
//! equals = "ABC"
//!
//! [[rules.visa.when]]
//! priority = 5
//! any = [
//!   { header = "tier", matches = "gold|platinum", ignore_case = true },
//!   { all = [ { header = "vip", exists = true },
//!             { not = { header = "channel", equals = "batch" } } ] },
//! ]
//! ```
//!
//! A condition is exactly one of:
//! - a test of one property: `header = "NAME"` with one of `equals = "v"`
//!   (exact; `ignore_case = true` folds case), `matches = "regex"` (the
//!   regex must match the *whole* value; `ignore_case` applies too) or
//!   `exists = true | false`. A missing property equals and matches
//!   nothing;
//! - `all = [ conditions ]`: every one holds;
//! - `any = [ conditions ]`: at least one holds;
//! - `not = { condition }`: it does not hold.
//!
//! Each `when` entry is a condition plus its `priority`.
//!
//! Here: the compiled rules and how a message is matched. Beside it: the
//! rules as written, read from the file (`raw.rs`), and their checking and
//! compiling (`compile.rs`).

mod compile;
mod raw;

pub(crate) use compile::compile;
pub(crate) use raw::{RawRules, priorities, raw};

use crate::{Message, Priority};
use regex::Regex;

/// The priority rules of one `[rules.NAME]` table: `when` entries tried in
/// order, the first that matches gives the priority, else
/// `default_priority`.
///
/// An executor names its rule set with `rules = "NAME"`; the registry then
/// uses it to pick each message's priority in
/// [`Registry::enqueue_sequence`](crate::Registry::enqueue_sequence).
///
/// # Examples
///
/// ```
/// use priority_executor::{Registry, Message, Priority};
///
/// let executors = Registry::from_toml_str(r#"
///     [executors.visa]
///     rules = "visa"
///     lanes = [{ priority = 10 }, { priority = 1 }]
///
///     [rules.visa]
///     default_priority = 1
///     [[rules.visa.when]]
///     priority = 10
///     header = "PRIORITYID"
///     equals = "ABC"
/// "#)?;
/// let rules = executors.rules("visa").expect("bound");
/// let urgent = Message::new().with_property("priorityid", "ABC");
/// assert_eq!(rules.priority_for(&urgent), Some(Priority(10)));
/// assert_eq!(rules.priority_for(&Message::new()), Some(Priority(1)));
/// # executors.shutdown();
/// # Ok::<(), priority_executor::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Rules {
    name: String,
    default: Option<Priority>,
    when: Vec<(Priority, Condition)>,
}

#[derive(Clone, Debug)]
enum Condition {
    Equals {
        name: String,
        value: String,
        ignore_case: bool,
    },
    Matches {
        name: String,
        regex: Regex,
    },
    Exists {
        name: String,
        present: bool,
    },
    All(Vec<Condition>),
    Any(Vec<Condition>),
    Not(Box<Condition>),
}

impl Rules {
    /// The rule set's name, the `NAME` of `[rules.NAME]`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Rules};
    ///
    /// let executors = Registry::from_toml_str(
    ///     "[executors.e]\nrules = \"r\"\nlanes = [{ priority = 1 }]\n[rules.r]\n",
    /// )?;
    /// assert_eq!(executors.rules("e").as_deref().map(Rules::name), Some("r"));
    /// # executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The priority of a message no `when` entry matches, if the rule set
    /// gives one.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Priority};
    ///
    /// let executors = Registry::from_toml_str(
    ///     "[executors.e]\nrules = \"r\"\nlanes = [{ priority = 1 }]\n\
    ///      [rules.r]\ndefault_priority = 1\n",
    /// )?;
    /// let rules = executors.rules("e").expect("bound");
    /// assert_eq!(rules.default_priority(), Some(Priority(1)));
    /// # executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn default_priority(&self) -> Option<Priority> {
        self.default
    }

    /// The priority of the first `when` entry that matches `message`, else
    /// the default priority; `None` if neither applies (the registry then
    /// uses the executor's lowest lane).
    ///
    /// # Examples
    ///
    /// See [`Rules`].
    pub fn priority_for(&self, message: &Message) -> Option<Priority> {
        self.when
            .iter()
            .find(|(_, condition)| condition.holds(message))
            .map(|(priority, _)| *priority)
            .or(self.default)
    }
}

impl Condition {
    fn holds(&self, message: &Message) -> bool {
        match self {
            Condition::Equals {
                name,
                value,
                ignore_case,
            } => message.property(name).is_some_and(|actual| {
                if *ignore_case {
                    // `value` is stored lowercased.
                    actual
                        .chars()
                        .flat_map(char::to_lowercase)
                        .eq(value.chars())
                } else {
                    actual == value
                }
            }),
            Condition::Matches { name, regex } => {
                message.property(name).is_some_and(|v| regex.is_match(v))
            }
            Condition::Exists { name, present } => message.property(name).is_some() == *present,
            Condition::All(all) => all.iter().all(|c| c.holds(message)),
            Condition::Any(any) => any.iter().any(|c| c.holds(message)),
            Condition::Not(inner) => !inner.holds(message),
        }
    }
}
