//! [`Issue`]: a mistake found by a check, with the span of the source it
//! is about, and its placing in the file as a [`ConfigError`].

use super::context::Context;
use super::{ConfigError, ConfigErrorKind, Inner};
use std::error::Error;
use std::ops::Range;
use std::path::Path;

/// A mistake found by some check, with the span of the source it is about.
#[derive(Debug)]
pub(crate) struct Issue {
    pub(crate) kind: ConfigErrorKind,
    pub(crate) span: Option<Range<usize>>,
    pub(crate) detail: String,
    /// Overrides the executor found from the span (a rule priority checked
    /// against an executor's lanes is placed in the rule but names the
    /// executor).
    pub(crate) executor: Option<Box<str>>,
    /// Overrides the key found from the span (a missing key has no span of
    /// its own).
    pub(crate) field: Option<Box<str>>,
    /// For type and value errors found where the key is not known (an
    /// array element, say): `detail` follows `KEY = VALUE ` once placed.
    pub(crate) quote_value: bool,
    /// A copy of the source that parses, to find the context in when the
    /// source itself does not (an integer too large for TOML).
    pub(crate) placed_in: Option<Box<str>>,
    pub(crate) source: Option<Box<dyn Error + Send + Sync + 'static>>,
}

impl Issue {
    pub(crate) fn invalid(span: Range<usize>, detail: impl Into<String>) -> Self {
        Issue {
            kind: ConfigErrorKind::InvalidValue,
            span: Some(span),
            detail: detail.into(),
            executor: None,
            field: None,
            quote_value: false,
            placed_in: None,
            source: None,
        }
    }

    /// A key the table does not know; `span` is the key's.
    pub(crate) fn unknown_key(span: Range<usize>, detail: impl Into<String>) -> Self {
        Issue {
            kind: ConfigErrorKind::UnknownKey,
            ..Issue::invalid(span, detail)
        }
    }

    /// A value of the wrong type; `detail` follows `KEY = VALUE `.
    pub(crate) fn wrong_type(span: Range<usize>, detail: impl Into<String>) -> Self {
        Issue {
            kind: ConfigErrorKind::WrongType,
            quote_value: true,
            ..Issue::invalid(span, detail)
        }
    }

    /// A value of the right type that is not allowed; `detail` follows
    /// `KEY = VALUE `.
    pub(crate) fn not_allowed(span: Range<usize>, detail: impl Into<String>) -> Self {
        Issue {
            quote_value: true,
            ..Issue::invalid(span, detail)
        }
    }

    pub(crate) fn missing(span: Range<usize>, detail: impl Into<String>) -> Self {
        Issue {
            kind: ConfigErrorKind::MissingKey,
            ..Issue::invalid(span, detail)
        }
    }

    pub(crate) fn with_field(mut self, field: &str) -> Self {
        self.field = Some(field.into());
        self
    }

    pub(crate) fn with_executor(mut self, executor: &str) -> Self {
        self.executor = Some(executor.into());
        self
    }

    pub(crate) fn with_source(mut self, source: impl Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// Places the issue in `source` (loaded from `path`, if any).
    pub(crate) fn locate(self, source: &str, path: Option<&Path>) -> ConfigError {
        let mut error = Inner {
            kind: self.kind,
            path: path.map(Path::to_owned),
            position: None,
            executor: self.executor.as_deref().map(str::to_owned),
            rule: None,
            mailbox: None,
            scope: String::new(),
            field: None,
            detail: self.detail,
            source: self.source,
        };
        let Some(span) = self.span else {
            return ConfigError(Box::new(error));
        };
        error.position = Some(line_column(source, span.start));
        if error.detail.is_empty() {
            // The parser gives no message for some characters (a control
            // character in a comment): name the character.
            error.detail = match source.get(span.start..).and_then(|s| s.chars().next()) {
                Some(c) => format!("unexpected character {c:?} (not valid TOML here)"),
                None => "unexpected end of the text (not valid TOML)".to_owned(),
            };
        }
        // Parsed again only for an error, and only if the text parses; a
        // syntax error has no structure to name.
        let parsed = self.placed_in.as_deref().unwrap_or(source);
        if let Some(context) = Context::find(parsed, span.start) {
            if error.executor.is_none() {
                error.executor = context.executor.clone();
            }
            error.rule = context.rule.clone();
            error.mailbox = context.mailbox.clone();
            error.field = context.field.clone();
            error.scope = context.scope(self.executor.as_deref());
        }
        if let Some(field) = self.field {
            error.field = Some(field.into());
        }
        if self.quote_value {
            let value = quote(source, span);
            error.detail = match &error.field {
                Some(field) => format!("{field} = {value} {}", error.detail),
                None => format!("{value} {}", error.detail),
            };
        }
        ConfigError(Box::new(error))
    }
}

/// The text of a value as written, shortened to one line.
fn quote(source: &str, span: Range<usize>) -> String {
    let text = source.get(span).unwrap_or("").trim();
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 40 || line.len() < text.len() {
        let short: String = line.chars().take(40).collect();
        format!("{short}...")
    } else {
        line.to_owned()
    }
}

/// 1-based line and column (in characters) of byte `offset`.
pub(crate) fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_counts_characters() {
        let text = "a\nbé = 1\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 2), (2, 1));
        // 'é' is two bytes but one column.
        assert_eq!(line_column(text, 6), (2, 4));
        assert_eq!(line_column(text, 999), (3, 1));
    }
}
