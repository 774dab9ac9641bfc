//! Load errors of `executors.toml`, each placed at a file, line and column
//! and named by the executor or rule, the field, the bad value and what is
//! allowed.
//!
//! Every check (serde's own: unknown keys, wrong types; ours: durations,
//! regexes, rule priorities; the core builder's) reports a byte span of the
//! source and a message. The span is then turned into a position and a
//! *context* by walking the parser's spans of the document, so a
//! check never has to know where in the file it is, and an error inside an
//! inline table or a dotted key is placed as well as one under a `[table]`
//! header.

use std::error::Error;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

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
    /// The settings are valid but the executor could not start (the
    /// operating system refused a thread).
    Start,
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
            scope: String::new(),
            field: None,
            detail: format!("cannot read the file: {err}"),
            source: Some(Box::new(err)),
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
    pub(crate) executor: Option<String>,
    /// Overrides the key found from the span (a missing key has no span of
    /// its own).
    pub(crate) field: Option<String>,
    /// For serde's type and value errors, which know neither the key nor
    /// the text of the value: `detail` follows `KEY = VALUE ` once placed.
    pub(crate) quote_value: bool,
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
            source: None,
        }
    }

    pub(crate) fn missing(span: Range<usize>, detail: impl Into<String>) -> Self {
        Issue {
            kind: ConfigErrorKind::MissingKey,
            ..Issue::invalid(span, detail)
        }
    }

    pub(crate) fn start(span: Range<usize>, detail: impl Into<String>) -> Self {
        Issue {
            kind: ConfigErrorKind::Start,
            ..Issue::invalid(span, detail)
        }
    }

    pub(crate) fn with_field(mut self, field: &str) -> Self {
        self.field = Some(field.to_owned());
        self
    }

    pub(crate) fn with_executor(mut self, executor: &str) -> Self {
        self.executor = Some(executor.to_owned());
        self
    }

    pub(crate) fn with_source(mut self, source: impl Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// Classifies one of serde's or the TOML parser's errors by its message
    /// and rewords it to name what is allowed.
    pub(crate) fn from_toml(err: &toml::de::Error) -> Self {
        let message = err.message().trim();
        let mut field = None;
        let mut quote_value = false;
        let (kind, detail) = if let Some(rest) = message.strip_prefix("unknown field `") {
            let (key, allowed) = rest.split_once('`').unwrap_or((rest, ""));
            let allowed = allowed
                .trim_start_matches(", expected ")
                .trim_start_matches("one of ")
                .replace('`', "");
            let detail = if allowed.is_empty() || allowed.starts_with("there are no fields") {
                format!("unknown key `{key}` (no keys are allowed here)")
            } else {
                format!("unknown key `{key}` (allowed: {allowed})")
            };
            (ConfigErrorKind::UnknownKey, detail)
        } else if let Some(rest) = message.strip_prefix("invalid type: ") {
            let (found, expected) = rest.split_once(", expected ").unwrap_or((rest, "?"));
            let found = found.split(' ').next().unwrap_or(found);
            quote_value = true;
            (
                ConfigErrorKind::WrongType,
                format!(
                    "has the wrong type: expected {}, found {}",
                    friendly(expected),
                    friendly_found(found)
                ),
            )
        } else if let Some(rest) = message.strip_prefix("invalid value: ") {
            let expected = rest.split_once(", expected ").map_or("?", |(_, e)| e);
            quote_value = true;
            (
                ConfigErrorKind::InvalidValue,
                format!("is not allowed (expected {})", friendly(expected)),
            )
        } else if let Some(rest) = message.strip_prefix("missing field `") {
            let key = rest.split('`').next().unwrap_or(rest);
            field = Some(key.to_owned());
            (ConfigErrorKind::MissingKey, format!("missing key `{key}`"))
        } else if message.starts_with("duplicate field `") {
            (
                ConfigErrorKind::InvalidValue,
                format!(
                    "{} (`header` and `property` are the same key)",
                    message.replace("field", "key")
                ),
            )
        } else {
            // Parse errors are several lines (found, expected); keep one.
            (ConfigErrorKind::Syntax, message.replace('\n', "; "))
        };
        Issue {
            kind,
            span: err.span(),
            detail,
            executor: None,
            field,
            quote_value,
            source: None,
        }
    }

    /// Places the issue in `source` (loaded from `path`, if any).
    pub(crate) fn locate(self, source: &str, path: Option<&Path>) -> ConfigError {
        let mut error = Inner {
            kind: self.kind,
            path: path.map(Path::to_owned),
            position: None,
            executor: self.executor.clone(),
            rule: None,
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
        if let Some(context) = Context::find(source, span.start) {
            if error.executor.is_none() {
                error.executor = context.executor.clone();
            }
            error.rule = context.rule.clone();
            error.field = context.field.clone();
            error.scope = context.scope(self.executor.as_deref());
        }
        if self.field.is_some() {
            error.field = self.field;
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

/// Names the type serde found as a reader of TOML would.
fn friendly_found(found: &str) -> &'static str {
    match found {
        "string" => "a string",
        "integer" => "an integer",
        "floating" => "a float",
        "boolean" => "a boolean",
        "map" => "a table",
        "sequence" => "an array",
        _ => "another type",
    }
}

/// Rewords serde's type names for a reader of a TOML file.
fn friendly(expected: &str) -> String {
    match expected {
        "usize" | "u64" => "a whole number >= 0".to_owned(),
        "u32" => "a whole number from 0 to 4294967295".to_owned(),
        "a boolean" => "true or false".to_owned(),
        "a map" => "a table".to_owned(),
        "a sequence" => "an array".to_owned(),
        other => other.replace('`', ""),
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

// ===== Context: which executor, lane, rule and key an offset is in =====

/// One step of the path from the document root to an offset.
#[derive(Debug)]
enum Step {
    Key(String),
    /// An array element, with the `priority` it declares (to name a lane).
    Index(usize, Option<i64>),
}

/// Where an offset lies: the executor or rule, the lane or `when` entry,
/// and the key.
#[derive(Debug, Default)]
struct Context {
    executor: Option<String>,
    rule: Option<String>,
    /// "lane priority 1", "when #2, all #1" and the like.
    inner: Vec<String>,
    field: Option<String>,
}

impl Context {
    /// The context of `offset` in `source`, from the parser's spans of
    /// every key and value (serde's spans miss implicit tables such as
    /// `executors` in `[executors.x]`).
    fn find(source: &str, offset: usize) -> Option<Context> {
        let document = toml_edit::ImDocument::parse(source).ok()?;
        let mut path = Vec::new();
        walk_table(document.as_table(), offset, &mut path);
        Some(Context::from_path(&path))
    }

    fn from_path(path: &[Step]) -> Context {
        let mut context = Context::default();
        let mut steps = path.iter();
        match (steps.next(), steps.next()) {
            (Some(Step::Key(top)), Some(Step::Key(name))) if top == "executors" => {
                context.executor = Some(name.clone());
            }
            (Some(Step::Key(top)), Some(Step::Key(name))) if top == "rules" => {
                context.rule = Some(name.clone());
            }
            (Some(Step::Key(key)), _) => {
                context.field = Some(key.clone());
                return context;
            }
            _ => return context,
        }
        let mut last_key: Option<&str> = None;
        for step in steps {
            match step {
                Step::Key(key) => {
                    // A key followed by another key names a table on the
                    // way, such as `not = { ... }`.
                    if let Some(table) = last_key.replace(key) {
                        context.inner.push(table.to_owned());
                    }
                }
                Step::Index(i, priority) => {
                    let label = match (last_key, priority) {
                        (Some("lanes"), Some(p)) => format!("lane priority {p}"),
                        (Some("lanes"), None) => format!("lane #{}", i + 1),
                        (Some(key), _) => format!("{key} #{}", i + 1),
                        (None, _) => format!("#{}", i + 1),
                    };
                    context.inner.push(label);
                    last_key = None;
                }
            }
        }
        context.field = last_key.map(str::to_owned);
        context
    }

    fn scope(&self, executor_override: Option<&str>) -> String {
        let mut parts = Vec::new();
        if let Some(rule) = &self.rule {
            parts.push(format!("rule \"{rule}\""));
        } else if let Some(executor) = executor_override.or(self.executor.as_deref()) {
            parts.push(format!("executor \"{executor}\""));
        }
        parts.extend(self.inner.iter().cloned());
        parts.join(", ")
    }
}

fn contains(span: Option<Range<usize>>, offset: usize) -> bool {
    span.is_some_and(|s| s.contains(&offset) || (s.is_empty() && s.start == offset))
}

fn item_contains(item: &toml_edit::Item, offset: usize) -> bool {
    use toml_edit::Item;
    if contains(item.span(), offset) {
        return true;
    }
    // An implicit table has no span of its own, and a table's span does not
    // cover sub-tables declared under their own headers (`[[x.lanes]]`):
    // look at what it holds.
    match item {
        Item::Table(table) => table.iter().any(|(key, child)| {
            contains(table.key(key).and_then(toml_edit::Key::span), offset)
                || item_contains(child, offset)
        }),
        Item::ArrayOfTables(tables) => tables.iter().any(|t| contains(t.span(), offset)),
        Item::Value(_) | Item::None => false,
    }
}

fn walk_table(table: &toml_edit::Table, offset: usize, path: &mut Vec<Step>) {
    for (key, item) in table.iter() {
        if contains(table.key(key).and_then(toml_edit::Key::span), offset) {
            path.push(Step::Key(key.to_owned()));
            return;
        }
        if item_contains(item, offset) {
            path.push(Step::Key(key.to_owned()));
            walk_item(item, offset, path);
            return;
        }
    }
}

fn walk_item(item: &toml_edit::Item, offset: usize, path: &mut Vec<Step>) {
    use toml_edit::Item;
    match item {
        Item::Table(table) => walk_table(table, offset, path),
        Item::ArrayOfTables(tables) => {
            for (i, table) in tables.iter().enumerate() {
                if contains(table.span(), offset) {
                    let priority = table.get("priority").and_then(Item::as_integer);
                    path.push(Step::Index(i, priority));
                    walk_table(table, offset, path);
                    return;
                }
            }
        }
        Item::Value(value) => walk_value(value, offset, path),
        Item::None => {}
    }
}

fn walk_value(value: &toml_edit::Value, offset: usize, path: &mut Vec<Step>) {
    use toml_edit::Value;
    match value {
        Value::Array(array) => {
            for (i, element) in array.iter().enumerate() {
                if contains(element.span(), offset) {
                    let priority = element
                        .as_inline_table()
                        .and_then(|t| t.get("priority"))
                        .and_then(Value::as_integer);
                    path.push(Step::Index(i, priority));
                    walk_value(element, offset, path);
                    return;
                }
            }
        }
        Value::InlineTable(table) => {
            for (key, element) in table.iter() {
                if contains(table.key(key).and_then(toml_edit::Key::span), offset) {
                    path.push(Step::Key(key.to_owned()));
                    return;
                }
                if contains(element.span(), offset) {
                    path.push(Step::Key(key.to_owned()));
                    walk_value(element, offset, path);
                    return;
                }
            }
        }
        _ => {}
    }
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

    #[test]
    fn context_names_lane_by_priority() {
        let text = "[executors.x]\n[[executors.x.lanes]]\npriority = 7\nweight = 0\n";
        let offset = text.find("0\n").expect("present");
        let context = Context::find(text, offset).expect("valid toml");
        assert_eq!(context.executor.as_deref(), Some("x"));
        assert_eq!(context.field.as_deref(), Some("weight"));
        assert_eq!(context.scope(None), "executor \"x\", lane priority 7");
    }

    #[test]
    fn context_in_inline_tables_and_nested_conditions() {
        let text = "[rules.r]\nwhen = [{priority = 1, any = [{header = \"a\", equals = 3}]}]\n";
        let offset = text.find('3').expect("present");
        let context = Context::find(text, offset).expect("valid toml");
        assert_eq!(context.rule.as_deref(), Some("r"));
        assert_eq!(context.field.as_deref(), Some("equals"));
        assert_eq!(context.scope(None), "rule \"r\", when #1, any #1");
    }
}
