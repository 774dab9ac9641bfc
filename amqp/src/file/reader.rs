//! Reads the values of one table, placing errors in the file's text.

use crate::table::PriorityTable;
use priority_executor::{ConfigError, ConfigErrorKind, Priority};
use std::time::Duration;
use toml_edit::{Item, Table};

/// Reads one table, placing errors in `text` with the core's
/// [`ConfigError`], as the registry places its own.
pub(super) struct Reader<'a> {
    pub(super) text: &'a str,
}

impl Reader<'_> {
    /// A mistake about `item` (a value, or the table itself).
    pub(super) fn error(
        &self,
        kind: ConfigErrorKind,
        item: Option<&Item>,
        detail: impl Into<String>,
    ) -> ConfigError {
        ConfigError::in_text(kind, self.text, item.and_then(Item::span), detail)
    }

    /// `key = VALUE is not allowed (expected ...)`.
    pub(super) fn not_allowed(&self, key: &str, item: &Item, expected: &str) -> ConfigError {
        self.error(
            ConfigErrorKind::InvalidValue,
            Some(item),
            format!(
                "{key} = {} is not allowed (expected {expected})",
                self.quote(item)
            ),
        )
    }

    /// `key = VALUE has the wrong type: expected ...`.
    pub(super) fn wrong_type(&self, key: &str, item: &Item, expected: &str) -> ConfigError {
        self.error(
            ConfigErrorKind::WrongType,
            Some(item),
            format!(
                "{key} = {} has the wrong type: expected {expected}",
                self.quote(item)
            ),
        )
    }

    /// The value as written, on one line.
    fn quote(&self, item: &Item) -> String {
        let text = item
            .span()
            .and_then(|span| self.text.get(span))
            .unwrap_or("")
            .trim();
        match text.lines().nth(1) {
            None => text.to_owned(),
            Some(_) => format!("{}...", text.lines().next().unwrap_or("")),
        }
    }

    pub(super) fn int(
        &self,
        table: &Table,
        key: &str,
        min: i64,
        max: i64,
    ) -> Result<Option<i64>, ConfigError> {
        let Some(item) = table.get(key) else {
            return Ok(None);
        };
        let expected = format!("a whole number from {min} to {max}");
        match item.as_integer() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            Some(_) => Err(self.not_allowed(key, item, &expected)),
            None => Err(self.wrong_type(key, item, &expected)),
        }
    }

    pub(super) fn string(&self, table: &Table, key: &str) -> Result<Option<String>, ConfigError> {
        let Some(item) = table.get(key) else {
            return Ok(None);
        };
        match item.as_str() {
            Some(s) if !s.is_empty() => Ok(Some(s.to_owned())),
            Some(_) => Err(self.not_allowed(key, item, "a non-empty string")),
            None => Err(self.wrong_type(key, item, "a non-empty string")),
        }
    }

    pub(super) fn duration(
        &self,
        table: &Table,
        key: &str,
    ) -> Result<Option<Duration>, ConfigError> {
        let (Some(text), Some(item)) = (self.string(table, key)?, table.get(key)) else {
            return Ok(None);
        };
        humantime::parse_duration(&text).map(Some).map_err(|e| {
            self.not_allowed(
                key,
                item,
                &format!("a duration such as \"250ms\" or \"1m 30s\": {e}"),
            )
        })
    }

    /// `priorities = { "0-4" = 1, "5-10" = 10 }`: broker priorities (one,
    /// or an inclusive range) to lanes.
    pub(super) fn table(
        &self,
        table: &Table,
        mut out: PriorityTable,
    ) -> Result<PriorityTable, ConfigError> {
        let Some(item) = table.get("priorities") else {
            return Ok(out);
        };
        let Some(map) = item.as_table_like() else {
            return Err(self.wrong_type(
                "priorities",
                item,
                "a table of broker priorities to lanes, e.g. { \"0-4\" = 1, \"5-10\" = 10 }",
            ));
        };
        for (key, value) in map.iter() {
            let setting = format!("{key:?}");
            let range = parse_range(key).ok_or_else(|| {
                let at = map.get_key_value(key).and_then(|(k, _)| k.span());
                ConfigError::in_text(
                    ConfigErrorKind::InvalidValue,
                    self.text,
                    at.or_else(|| value.span()),
                    format!(
                        "the key {key:?} is not allowed (expected a broker priority 0-255 or a range such as \"5-10\")"
                    ),
                )
            })?;
            let lane = value
                .as_integer()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    self.not_allowed(
                        &setting,
                        value,
                        "a lane: a whole number from 0 to 4294967295",
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
