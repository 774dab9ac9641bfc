//! The loader never panics: any text gives either executors or an error
//! placed at a line and column, in one line of text.

use priority_executor::{ConfigError, ConfigErrorKind, Registry};
use proptest::prelude::*;

fn check(text: &str) -> Result<(), TestCaseError> {
    match Registry::from_toml_str(text) {
        Ok(executors) => executors.shutdown(),
        Err(err) => check_error(&err)?,
    }
    Ok(())
}

fn check_error(err: &ConfigError) -> Result<(), TestCaseError> {
    prop_assert_ne!(err.kind(), ConfigErrorKind::Io);
    let (Some(line), Some(column)) = (err.line(), err.column()) else {
        return Err(TestCaseError::fail(format!("unplaced error: {err}")));
    };
    let text = err.to_string();
    let place = format!("line {line}, column {column}: ");
    prop_assert!(text.starts_with(&place), "{}", text);
    prop_assert!(!text.contains('\n'), "{}", text);
    prop_assert!(!err.detail().is_empty());
    Ok(())
}

/// Lines of a plausible `executors.toml`: table headers and `key = value`
/// pairs drawn from the format's own vocabulary, right and wrong, so that
/// most inputs get past the TOML parser into the checks behind it.
fn plausible() -> impl Strategy<Value = String> {
    let header = prop::sample::select(vec![
        "[executors.e]",
        "[executors.f]",
        "[executors.\"é x\"]",
        "[[executors.e.lanes]]",
        "[[executors.f.lanes]]",
        "[rules.r]",
        "[[rules.r.when]]",
        "[rules.s]",
        "[executors]",
        "[[rules]]",
    ]);
    let key = prop::sample::select(vec![
        "core_threads",
        "max_threads",
        "keep_alive",
        "allow_core_timeout",
        "picker",
        "rules",
        "lanes",
        "priority",
        "capacity",
        "weight",
        "max_running",
        "promote_after",
        "when_full",
        "default_priority",
        "when",
        "header",
        "property",
        "equals",
        "matches",
        "exists",
        "ignore_case",
        "all",
        "any",
        "not",
        "isFixed",
        "e.lanes",
    ]);
    let value = prop::sample::select(vec![
        "0",
        "1",
        "2",
        "10",
        "-1",
        "65537",
        "4294967296",
        "99999999999999999999",
        "1.5",
        "true",
        "\"5s\"",
        "\"5 parsecs\"",
        "\"\"",
        "\"smooth\"",
        "\"strict\"",
        "\"fair\"",
        "\"r\"",
        "\"s\"",
        "\"unbounded\"",
        "\"20%\"",
        "\"0%\"",
        "\"255%\"",
        "\"reject\"",
        "\"caller-runs\"",
        "\"0s\"",
        "\"[A-Z\"",
        "\"a)|(b\"",
        "\"(?i)abc\"",
        "[]",
        "[{ priority = 1 }]",
        "[{ priority = 10, weight = 0 }, { priority = 1 }]",
        "[{ priority = 1 }, { priority = 1 }]",
        "{ header = \"a\", equals = \"b\" }",
        "[{ header = \"a\", exists = true }, { not = { header = \"b\", matches = \"x+\" } }]",
        "[{ priority = 2, all = [] }]",
        "{}",
        "1979-05-27T07:32:00Z",
    ]);
    let pair = (key, value).prop_map(|(k, v)| format!("{k} = {v}"));
    let line = prop_oneof![1 => header.prop_map(str::to_owned), 3 => pair];
    prop::collection::vec(line, 0..16).prop_map(|lines| lines.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        check(&text)?;
    }

    #[test]
    fn arbitrary_bytes_as_text_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        check(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn plausible_files_never_panic(text in plausible()) {
        check(&text)?;
    }
}

#[test]
fn deeply_nested_conditions_are_refused_not_overflowed() {
    let depth = 10_000;
    let text = format!(
        "[rules.r]\n[[rules.r.when]]\npriority = 1\nnot = {}{{ header = \"a\", exists = true }}{}\n",
        "{ not = ".repeat(depth),
        " }".repeat(depth)
    );
    let err = Registry::from_toml_str(&text).unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::Syntax);
    assert!(err.line().is_some());
}
