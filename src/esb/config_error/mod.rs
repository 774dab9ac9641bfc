//! Load errors of `executors.toml`, each placed at a file, line and column
//! and named by the executor or rule, the field, the bad value and what is
//! allowed.
//!
//! Every check (the parser's; the reading of the document: unknown keys,
//! wrong types, missing keys; durations, regexes, rule priorities; the
//! core builder's) reports a byte span of the source and a message. The span is then turned into a position and a
//! *context* by walking the parser's spans of the document, so a
//! check never has to know where in the file it is, and an error inside an
//! inline table or a dotted key is placed as well as one under a `[table]`
//! header.

use std::error::Error;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

mod context;

use context::Context;

/// What kind of mistake a [`ConfigError`] reports.
///
/// # Examples
///
/// ```
/// use priority_executor::{ConfigErrorKind, Executors};
///
/// let err = Executors::from_toml_str("[executors.a]\nisFixed = true\n").unwrap_err();
/// assert_eq!(err.kind(), ConfigErrorKind::UnknownKey);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The file could not be read.
    Io,
    /// The text is not valid TOML.
    Syntax,
    /// A key the format does not know (often a misspelling).
    UnknownKey,
    /// A required key is missing.
    MissingKey,
    /// A value of the wrong type, such as a string where a number belongs.
    WrongType,
    /// A value of the right type that is not allowed: weight 0, a bad
    /// duration, an unknown picker, a regex that does not compile, a rule
    /// priority that names no lane, `core_threads` above `max_threads`.
    InvalidValue,
}

/// An error loading executors from TOML.
///
/// Its `Display` is one line: the place, the executor or rule, and what is
/// wrong with which value and what is allowed, for example
/// `executors.toml:7:12: executor "visa_priority_exec", lane priority 1: weight = 0 is not allowed (weight must be >= 1)`.
/// Text loaded with [`Executors::from_toml_str`](crate::Executors::from_toml_str)
/// has no file name and shows `line 7, column 12` instead.
///
/// # Examples
///
/// ```
/// use priority_executor::{ConfigErrorKind, Executors};
///
/// let toml = "[executors.visa]\n\
///             [[executors.visa.lanes]]\n\
///             priority = 1\n\
///             weight = 0\n";
/// let err = Executors::from_toml_str(toml).unwrap_err();
/// assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
/// assert_eq!((err.line(), err.column()), (Some(4), Some(10)));
/// assert_eq!(err.executor(), Some("visa"));
/// assert_eq!(err.field(), Some("weight"));
/// assert_eq!(
///     err.to_string(),
///     "line 4, column 10: executor \"visa\", lane priority 1: \
///      weight = 0 is not allowed (weight must be >= 1)"
/// );
/// ```
#[derive(Debug)]
pub struct ConfigError(Box<Inner>);

// Boxed: a `Result<_, ConfigError>` stays one pointer wide on the error side.
#[derive(Debug)]
struct Inner {
    kind: ConfigErrorKind,
    path: Option<PathBuf>,
    position: Option<(usize, usize)>,
    executor: Option<String>,
    rule: Option<String>,
    mailbox: Option<String>,
    scope: String,
    field: Option<String>,
    detail: String,
    source: Option<Box<dyn Error + Send + Sync + 'static>>,
}

impl ConfigError {
    /// What kind of mistake this is.
    ///
    /// # Examples
    ///
    /// See [`ConfigError`].
    pub fn kind(&self) -> ConfigErrorKind {
        self.0.kind
    }

    /// The file, when the executors were loaded from a path.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Executors;
    /// use std::path::Path;
    ///
    /// let err = Executors::from_path("no/such/executors.toml").unwrap_err();
    /// assert_eq!(err.path(), Some(Path::new("no/such/executors.toml")));
    /// ```
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }

    /// The line of the mistake, counting from 1 (`None` for a file that
    /// could not be read).
    ///
    /// # Examples
    ///
    /// See [`ConfigError`].
    pub fn line(&self) -> Option<usize> {
        self.0.position.map(|(line, _)| line)
    }

    /// The column of the mistake, in characters counting from 1.
    ///
    /// # Examples
    ///
    /// See [`ConfigError`].
    pub fn column(&self) -> Option<usize> {
        self.0.position.map(|(_, column)| column)
    }

    /// The executor the mistake is in, or whose lanes a rule failed to name.
    ///
    /// # Examples
    ///
    /// See [`ConfigError`].
    pub fn executor(&self) -> Option<&str> {
        self.0.executor.as_deref()
    }

    /// The rule set the mistake is in.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Executors;
    ///
    /// let toml = "[rules.visa]\ndefault_priority = -1\n";
    /// let err = Executors::from_toml_str(toml).unwrap_err();
    /// assert_eq!(err.rule(), Some("visa"));
    /// assert_eq!(err.field(), Some("default_priority"));
    /// ```
    pub fn rule(&self) -> Option<&str> {
        self.0.rule.as_deref()
    }

    /// The `[mailboxes.NAME]` section the mistake is in, or the one asked
    /// for and not found.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Executors;
    ///
    /// let toml = "[mailboxes.printer]\npriority.poison-pill = \"highest\"\n";
    /// let err = Executors::from_toml_str(toml).unwrap_err();
    /// assert_eq!(err.mailbox(), Some("printer"));
    /// assert_eq!(err.field(), Some("priority.poison-pill"));
    /// assert!(err.detail().starts_with("priority.poison-pill = \"highest\" is not allowed"));
    /// ```
    pub fn mailbox(&self) -> Option<&str> {
        self.0.mailbox.as_deref()
    }

    /// The key whose value (or whose own name) is wrong, if the mistake is
    /// in one key.
    ///
    /// # Examples
    ///
    /// See [`ConfigError`].
    pub fn field(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    /// The message without the place and context: what is wrong and what is
    /// allowed.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Executors;
    ///
    /// let err = Executors::from_toml_str("[executors.a]\npicker = \"fair\"\n").unwrap_err();
    /// assert_eq!(
    ///     err.detail(),
    ///     "picker = \"fair\" is not a picker (allowed: smooth, classic, strict)"
    /// );
    /// ```
    pub fn detail(&self) -> &str {
        &self.0.detail
    }

    pub(crate) fn io(path: &Path, err: std::io::Error) -> Self {
        ConfigError(Box::new(Inner {
            kind: ConfigErrorKind::Io,
            path: Some(path.to_owned()),
            position: None,
            executor: None,
            rule: None,
            mailbox: None,
            scope: String::new(),
            field: None,
            detail: format!("cannot read the file: {err}"),
            source: Some(Box::new(err)),
        }))
    }
}

impl ConfigError {
    /// The file (`path`, if any) has no `[mailboxes.NAME]` section named
    /// `name`; `defined` are the ones it has.
    #[cfg_attr(any(not(feature = "actor"), loom), allow(dead_code))]
    pub(crate) fn no_mailbox(path: Option<&Path>, name: &str, defined: &[&str]) -> Self {
        let defined = if defined.is_empty() {
            "none is".to_owned()
        } else {
            let quoted: Vec<String> = defined.iter().map(|n| format!("{n:?}")).collect();
            format!("defined: {}", quoted.join(", "))
        };
        ConfigError(Box::new(Inner {
            kind: ConfigErrorKind::MissingKey,
            path: path.map(Path::to_owned),
            position: None,
            executor: None,
            rule: None,
            mailbox: Some(name.to_owned()),
            scope: String::new(),
            field: None,
            detail: format!("no [mailboxes.{name}] section ({defined})"),
            source: None,
        }))
    }
}

impl ConfigError {
    /// The file (`path`, if any) has no `[executors.NAME]` section named
    /// `name`, which the code asked for; `defined` are the ones it has.
    pub(crate) fn no_executor(path: Option<&Path>, name: &str, defined: &[&str]) -> Self {
        let defined = if defined.is_empty() {
            "none is".to_owned()
        } else {
            let quoted: Vec<String> = defined.iter().map(|n| format!("{n:?}")).collect();
            format!("defined: {}", quoted.join(", "))
        };
        ConfigError(Box::new(Inner {
            kind: ConfigErrorKind::MissingKey,
            path: path.map(Path::to_owned),
            position: None,
            executor: Some(name.to_owned()),
            rule: None,
            mailbox: None,
            scope: String::new(),
            field: None,
            detail: format!("no [executors.{name}] section ({defined})"),
            source: None,
        }))
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let this = &self.0;
        match (&this.path, this.position) {
            (Some(path), Some((line, column))) => {
                write!(f, "{}:{line}:{column}: ", path.display())?
            }
            (Some(path), None) => write!(f, "{}: ", path.display())?,
            (None, Some((line, column))) => write!(f, "line {line}, column {column}: ")?,
            (None, None) => {}
        }
        if !this.scope.is_empty() {
            write!(f, "{}: ", this.scope)?;
        }
        f.write_str(&this.detail)
    }
}

impl Error for ConfigError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn Error + 'static))
    }
}

// ===== Issue: an error before it is placed =====

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

    /// The parser's error. An integer too large (or small) for TOML is a
    /// parse error too; it is told apart by the text at the error, not by
    /// the error's wording, and placed in its executor or rule and key.
    pub(crate) fn syntax(err: &toml_edit::TomlError, source: &str) -> Self {
        if let Some(issue) = err
            .span()
            .and_then(|span| out_of_range_integer(source, span.start))
        {
            return issue;
        }
        Issue {
            kind: ConfigErrorKind::Syntax,
            span: err.span(),
            // Parse errors are several lines (found, expected); keep one.
            detail: err.message().trim().replace('\n', "; "),
            executor: None,
            field: None,
            quote_value: false,
            placed_in: None,
            source: None,
        }
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

/// The integer literal starting at `offset`, if it is one TOML cannot hold
/// (beyond 64 bits signed): an issue placed at the literal, with the
/// context found in a copy of `source` that has `0` in its place.
fn out_of_range_integer(source: &str, offset: usize) -> Option<Issue> {
    let rest = source.get(offset..)?;
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-')))
        .unwrap_or(rest.len());
    let literal = &rest[..len];
    let negative = literal.starts_with('-');
    let unsigned = literal.trim_start_matches(['+', '-']);
    let (radix, digits) = match unsigned.get(..2) {
        Some("0x") => (16, &unsigned[2..]),
        Some("0o") => (8, &unsigned[2..]),
        Some("0b") => (2, &unsigned[2..]),
        _ => (10, unsigned),
    };
    // TOML's integer grammar: digits, single underscores between them, no
    // sign on a prefixed integer, no leading zero on a decimal one.
    let well_formed = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.chars().all(|c| c == '_' || c.is_digit(radix))
        && (radix == 10 || unsigned.len() == literal.len())
        && !(radix == 10 && digits.len() > 1 && digits.starts_with('0'));
    if !well_formed {
        return None;
    }
    let magnitude = u128::from_str_radix(&digits.replace('_', ""), radix).unwrap_or(u128::MAX);
    let limit = if negative {
        u128::from(i64::MIN.unsigned_abs())
    } else {
        u128::from(i64::MAX.unsigned_abs())
    };
    if magnitude <= limit {
        return None;
    }
    let detail = if negative {
        format!("is too small (TOML integers go down to {})", i64::MIN)
    } else {
        format!("is too large (TOML integers go up to {})", i64::MAX)
    };
    let span = offset..offset + len;
    let placed_in = format!("{}0{}", &source[..offset], &source[span.end..]);
    Some(Issue {
        quote_value: true,
        placed_in: Some(placed_in.into()),
        ..Issue::invalid(span, detail)
    })
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
