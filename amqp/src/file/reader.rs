//! Reads the values of one table, placing errors in the file's text.

use super::error::FileConfigError;
use crate::table::PriorityTable;
use priority_executor::Priority;
use std::ops::Range;
use std::time::Duration;
use toml_edit::{Item, Table};

/// Reads one table, placing errors in `text`.
pub(super) struct Reader<'a> {
    pub(super) text: &'a str,
    pub(super) prefix: String,
}

impl Reader<'_> {
    pub(super) fn line(&self, span: Option<Range<usize>>) -> Option<usize> {
        let start = span?.start.min(self.text.len());
        Some(self.text[..start].matches('\n').count() + 1)
    }

    pub(super) fn error(
        &self,
        key: &str,
        item: Option<&Item>,
        reason: impl Into<String>,
    ) -> FileConfigError {
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

    pub(super) fn int(
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

    pub(super) fn string(
        &self,
        table: &Table,
        key: &str,
    ) -> Result<Option<String>, FileConfigError> {
        let Some(item) = table.get(key) else {
            return Ok(None);
        };
        match item.as_str() {
            Some(s) if !s.is_empty() => Ok(Some(s.to_owned())),
            _ => Err(self.error(key, Some(item), "expected a non-empty string")),
        }
    }

    pub(super) fn duration(
        &self,
        table: &Table,
        key: &str,
    ) -> Result<Option<Duration>, FileConfigError> {
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
    pub(super) fn table(
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
