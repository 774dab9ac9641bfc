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

use crate::esb::config::{Fields, Node, Spanned, U32};
use crate::esb::config_error::Issue;
use crate::{Message, Priority};
use regex::{Regex, RegexBuilder};
use std::ops::Range;

// ===== The file's shape =====

/// `[rules.NAME]` as written.
#[derive(Debug)]
pub(crate) struct RawRules {
    default_priority: Option<Spanned<u32>>,
    when: Vec<Spanned<RawCondition>>,
}

/// One `when` entry or one nested condition, as written. Both share one
/// shape; which keys are allowed where is checked in [`compile`].
#[derive(Debug)]
pub(crate) struct RawCondition {
    priority: Option<Spanned<u32>>,
    /// `header`, or `property`: the same key.
    header: Option<Spanned<String>>,
    equals: Option<Spanned<String>>,
    matches: Option<Spanned<String>>,
    exists: Option<Spanned<bool>>,
    ignore_case: Option<Spanned<bool>>,
    all: Option<Spanned<Vec<Spanned<RawCondition>>>>,
    any: Option<Spanned<Vec<Spanned<RawCondition>>>>,
    not: Option<Spanned<Box<RawCondition>>>,
}

const RULES_KEYS: &[&str] = &["default_priority", "when"];
const CONDITION_KEYS: &[&str] = &[
    "priority",
    "header",
    "property",
    "equals",
    "matches",
    "exists",
    "ignore_case",
    "all",
    "any",
    "not",
];

/// Reads `[rules.NAME]`.
pub(crate) fn raw(node: &Node<'_>) -> Result<RawRules, Issue> {
    let fields = node.fields(RULES_KEYS)?;
    let when = fields.read("when", conditions)?;
    Ok(RawRules {
        default_priority: fields.read("default_priority", |n| n.integer(U32))?,
        when: when.map_or_else(Vec::new, Spanned::into_inner),
    })
}

/// `all = [...]`, `any = [...]` and `when`: an array of conditions.
fn conditions(node: &Node<'_>) -> Result<Spanned<Vec<Spanned<RawCondition>>>, Issue> {
    let array = node.array()?;
    let span = array.span();
    let conditions = array
        .into_inner()
        .iter()
        .map(|element| Ok(Spanned::new(raw_condition(element)?, element.span())))
        .collect::<Result<_, Issue>>()?;
    Ok(Spanned::new(conditions, span))
}

fn raw_condition(node: &Node<'_>) -> Result<RawCondition, Issue> {
    let fields = node.fields(CONDITION_KEYS)?;
    Ok(RawCondition {
        priority: fields.read("priority", |n| n.integer(U32))?,
        header: header(&fields)?,
        equals: fields.read("equals", Node::string)?,
        matches: fields.read("matches", Node::string)?,
        exists: fields.read("exists", Node::boolean)?,
        ignore_case: fields.read("ignore_case", Node::boolean)?,
        all: fields.read("all", conditions)?,
        any: fields.read("any", conditions)?,
        not: fields.read("not", |n| {
            Ok(Spanned::new(Box::new(raw_condition(n)?), n.span()))
        })?,
    })
}

/// `header = "NAME"` or `property = "NAME"`, not both.
fn header(fields: &Fields<'_>) -> Result<Option<Spanned<String>>, Issue> {
    match (fields.key("header"), fields.key("property")) {
        (Some(header), Some(property)) => {
            let second = if header.start > property.start {
                header
            } else {
                property
            };
            Err(Issue::invalid(
                second,
                "duplicate key `header` (`header` and `property` are the same key)",
            )
            .with_field("header"))
        }
        (Some(_), None) => fields.read("header", Node::string),
        (None, _) => fields.read("property", Node::string),
    }
}

// ===== Compiled rules =====

/// The priority rules of one `[rules.NAME]` table: `when` entries tried in
/// order, the first that matches gives the priority, else
/// `default_priority`.
///
/// An executor names its rule set with `rules = "NAME"`; the registry then
/// uses it to pick each message's priority in
/// [`Executors::enqueue_sequence`](crate::Executors::enqueue_sequence).
///
/// # Examples
///
/// ```
/// use priority_executor::{Executors, Message, Priority};
///
/// let executors = Executors::from_toml_str(r#"
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
/// let urgent = Message::builder().property("priorityid", "ABC").build();
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
    /// use priority_executor::Executors;
    ///
    /// let executors = Executors::from_toml_str(
    ///     "[executors.e]\nrules = \"r\"\nlanes = [{ priority = 1 }]\n[rules.r]\n",
    /// )?;
    /// assert_eq!(executors.rules("e").map(|r| r.name()), Some("r"));
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
    /// use priority_executor::{Executors, Priority};
    ///
    /// let executors = Executors::from_toml_str(
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

/// Every priority the rules can give, with the span that gives it.
pub(crate) fn priorities(raw: &RawRules) -> impl Iterator<Item = &Spanned<u32>> {
    raw.default_priority.iter().chain(
        raw.when
            .iter()
            .filter_map(|w| w.get_ref().priority.as_ref()),
    )
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

// ===== Compiling =====

/// Checks and compiles `[rules.NAME]`.
pub(crate) fn compile(name: &str, raw: &RawRules) -> Result<Rules, Issue> {
    let mut when = Vec::with_capacity(raw.when.len());
    for entry in &raw.when {
        let Some(priority) = &entry.get_ref().priority else {
            return Err(Issue::missing(
                entry.span(),
                "this `when` entry has no `priority = N` (the priority a matching message gets)",
            )
            .with_field("priority"));
        };
        let condition = condition(entry.get_ref(), entry.span())?;
        when.push((Priority(*priority.get_ref()), condition));
    }
    Ok(Rules {
        name: name.to_owned(),
        default: raw
            .default_priority
            .as_ref()
            .map(|p| Priority(*p.get_ref())),
        when,
    })
}

fn nested(raw: &RawCondition, span: Range<usize>) -> Result<Condition, Issue> {
    if let Some(priority) = &raw.priority {
        return Err(Issue::invalid(
            priority.span(),
            format!(
                "priority = {} is only allowed on a `when` entry, not inside all, any or not",
                priority.get_ref()
            ),
        ));
    }
    condition(raw, span)
}

const KINDS: &str = "a condition is one of: header = \"NAME\" with equals, matches or exists; \
                     all = [...]; any = [...]; not = {...}";

fn condition(raw: &RawCondition, span: Range<usize>) -> Result<Condition, Issue> {
    // Which of the four forms, with the span of the key that chose it.
    let mut forms: Vec<(&str, Range<usize>)> = Vec::new();
    if let Some(h) = &raw.header {
        forms.push(("header", h.span()));
    }
    if let Some(a) = &raw.all {
        forms.push(("all", a.span()));
    }
    if let Some(a) = &raw.any {
        forms.push(("any", a.span()));
    }
    if let Some(n) = &raw.not {
        forms.push(("not", n.span()));
    }
    match forms.as_slice() {
        [] if raw.equals.is_some() || raw.matches.is_some() || raw.exists.is_some() => {
            Err(Issue::missing(
                span,
                "equals, matches and exists need header = \"NAME\" to say which property they test",
            )
            .with_field("header"))
        }
        [] => Err(Issue::missing(
            span,
            format!("no condition given ({KINDS})"),
        )),
        [_, (second, second_span), ..] => Err(Issue::invalid(
            second_span.clone(),
            format!(
                "`{}` and `{second}` given together; {KINDS} (combine them with all = [...])",
                forms[0].0
            ),
        )),
        [(form, _)] => {
            if *form != "header" {
                for (key, given) in [
                    ("equals", raw.equals.as_ref().map(Spanned::span)),
                    ("matches", raw.matches.as_ref().map(Spanned::span)),
                    ("exists", raw.exists.as_ref().map(Spanned::span)),
                    ("ignore_case", raw.ignore_case.as_ref().map(Spanned::span)),
                ] {
                    if let Some(span) = given {
                        return Err(Issue::invalid(
                            span,
                            format!("`{key}` belongs with header = \"NAME\", not with `{form}`"),
                        ));
                    }
                }
            }
            match *form {
                "all" | "any" => {
                    let list = if *form == "all" { &raw.all } else { &raw.any };
                    let Some(list) = list else {
                        return Err(Issue::missing(span, KINDS));
                    };
                    if list.get_ref().is_empty() {
                        return Err(Issue::invalid(
                            list.span(),
                            format!("{form} = [] has no conditions; give at least one"),
                        ));
                    }
                    let inner = list
                        .get_ref()
                        .iter()
                        .map(|c| nested(c.get_ref(), c.span()))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(if *form == "all" {
                        Condition::All(inner)
                    } else {
                        Condition::Any(inner)
                    })
                }
                "not" => {
                    let Some(inner) = &raw.not else {
                        return Err(Issue::missing(span, KINDS));
                    };
                    Ok(Condition::Not(Box::new(nested(
                        inner.get_ref(),
                        inner.span(),
                    )?)))
                }
                _ => property_test(raw, span),
            }
        }
    }
}

fn property_test(raw: &RawCondition, span: Range<usize>) -> Result<Condition, Issue> {
    let Some(header) = &raw.header else {
        return Err(Issue::missing(span, KINDS));
    };
    let name = header.get_ref().clone();
    let ignore_case = raw.ignore_case.as_ref().is_some_and(|b| *b.get_ref());
    let mut tests: Vec<(&str, Range<usize>)> = Vec::new();
    if let Some(e) = &raw.equals {
        tests.push(("equals", e.span()));
    }
    if let Some(m) = &raw.matches {
        tests.push(("matches", m.span()));
    }
    if let Some(x) = &raw.exists {
        tests.push(("exists", x.span()));
    }
    if let [first, (second, second_span), ..] = tests.as_slice() {
        return Err(Issue::invalid(
            second_span.clone(),
            format!(
                "`{}` and `{second}` given together; a property test uses one of equals, \
                 matches, exists (combine several with all = [...] or any = [...])",
                first.0
            ),
        ));
    }
    if let Some(equals) = &raw.equals {
        let value = if ignore_case {
            equals
                .get_ref()
                .chars()
                .flat_map(char::to_lowercase)
                .collect()
        } else {
            equals.get_ref().clone()
        };
        return Ok(Condition::Equals {
            name,
            value,
            ignore_case,
        });
    }
    if let Some(pattern) = &raw.matches {
        return Ok(Condition::Matches {
            name,
            regex: anchored_regex(pattern, ignore_case)?,
        });
    }
    if let Some(exists) = &raw.exists {
        if let Some(ic) = &raw.ignore_case {
            return Err(Issue::invalid(
                ic.span(),
                "ignore_case applies to equals and matches, not to exists",
            ));
        }
        return Ok(Condition::Exists {
            name,
            present: *exists.get_ref(),
        });
    }
    Err(Issue::missing(
        header.span(),
        format!(
            "header = {:?} needs one of equals = \"...\", matches = \"regex\", exists = true",
            header.get_ref()
        ),
    ))
}

/// Compiles `pattern` so that it must match a whole value.
fn anchored_regex(pattern: &Spanned<String>, ignore_case: bool) -> Result<Regex, Issue> {
    let bad = |err: regex::Error| {
        // The parser's message spans several lines with a caret diagram;
        // its last line says what is wrong.
        let text = err.to_string();
        let reason = text
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("error: "))
            .unwrap_or(text.trim())
            .to_owned();
        Issue::invalid(
            pattern.span(),
            format!(
                "matches = {:?} is not a valid regex: {reason} (syntax: https://docs.rs/regex/#syntax)",
                pattern.get_ref()
            ),
        )
        .with_source(err)
    };
    // Checked alone first: wrapped, "a)|(b" would compile to an
    // unanchored alternation instead of failing.
    Regex::new(pattern.get_ref()).map_err(bad)?;
    RegexBuilder::new(&format!("^(?:{})$", pattern.get_ref()))
        .case_insensitive(ignore_case)
        .build()
        .map_err(bad)
}
