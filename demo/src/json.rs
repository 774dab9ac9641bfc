//! `--json PATH`: the per-class results of both runs, for scripts.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::cli::Options;
use crate::flood::Class;
use crate::stats::LaneStats;

/// One run as written: what ran it, and each class's lane (none for the
/// FIFO pool) and statistics.
pub struct Run<'a> {
    pub target: &'a str,
    pub executor: Option<&'a str>,
    pub picker: Option<&'a str>,
    pub lanes: [Option<u32>; 2],
    pub stats: &'a [LaneStats; 2],
}

/// The document `--json` writes.
pub fn document(options: &Options, runs: &[Run<'_>]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "{{\n  \"jobs\": {},\n  \"ratio\": {},\n  \"work_us\": {},\n  \"threads\": {},\n  \"runs\": [",
        options.jobs,
        options.ratio,
        options.work.as_micros(),
        options.threads
    );
    for (r, run) in runs.iter().enumerate() {
        let _ = write!(
            out,
            "{}\n    {{\n      \"target\": {},\n      \"executor\": {},\n      \"picker\": {},\n      \"classes\": [",
            if r == 0 { "" } else { "," },
            string(run.target),
            run.executor.map_or("null".to_owned(), string),
            run.picker.map_or("null".to_owned(), string),
        );
        for (c, class) in [Class::Priority, Class::Standard].into_iter().enumerate() {
            let s = &run.stats[c];
            let _ = write!(
                out,
                "{}\n        {{\"class\": {}, \"lane\": {}, \"jobs\": {}, \"share\": {:.4}, \
                 \"p50_wait_ms\": {}, \"p95_wait_ms\": {}, \"p99_wait_ms\": {}, \"done_at_ms\": {}}}",
                if c == 0 { "" } else { "," },
                string(class.label()),
                run.lanes[c].map_or("null".to_owned(), |p| p.to_string()),
                s.jobs,
                s.contended_share,
                ms(s.p50),
                ms(s.p95),
                ms(s.p99),
                ms(s.done_at),
            );
        }
        out.push_str("\n      ]\n    }");
    }
    out.push_str("\n  ]\n}\n");
    out
}

/// Writes the document to `path`.
pub fn write(path: &Path, document: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create the folder: {e}", dir.display()))?;
    }
    std::fs::write(path, document).map_err(|e| format!("{}: {e}", path.display()))
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// A JSON string: quotes, backslashes and control characters escaped.
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped() {
        assert_eq!(string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
