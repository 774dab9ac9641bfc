//! The bridge's settings in `executors.toml`: `[amqp.NAME]` beside
//! `[executors.NAME]`, read with the positions of every key, so an error
//! names the file, the line, the setting and the value.

use crate::config::ConsumerConfig;
use crate::table::PriorityTable;
use priority_executor::Priority;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml_edit::{ImDocument, Item, Table, Value};

/// The keys `[amqp.NAME]` may hold.
const KEYS: &[&str] = &[
    "queue",
    "max_priority",
    "prefetch",
    "priorities",
    "unmapped_lane",
    "dead_letter_exchange",
    "dead_letter_queue",
    "retries",
    "retry_delay",
    "retry_multiplier",
    "start_within",
    "declare",
];

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
    path: Option<PathBuf>,
    line: Option<usize>,
    setting: String,
    value: Option<String>,
    reason: String,
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

/// Reads one table, placing errors in `text`.
struct Reader<'a> {
    text: &'a str,
    prefix: String,
}

impl Reader<'_> {
    fn line(&self, span: Option<Range<usize>>) -> Option<usize> {
        let start = span?.start.min(self.text.len());
        Some(self.text[..start].matches('\n').count() + 1)
    }

    fn error(&self, key: &str, item: Option<&Item>, reason: impl Into<String>) -> FileConfigError {
        // The value as written: its text in the file.
        let value = item
            .filter(|i| i.is_value())
            .and_then(Item::span)
            .and_then(|span| self.text.get(span))
            .map(|t| t.trim().to_owned());
        FileConfigError {
            path: None,
            line: self.line(item.and_then(Item::span)),
            setting: if key.is_empty() {
                self.prefix.clone()
            } else {
                format!("{}.{key}", self.prefix)
            },
            value,
            reason: reason.into(),
        }
    }

    fn int(
        &self,
        table: &Table,
        key: &str,
        min: i64,
        max: i64,
    ) -> Result<Option<i64>, FileConfigError> {
        let Some(item) = table.get(key) else {
            return Ok(None);
        };
        match item.as_integer() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(self.error(
                key,
                Some(item),
                format!("expected a whole number from {min} to {max}"),
            )),
        }
    }

    fn string(&self, table: &Table, key: &str) -> Result<Option<String>, FileConfigError> {
        let Some(item) = table.get(key) else {
            return Ok(None);
        };
        match item.as_str() {
            Some(s) if !s.is_empty() => Ok(Some(s.to_owned())),
            _ => Err(self.error(key, Some(item), "expected a non-empty string")),
        }
    }

    fn duration(&self, table: &Table, key: &str) -> Result<Option<Duration>, FileConfigError> {
        let Some(text) = self.string(table, key)? else {
            return Ok(None);
        };
        humantime::parse_duration(&text).map(Some).map_err(|e| {
            self.error(
                key,
                table.get(key),
                format!("expected a duration such as \"250ms\" or \"1m 30s\" ({e})"),
            )
        })
    }

    /// `priorities = { "0-4" = 1, "5-10" = 10 }`: broker priorities (one,
    /// or an inclusive range) to lanes.
    fn table(
        &self,
        table: &Table,
        mut out: PriorityTable,
    ) -> Result<PriorityTable, FileConfigError> {
        let Some(item) = table.get("priorities") else {
            return Ok(out);
        };
        let Some(map) = item.as_table_like() else {
            return Err(self.error(
                "priorities",
                Some(item),
                "expected a table of broker priorities to lanes, e.g. { \"0-4\" = 1, \"5-10\" = 10 }",
            ));
        };
        for (key, value) in map.iter() {
            let setting = format!("priorities.\"{key}\"");
            let range = parse_range(key).ok_or_else(|| {
                self.error(
                    &setting,
                    Some(value),
                    format!(
                        "the key {key:?} is not a broker priority 0-255 or a range such as \"5-10\""
                    ),
                )
            })?;
            let lane = value
                .as_integer()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    self.error(
                        &setting,
                        Some(value),
                        "expected a lane: a whole number from 0 to 4294967295",
                    )
                })?;
            out = out.map(range, Priority(lane));
        }
        Ok(out)
    }
}

fn parse_range(key: &str) -> Option<std::ops::RangeInclusive<u8>> {
    let (a, b) = match key.split_once('-') {
        Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
        None => {
            let n = key.trim().parse().ok()?;
            (n, n)
        }
    };
    (a <= b).then_some(a..=b)
}

impl ConsumerConfig {
    /// The settings of `[amqp.EXECUTOR]` in the file at `path` (an
    /// `executors.toml`, where `[executors.EXECUTOR]` declares the lanes).
    ///
    /// ```toml
    /// [amqp.visa_priority_exec]
    /// queue = "visa"                          # required
    /// max_priority = 10                       # declare the queue with x-max-priority
    /// priorities = { "0-4" = 1, "5-10" = 10 } # broker priority (or range) -> lane
    /// unmapped_lane = 1                       # default: the executor's lowest lane
    /// prefetch = 4                            # default 4
    /// dead_letter_exchange = "visa.dlx"
    /// dead_letter_queue = "visa.dead"
    /// retries = 2                             # default 0
    /// retry_delay = "100ms"
    /// retry_multiplier = 2.0
    /// start_within = "30s"
    /// declare = true                          # false: the queue must exist
    /// ```
    ///
    /// # Errors
    ///
    /// A [`FileConfigError`] naming the file, the line, the setting and the
    /// value: the file cannot be read or parsed, the table is missing, a key
    /// is unknown or a value of the wrong kind or range. Whether the lanes
    /// exist is checked when the bridge starts, against the executor.
    pub fn from_executors_toml(
        path: impl AsRef<Path>,
        executor: &str,
    ) -> Result<ConsumerConfig, FileConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| FileConfigError {
            path: Some(path.to_owned()),
            line: None,
            setting: format!("amqp.{executor}"),
            value: None,
            reason: format!("cannot read the file: {e}"),
        })?;
        ConsumerConfig::from_toml_str(&text, executor).map_err(|mut e| {
            e.path = Some(path.to_owned());
            e
        })
    }

    /// As [`from_executors_toml`](Self::from_executors_toml), from the
    /// file's text.
    ///
    /// # Errors
    ///
    /// As [`from_executors_toml`](Self::from_executors_toml).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Priority;
    /// use priority_executor_amqp::ConsumerConfig;
    ///
    /// let toml = r#"
    /// [amqp.visa]
    /// queue = "visa"
    /// max_priority = 10
    /// priorities = { "0-4" = 1, "5-10" = 10 }
    /// prefetch = 8
    /// "#;
    /// let config = ConsumerConfig::from_toml_str(toml, "visa")?;
    /// assert_eq!(config.queue(), "visa");
    /// assert_eq!(config.table().lane_for(Some(7)), Some(Priority(10)));
    /// # Ok::<(), priority_executor_amqp::FileConfigError>(())
    /// ```
    pub fn from_toml_str(text: &str, executor: &str) -> Result<ConsumerConfig, FileConfigError> {
        let prefix = format!("amqp.{executor}");
        let r = Reader {
            text,
            prefix: prefix.clone(),
        };
        let doc = ImDocument::parse(text).map_err(|e| FileConfigError {
            path: None,
            line: r.line(e.span()),
            setting: prefix.clone(),
            value: None,
            reason: format!("not valid TOML: {}", e.message()),
        })?;
        let amqp = doc.get("amqp").and_then(Item::as_table);
        let Some(item) = amqp.and_then(|t| t.get(executor)) else {
            let known: Vec<&str> = amqp
                .map(|t| t.iter().map(|(k, _)| k).collect())
                .unwrap_or_default();
            return Err(FileConfigError {
                path: None,
                line: None,
                setting: prefix,
                value: None,
                reason: format!(
                    "no [amqp.{executor}] table (the file has: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            });
        };
        let Some(table) = item.as_table() else {
            return Err(r.error("", Some(item), "expected a table: [amqp.NAME]"));
        };
        for (key, value) in table.iter() {
            if !KEYS.contains(&key) {
                return Err(r.error(
                    key,
                    Some(value),
                    format!("unknown key (expected one of: {})", KEYS.join(", ")),
                ));
            }
        }
        let queue = r
            .string(table, "queue")?
            .ok_or_else(|| r.error("queue", None, "missing: the queue to consume"))?;
        let mut config = ConsumerConfig::new(queue);
        if let Some(n) = r.int(table, "max_priority", 1, 255)? {
            config = config.max_priority(n as u8);
        }
        if let Some(n) = r.int(table, "prefetch", 1, i64::from(u16::MAX))? {
            config = config.prefetch(n as u16);
        }
        let mut priorities = PriorityTable::new();
        if let Some(n) = r.int(table, "unmapped_lane", 0, i64::from(u32::MAX))? {
            priorities = priorities.unmapped(Priority(n as u32));
        }
        config = config.priorities(r.table(table, priorities)?);
        if let Some(x) = r.string(table, "dead_letter_exchange")? {
            config = config.dead_letter_exchange(x);
        }
        if let Some(q) = r.string(table, "dead_letter_queue")? {
            if config.dead_letter_exchange.is_none() {
                return Err(r.error(
                    "dead_letter_queue",
                    table.get("dead_letter_queue"),
                    "needs dead_letter_exchange, which it is bound to",
                ));
            }
            config = config.dead_letter_queue(q);
        }
        let retries = r
            .int(table, "retries", 0, i64::from(u32::MAX))?
            .unwrap_or(0) as u32;
        let delay = r.duration(table, "retry_delay")?.unwrap_or(Duration::ZERO);
        let multiplier = match table.get("retry_multiplier") {
            None => 1.0,
            Some(item) => match item.as_value() {
                Some(Value::Float(f)) if *f.value() >= 1.0 && f.value().is_finite() => *f.value(),
                Some(Value::Integer(i)) if *i.value() >= 1 => *i.value() as f64,
                _ => {
                    return Err(r.error("retry_multiplier", Some(item), "expected a number >= 1"));
                }
            },
        };
        config = config.retries(retries, delay, multiplier);
        if let Some(d) = r.duration(table, "start_within")? {
            config = config.start_within(d);
        }
        if let Some(item) = table.get("declare") {
            match item.as_bool() {
                Some(true) => {}
                Some(false) => config = config.no_declare(),
                None => return Err(r.error("declare", Some(item), "expected true or false")),
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(toml: &str) -> FileConfigError {
        ConsumerConfig::from_toml_str(toml, "visa").unwrap_err()
    }

    #[test]
    fn every_setting_is_read() {
        let toml = r#"
[executors.visa]
[amqp.visa]
queue = "visa"
max_priority = 10
priorities = { "0-4" = 1, "5-10" = 10, "200" = 10 }
unmapped_lane = 1
prefetch = 8
dead_letter_exchange = "visa.dlx"
dead_letter_queue = "visa.dead"
retries = 2
retry_delay = "100ms"
retry_multiplier = 2
start_within = "30s"
declare = false
"#;
        let c = ConsumerConfig::from_toml_str(toml, "visa").expect("valid");
        assert_eq!(c.queue(), "visa");
        assert_eq!(c.max_priority, Some(10));
        assert_eq!(c.prefetch, 8);
        assert_eq!(c.table().lane_for(Some(3)), Some(Priority(1)));
        assert_eq!(c.table().lane_for(Some(10)), Some(Priority(10)));
        assert_eq!(c.table().lane_for(Some(200)), Some(Priority(10)));
        assert_eq!(c.table().lane_for(Some(11)), None);
        assert_eq!(c.table().unmapped_lane(), Some(Priority(1)));
        assert_eq!(c.dead_letter_queue.as_deref(), Some("visa.dead"));
        assert_eq!(c.max_retries, 2);
        assert_eq!(c.retry_delay(2), Duration::from_millis(200));
        assert_eq!(c.start_within, Some(Duration::from_secs(30)));
        assert!(!c.declare);
    }

    #[test]
    fn errors_name_the_line_the_setting_and_the_value() {
        let e = err("[amqp.visa]\nqueue = \"visa\"\n\nmax_priority = 300\n");
        assert_eq!(
            (e.line(), e.setting(), e.value()),
            (Some(4), "amqp.visa.max_priority", Some("300"))
        );
        assert!(e.reason().contains("from 1 to 255"), "{e}");

        let e = err("[amqp.visa]\nqueue = \"visa\"\npriorities = { \"5-x\" = 10 }\n");
        assert_eq!(e.line(), Some(3));
        assert_eq!(e.setting(), "amqp.visa.priorities.\"5-x\"");
        assert_eq!(e.value(), Some("10"));

        let e = err("[amqp.visa]\nqueue = \"visa\"\nprefech = 4\n");
        assert_eq!((e.line(), e.setting()), (Some(3), "amqp.visa.prefech"));
        assert!(e.reason().starts_with("unknown key"), "{e}");

        let e = err("[amqp.visa]\nqueue = \"visa\"\nretry_delay = \"soon\"\n");
        assert_eq!(e.value(), Some("\"soon\""));
        assert!(
            e.to_string()
                .starts_with("line 3: amqp.visa.retry_delay = \"soon\": expected a duration"),
            "{e}"
        );

        let e = err("[amqp.visa]\nprefetch = 4\n");
        assert_eq!(e.setting(), "amqp.visa.queue");
        assert!(e.reason().starts_with("missing"), "{e}");

        let e = err("[amqp.other]\nqueue = \"q\"\n");
        assert_eq!(
            e.to_string(),
            "amqp.visa: no [amqp.visa] table (the file has: other)"
        );

        let e = err("[amqp.visa\n");
        assert_eq!(e.line(), Some(1));
        assert!(e.reason().starts_with("not valid TOML"), "{e}");
    }

    #[test]
    fn the_repository_executors_toml_serves_the_registry_and_the_bridge() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../executors.toml");
        let executors = priority_executor::Executors::from_path(path).expect("the registry");
        let c = ConsumerConfig::from_executors_toml(path, "visa_priority_exec").expect("[amqp]");
        assert_eq!(c.queue(), "visa");
        assert_eq!(c.table().lane_for(Some(10)), Some(Priority(10)));
        let lanes = executors
            .get("visa_priority_exec")
            .expect("declared")
            .priorities();
        assert!(c.table().lanes().iter().all(|l| lanes.contains(l)));
        executors.shutdown();
    }

    #[test]
    fn a_missing_file_is_named() {
        let e =
            ConsumerConfig::from_executors_toml("/nonexistent/executors.toml", "visa").unwrap_err();
        assert_eq!(e.path(), Some(Path::new("/nonexistent/executors.toml")));
        assert!(
            e.to_string()
                .starts_with("/nonexistent/executors.toml: amqp.visa: cannot read the file"),
            "{e}"
        );
    }
}
