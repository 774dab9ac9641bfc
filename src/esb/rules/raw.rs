//! `[rules.NAME]` as written, read from the parsed document.

use crate::esb::config::document::{Fields, Node, Spanned, U32};
use crate::esb::config_error::Issue;

/// `[rules.NAME]` as written.
#[derive(Debug)]
pub(crate) struct RawRules {
    pub(super) default_priority: Option<Spanned<u32>>,
    pub(super) when: Vec<Spanned<RawCondition>>,
}

/// One `when` entry or one nested condition, as written. Both share one
/// shape; which keys are allowed where is checked in
/// [`compile`](super::compile).
#[derive(Debug)]
pub(crate) struct RawCondition {
    pub(super) priority: Option<Spanned<u32>>,
    /// `header`, or `property`: the same key.
    pub(super) header: Option<Spanned<String>>,
    pub(super) equals: Option<Spanned<String>>,
    pub(super) matches: Option<Spanned<String>>,
    pub(super) exists: Option<Spanned<bool>>,
    pub(super) ignore_case: Option<Spanned<bool>>,
    pub(super) all: Option<Spanned<Vec<Spanned<RawCondition>>>>,
    pub(super) any: Option<Spanned<Vec<Spanned<RawCondition>>>>,
    pub(super) not: Option<Spanned<Box<RawCondition>>>,
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

/// Every priority the rules can give, with the span that gives it.
pub(crate) fn priorities(raw: &RawRules) -> impl Iterator<Item = &Spanned<u32>> {
    raw.default_priority.iter().chain(
        raw.when
            .iter()
            .filter_map(|w| w.get_ref().priority.as_ref()),
    )
}
