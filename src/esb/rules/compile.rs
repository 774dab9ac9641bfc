//! Checking and compiling `[rules.NAME]`: which keys go together, regexes
//! anchored to the whole value.

use super::raw::{RawCondition, RawRules};
use super::{Condition, Rules};
use crate::Priority;
use crate::esb::config::document::Spanned;
use crate::esb::config_error::Issue;
use regex::{Regex, RegexBuilder};
use std::ops::Range;

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
