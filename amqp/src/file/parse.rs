//! `[amqp.NAME]` of an `executors.toml` into a `ConsumerConfig`.

use super::error::FileConfigError;
use super::reader::Reader;
use crate::config::ConsumerConfig;
use crate::table::PriorityTable;
use priority_executor::Priority;
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
        assert!(
            e.to_string()
                .starts_with("/nonexistent/executors.toml: amqp.visa: cannot read the file"),
            "{e}"
        );
    }
}
