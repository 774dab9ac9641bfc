//! `[amqp.NAME]` of an `executors.toml` into a `ConsumerConfig`.

use super::reader::Reader;
use crate::config::ConsumerConfig;
use crate::table::PriorityTable;
use priority_executor::{ConfigError, ConfigErrorKind, Priority};
use std::path::Path;
use std::time::Duration;
use toml_edit::{ImDocument, Item, Value};

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
    /// A [`ConfigError`], placed and worded as the registry's own errors
    /// (the file, the line and column, the table, the key, the value and
    /// what is allowed): the file cannot be read or parsed, the table is
    /// missing, a key is unknown or a value of the wrong type or range. Whether the lanes
    /// exist is checked when the bridge starts, against the executor.
    pub fn from_executors_toml(
        path: impl AsRef<Path>,
        executor: &str,
    ) -> Result<ConsumerConfig, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::unreadable(path, e))?;
        ConsumerConfig::from_toml_str(&text, executor).map_err(|e| e.in_file(path))
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
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn from_toml_str(text: &str, executor: &str) -> Result<ConsumerConfig, ConfigError> {
        let r = Reader { text };
        let doc = ImDocument::parse(text).map_err(|e| {
            ConfigError::in_text(
                ConfigErrorKind::Syntax,
                text,
                e.span(),
                format!("not valid TOML: {}", e.message()),
            )
        })?;
        let amqp = doc.get("amqp").and_then(Item::as_table);
        let Some(item) = amqp.and_then(|t| t.get(executor)) else {
            let defined: Vec<&str> = amqp
                .map(|t| t.iter().map(|(k, _)| k).collect())
                .unwrap_or_default();
            return Err(ConfigError::no_section("amqp", executor, &defined));
        };
        let Some(table) = item.as_table() else {
            return Err(r.wrong_type(executor, item, "a table: [amqp.NAME]"));
        };
        for (key, value) in table.iter() {
            if !KEYS.contains(&key) {
                let at = table.key(key).and_then(toml_edit::Key::span);
                return Err(ConfigError::in_text(
                    ConfigErrorKind::UnknownKey,
                    text,
                    at.or_else(|| value.span()),
                    format!("unknown key `{key}` (allowed: {})", KEYS.join(", ")),
                ));
            }
        }
        let queue = r.string(table, "queue")?.ok_or_else(|| {
            r.error(
                ConfigErrorKind::MissingKey,
                Some(item),
                "missing key `queue` (the queue to consume)",
            )
        })?;
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
                    ConfigErrorKind::MissingKey,
                    table.get("dead_letter_queue"),
                    "dead_letter_queue needs dead_letter_exchange, which it is bound to",
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
                Some(Value::Float(_) | Value::Integer(_)) => {
                    return Err(r.not_allowed("retry_multiplier", item, "a number >= 1"));
                }
                _ => return Err(r.wrong_type("retry_multiplier", item, "a number >= 1")),
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
                None => return Err(r.wrong_type("declare", item, "true or false")),
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(toml: &str) -> ConfigError {
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
            (e.kind(), e.line(), e.column(), e.field()),
            (
                ConfigErrorKind::InvalidValue,
                Some(4),
                Some(16),
                Some("max_priority")
            )
        );
        assert_eq!(
            e.to_string(),
            "line 4, column 16: amqp \"visa\": max_priority = 300 is not allowed \
             (expected a whole number from 1 to 255)"
        );

        let e = err("[amqp.visa]\nqueue = \"visa\"\npriorities = { \"5-x\" = 10 }\n");
        assert_eq!((e.line(), e.field()), (Some(3), Some("5-x")));
        assert_eq!(
            e.to_string(),
            "line 3, column 16: amqp \"visa\", priorities: the key \"5-x\" is not allowed \
             (expected a broker priority 0-255 or a range such as \"5-10\")"
        );

        let e = err("[amqp.visa]\nqueue = \"visa\"\nprefech = 4\n");
        assert_eq!(
            (e.kind(), e.line(), e.column(), e.field()),
            (
                ConfigErrorKind::UnknownKey,
                Some(3),
                Some(1),
                Some("prefech")
            )
        );
        assert!(
            e.detail()
                .starts_with("unknown key `prefech` (allowed: queue, "),
            "{e}"
        );

        let e = err("[amqp.visa]\nqueue = \"visa\"\nretry_delay = \"soon\"\n");
        assert_eq!(e.field(), Some("retry_delay"));
        assert!(
            e.to_string().starts_with(
                "line 3, column 15: amqp \"visa\": retry_delay = \"soon\" is not allowed \
                 (expected a duration"
            ),
            "{e}"
        );

        let e = err("[amqp.visa]\nqueue = 4\n");
        assert_eq!(e.kind(), ConfigErrorKind::WrongType);
        assert_eq!(
            e.detail(),
            "queue = 4 has the wrong type: expected a non-empty string"
        );

        let e = err("[amqp.visa]\nprefetch = 4\n");
        assert_eq!((e.kind(), e.line()), (ConfigErrorKind::MissingKey, Some(1)));
        assert_eq!(
            e.to_string(),
            "line 1, column 1: amqp \"visa\": missing key `queue` (the queue to consume)"
        );

        let e = err("[amqp.other]\nqueue = \"q\"\n");
        assert_eq!(e.to_string(), "no [amqp.visa] section (defined: \"other\")");

        let e = err("[amqp.visa\n");
        assert_eq!((e.kind(), e.line()), (ConfigErrorKind::Syntax, Some(1)));
        assert!(e.detail().starts_with("not valid TOML"), "{e}");
    }

    #[test]
    fn the_repository_executors_toml_serves_the_registry_and_the_bridge() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../executors.toml");
        let executors = priority_executor::Registry::from_path(path).expect("the registry");
        let c = ConsumerConfig::from_executors_toml(path, "visa_priority_exec").expect("[amqp]");
        assert_eq!(c.queue(), "visa");
        assert_eq!(c.table().lane_for(Some(10)), Some(Priority(10)));
        let lanes = executors
            .get("visa_priority_exec")
            .expect("declared")
            .config()
            .lanes
            .iter()
            .map(|l| l.priority)
            .collect::<Vec<_>>();
        assert!(c.table().lanes().iter().all(|l| lanes.contains(l)));
        executors.shutdown();
    }

    #[test]
    fn a_missing_file_is_named() {
        let e =
            ConsumerConfig::from_executors_toml("/nonexistent/executors.toml", "visa").unwrap_err();
        assert_eq!(e.path(), Some(Path::new("/nonexistent/executors.toml")));
        assert_eq!(e.kind(), ConfigErrorKind::Io);
        assert!(
            std::error::Error::source(&e).is_some(),
            "the I/O error is kept"
        );
        assert!(
            e.to_string()
                .starts_with("/nonexistent/executors.toml: cannot read the file"),
            "{e}"
        );
    }
}
