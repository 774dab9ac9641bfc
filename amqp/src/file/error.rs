//! A wrong `[amqp.NAME]` table: where, which setting, which value, why.

use std::fmt;
use std::path::{Path, PathBuf};

/// A wrong `[amqp.NAME]` table: where, which setting, which value, why.
///
/// # Examples
///
/// ```
/// use priority_executor_amqp::ConsumerConfig;
///
/// let toml = "[amqp.visa]\nqueue = \"visa\"\nprefetch = 0\n";
/// let err = ConsumerConfig::from_toml_str(toml, "visa").unwrap_err();
/// assert_eq!(err.line(), Some(3));
/// assert_eq!(err.setting(), "amqp.visa.prefetch");
/// assert_eq!(err.value(), Some("0"));
/// assert!(err.to_string().starts_with("line 3: amqp.visa.prefetch = 0: "), "{err}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileConfigError {
    pub(super) path: Option<PathBuf>,
    pub(super) line: Option<usize>,
    pub(super) setting: String,
    pub(super) value: Option<String>,
    pub(super) reason: String,
}

impl FileConfigError {
    /// The file, if read from one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The line (from 1), if the error has a place.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The setting, e.g. `amqp.visa.prefetch`.
    pub fn setting(&self) -> &str {
        &self.setting
    }

    /// The value as written, if there is one.
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// What is wrong and what is allowed.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for FileConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.line) {
            (Some(p), Some(l)) => write!(f, "{}:{l}: ", p.display())?,
            (Some(p), None) => write!(f, "{}: ", p.display())?,
            (None, Some(l)) => write!(f, "line {l}: ")?,
            (None, None) => {}
        }
        f.write_str(&self.setting)?;
        if let Some(v) = &self.value {
            write!(f, " = {v}")?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for FileConfigError {}
