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
//!
//! Here: the public error. `issue.rs`: a check's mistake and its placing;
//! `syntax.rs`: the parser's errors; `context.rs`: what a byte offset of the
//! file is in.

use std::error::Error;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

mod context;
mod issue;
mod syntax;

pub(crate) use issue::Issue;

/// What kind of mistake a [`ConfigError`] reports.
///
/// # Examples
///
/// ```
/// use priority_executor::{ConfigErrorKind, Registry};
///
/// let err = Registry::from_toml_str("[executors.a]\nisFixed = true\n").unwrap_err();
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
    /// The registry has been shut down, so a
    /// [reload](crate::Registry::reload) is refused, whatever the file
    /// holds: it would start executors after the shutdown.
    ShutDown,
}

/// An error loading executors from TOML.
///
/// Its `Display` is one line: the place, the executor or rule, and what is
/// wrong with which value and what is allowed, for example
/// `executors.toml:7:12: executor "visa_priority_exec", lane priority 1: weight = 0 is not allowed (expected a whole number from 1 to 65536)`.
/// Text loaded with [`Registry::from_toml_str`](crate::Registry::from_toml_str)
/// has no file name and shows `line 7, column 12` instead.
///
/// # Examples
///
/// ```
/// use priority_executor::{ConfigErrorKind, Registry};
///
/// let toml = "[executors.visa]\n\
///             [[executors.visa.lanes]]\n\
///             priority = 1\n\
///             weight = 0\n";
/// let err = Registry::from_toml_str(toml).unwrap_err();
/// assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
/// assert_eq!((err.line(), err.column()), (Some(4), Some(10)));
/// assert_eq!(err.executor(), Some("visa"));
/// assert_eq!(err.field(), Some("weight"));
/// assert_eq!(
///     err.to_string(),
///     "line 4, column 10: executor \"visa\", lane priority 1: \
///      weight = 0 is not allowed (expected a whole number from 1 to 65536)"
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
    /// use priority_executor::Registry;
    /// use std::path::Path;
    ///
    /// let err = Registry::from_path("no/such/executors.toml").unwrap_err();
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
    /// use priority_executor::Registry;
    ///
    /// let toml = "[rules.visa]\ndefault_priority = -1\n";
    /// let err = Registry::from_toml_str(toml).unwrap_err();
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
    /// use priority_executor::Registry;
    ///
    /// let toml = "[mailboxes.printer]\npriority.poison-pill = \"highest\"\n";
    /// let err = Registry::from_toml_str(toml).unwrap_err();
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
    /// use priority_executor::Registry;
    ///
    /// let err = Registry::from_toml_str("[executors.a]\npicker = \"fair\"\n").unwrap_err();
    /// assert_eq!(
    ///     err.detail(),
    ///     "picker = \"fair\" is not a picker (allowed: smooth, classic, strict)"
    /// );
    /// ```
    pub fn detail(&self) -> &str {
        &self.0.detail
    }

    /// The file at `path` could not be read (kind
    /// [`Io`](ConfigErrorKind::Io)); `err` is its [`source`](Error::source).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{ConfigError, ConfigErrorKind};
    /// use std::io;
    ///
    /// let err = ConfigError::unreadable("executors.toml", io::Error::from(io::ErrorKind::NotFound));
    /// assert_eq!(err.kind(), ConfigErrorKind::Io);
    /// assert!(err.to_string().starts_with("executors.toml: cannot read the file: "), "{err}");
    /// ```
    pub fn unreadable(path: impl AsRef<Path>, err: std::io::Error) -> Self {
        let path = path.as_ref();
        let mut error = Self::bare(ConfigErrorKind::Io, format!("cannot read the file: {err}"));
        error.0.path = Some(path.to_owned());
        error.0.source = Some(Box::new(err));
        error
    }
}

impl ConfigError {
    /// A mistake in a table of `executors.toml` that another crate reads
    /// (the RabbitMQ bridge reads `[amqp.NAME]`), placed and worded as the
    /// registry's own: `span`, the bytes of `text` the mistake is about (a
    /// key or a value), gives the line, the column, the table and the key;
    /// `detail` says what is wrong and what is allowed.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{ConfigError, ConfigErrorKind};
    ///
    /// let text = "[amqp.visa]\nqueue = \"visa\"\nprefetch = 0\n";
    /// let at = text.find("0\n").unwrap();
    /// let err = ConfigError::in_text(
    ///     ConfigErrorKind::InvalidValue,
    ///     text,
    ///     Some(at..at + 1),
    ///     "prefetch = 0 is not allowed (expected a whole number from 1 to 65535)",
    /// )
    /// .in_file("executors.toml");
    /// assert_eq!((err.line(), err.column(), err.field()), (Some(3), Some(12), Some("prefetch")));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "executors.toml:3:12: amqp \"visa\": \
    ///      prefetch = 0 is not allowed (expected a whole number from 1 to 65535)"
    /// );
    /// ```
    pub fn in_text(
        kind: ConfigErrorKind,
        text: &str,
        span: Option<Range<usize>>,
        detail: impl Into<String>,
    ) -> Self {
        Issue {
            kind,
            span,
            ..Issue::invalid(0..0, detail)
        }
        .locate(text, None)
    }

    /// The same error, naming the file its text was read from.
    ///
    /// # Examples
    ///
    /// See [`in_text`](Self::in_text).
    pub fn in_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.0.path = Some(path.into());
        self
    }
}

impl ConfigError {
    /// An error of `kind` saying `detail`, in no file and at no place yet.
    fn bare(kind: ConfigErrorKind, detail: String) -> Self {
        ConfigError(Box::new(Inner {
            kind,
            path: None,
            position: None,
            executor: None,
            rule: None,
            mailbox: None,
            scope: String::new(),
            field: None,
            detail,
            source: None,
        }))
    }

    /// A reload refused because the registry has been shut down (kind
    /// [`ShutDown`](ConfigErrorKind::ShutDown)); not about the file, so it
    /// names no file or place.
    pub(crate) fn shut_down() -> Self {
        Self::bare(
            ConfigErrorKind::ShutDown,
            "the registry has been shut down and takes no reload \
             (load a new registry to start executors again)"
                .to_owned(),
        )
    }

    /// The file (`path`, if any) has no `[mailboxes.NAME]` section named
    /// `name`; `defined` are the ones it has.
    #[cfg_attr(any(not(feature = "actor"), loom), allow(dead_code))]
    pub(crate) fn no_mailbox(path: Option<&Path>, name: &str, defined: &[&str]) -> Self {
        let mut err = Self::no_section("mailboxes", name, defined);
        err.0.path = path.map(Path::to_owned);
        err.0.mailbox = Some(name.to_owned());
        err
    }

    /// The file (`path`, if any) has no `[executors.NAME]` section named
    /// `name`, which the code asked for; `defined` are the ones it has.
    pub(crate) fn no_executor(path: Option<&Path>, name: &str, defined: &[&str]) -> Self {
        let mut err = Self::no_section("executors", name, defined);
        err.0.path = path.map(Path::to_owned);
        err.0.executor = Some(name.to_owned());
        err
    }

    /// No `[TABLE.NAME]` section in the file (kind
    /// [`MissingKey`](ConfigErrorKind::MissingKey)), which the code asked
    /// for; `defined` are the names the file has under `table`. For a
    /// layer that reads a table of its own, as the RabbitMQ bridge reads
    /// `[amqp.NAME]`; [`in_file`](Self::in_file) names the file.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::ConfigError;
    ///
    /// let err = ConfigError::no_section("amqp", "visa", &["other"]);
    /// assert_eq!(err.to_string(), "no [amqp.visa] section (defined: \"other\")");
    /// ```
    pub fn no_section(table: &str, name: &str, defined: &[&str]) -> Self {
        let defined = if defined.is_empty() {
            "none is".to_owned()
        } else {
            let quoted: Vec<String> = defined.iter().map(|n| format!("{n:?}")).collect();
            format!("defined: {}", quoted.join(", "))
        };
        Self::bare(
            ConfigErrorKind::MissingKey,
            format!("no [{table}.{name}] section ({defined})"),
        )
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
