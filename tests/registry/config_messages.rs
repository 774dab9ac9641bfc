//! The wording of config errors: each points at the value that is wrong,
//! names the setting and the value, and says what is really allowed; a
//! syntax error says what the line should look like.

use super::config_errors::load_err;
use crate::temp_file;
use priority_executor::{ConfigErrorKind, Registry};

/// The error of `toml` as `(line, column, message)`, the message with no
/// place.
fn placed(toml: &str) -> (Option<usize>, Option<usize>, String) {
    let err = load_err(toml);
    let text = err.to_string();
    let message = text.split_once(": ").map_or(&*text, |(_, m)| m).to_owned();
    (err.line(), err.column(), message)
}

#[test]
fn a_syntax_error_says_what_the_line_should_look_like() {
    // Two values on one line: the parser's "expected newline", kept with
    // its position.
    let err = load_err("[executors.e]\ncore_threads = 2 3\n");
    assert_eq!(err.kind(), ConfigErrorKind::Syntax);
    assert_eq!(
        err.to_string(),
        "line 2, column 18: expected newline, `#` (a line holds one `key = value`, then at \
         most a `# comment`; text is quoted: `key = \"text\"`)"
    );
    // A key with no `=`.
    assert_eq!(
        placed("[executors.e]\nmax_threads 4\n"),
        (
            Some(2),
            Some(13),
            "expected `.`, `=` (a line is `key = value`, a `[section]` header or a \
             `# comment`)"
                .to_owned()
        )
    );
    // An unclosed header, of a table and of an array of tables.
    assert_eq!(
        placed("[executors.e\n"),
        (
            Some(1),
            Some(13),
            "invalid table header; expected `.`, `]` (a table header is `[name]` alone on \
             its line, such as `[executors.NAME]`)"
                .to_owned()
        )
    );
    assert_eq!(
        placed("[[executors.e.lanes]\n"),
        (
            Some(1),
            Some(20),
            "invalid table header; expected `.`, `]]` (an array-of-tables header is \
             `[[name]]` alone on its line, such as `[[executors.NAME.lanes]]`)"
                .to_owned()
        )
    );
    // No value, and a word that is not one.
    assert_eq!(
        placed("[executors.e]\nallow_core_timeout = True\n"),
        (
            Some(2),
            Some(22),
            "invalid string; expected `\"`, `'` (a value is a number, true or false, a \
             \"quoted string\", an [array] or an { inline table })"
                .to_owned()
        )
    );
    // An unquoted duration.
    assert_eq!(
        placed("[executors.e]\nkeep_alive = 5s\n").2,
        "expected newline, `#` (a line holds one `key = value`, then at most a `# comment`; \
         text is quoted: `key = \"text\"`)"
    );
    // An inline table with a comma after its last value, an unclosed array.
    assert_eq!(
        placed("[executors.e]\nlanes = [{ priority = 1, }]\n"),
        (
            Some(2),
            Some(24),
            "invalid inline table; expected `}` (an inline table is `{ key = value, key = \
             value }` on one line, with no comma after the last value)"
                .to_owned()
        )
    );
    assert_eq!(
        placed("[executors.e]\nlanes = [{ priority = 1 }\n"),
        (
            Some(3),
            Some(1),
            "invalid array; expected `]` (an array is `[value, value]`, closed with `]`)"
                .to_owned()
        )
    );
    // An unclosed string, a regex's backslash in a basic string.
    assert_eq!(
        placed("[executors.e]\npicker = \"fair\n"),
        (
            Some(2),
            Some(15),
            "invalid basic string (a string ends on the line it starts: \"text\" or 'text'; \
             \"\"\"text\"\"\" may span lines)"
                .to_owned()
        )
    );
    assert_eq!(
        placed("[rules.r]\n[[rules.r.when]]\npriority = 1\nheader = \"a\"\nmatches = \"\\d+\"\n"),
        (
            Some(5),
            Some(14),
            "invalid escape sequence; expected `b`, `f`, `n`, `r`, `t`, `u`, `U`, `\\`, `\"` \
             (in a \"string\" a backslash starts an escape such as \\n or \\\\; write text with \
             backslashes, such as a regex, in 'single quotes')"
                .to_owned()
        )
    );
    // A key set twice.
    assert_eq!(
        placed("[executors.e]\ncore_threads = 2\ncore_threads = 3\n"),
        (
            Some(3),
            Some(1),
            "duplicate key `core_threads` in table `executors.e` (each key is set once in its \
             table, and each `[section]` header once)"
                .to_owned()
        )
    );
}

/// The new user's file: lane 10 first, lane 1's weight on line 13.
const WEIGHT_70000: &str = r#"# Two lanes, the second weighted far too high.
[executors.visa]
core_threads = 2
max_threads = 10

[[executors.visa.lanes]]
priority = 10
capacity = 1000

[[executors.visa.lanes]]
priority = 1
capacity = 1000
weight = 70000
"#;

#[test]
fn weights_too_large_point_at_the_weight_that_passes_the_limit() {
    let path = temp_file("weight-sum", WEIGHT_70000);
    let err = Registry::from_path(&path).unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!(
        (err.line(), err.column(), err.executor(), err.field()),
        (Some(13), Some(10), Some("visa"), Some("weight"))
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}:13:10: executor \"visa\", lane priority 1: weight = 70000 is too large: the \
             lane weights add up to 70010 with it, more than the limit of 65536 (the lanes \
             declared before it weigh 10, which leaves 1 to 65526; only the ratios of the \
             weights matter)",
            path.display()
        )
    );
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));

    // The first lane alone is over the limit: the lanes after it are not
    // to blame.
    assert_eq!(
        placed("[executors.e]\nlanes = [{ priority = 1, weight = 70000 }, { priority = 10 }]\n"),
        (
            Some(2),
            Some(35),
            "executor \"e\", lane priority 1: weight = 70000 is too large: an executor's lane \
             weights add up to at most 65536 (allowed: 1 to 65536; only the ratios of the \
             weights matter)"
                .to_owned()
        )
    );
    // Two weights each allowed alone: the second passes the limit.
    assert_eq!(
        placed(
            "[executors.e]\nlanes = [{ priority = 10, weight = 40000 }, \
             { priority = 1, weight = 40000 }]\n"
        ),
        (
            Some(2),
            Some(70),
            "executor \"e\", lane priority 1: weight = 40000 is too large: the lane weights \
             add up to 80000 with it, more than the limit of 65536 (the lanes declared before \
             it weigh 40000, which leaves 1 to 25536; only the ratios of the weights matter)"
                .to_owned()
        )
    );
    // The lanes before it already reach the limit.
    assert_eq!(
        placed(
            "[executors.e]\nlanes = [{ priority = 10, weight = 65536 }, \
             { priority = 1, weight = 1 }]\n"
        )
        .2,
        "executor \"e\", lane priority 1: weight = 1 is too large: the lane weights add up to \
         65537 with it, more than the limit of 65536 (the lanes declared before it already \
         weigh 65536, the limit; only the ratios of the weights matter)"
    );
}

#[test]
fn a_default_weight_too_large_points_at_the_priority() {
    // No weight written: the weight is the priority, placed at it.
    let err = load_err(
        "[executors.e]\n[[executors.e.lanes]]\npriority = 40000\n\
         [[executors.e.lanes]]\npriority = 30000\nweight = 1\n\
         [[executors.e.lanes]]\npriority = 30001\n",
    );
    assert_eq!(
        (err.line(), err.column(), err.field()),
        (Some(8), Some(12), Some("priority"))
    );
    assert_eq!(
        err.detail(),
        "priority = 30001 needs an explicit weight: the default, its priority, is too large: \
         the lane weights add up to 70002 with it, more than the limit of 65536 (the lanes \
         declared before it weigh 40001, which leaves 1 to 25535; only the ratios of the \
         weights matter)"
    );
    assert_eq!(
        placed("[executors.e]\n[[executors.e.lanes]]\npriority = 100000\n"),
        (
            Some(3),
            Some(12),
            "executor \"e\", lane priority 100000: priority = 100000 needs an explicit weight: \
             the default, its priority, is too large: an executor's lane weights add up to at \
             most 65536 (allowed: 1 to 65536; only the ratios of the weights matter)"
                .to_owned()
        )
    );
}

#[test]
fn a_weight_out_of_range_says_1_to_65536() {
    // The new user's float: 0 is refused, and so is anything past the
    // limit on the sum.
    assert_eq!(
        placed("[executors.e]\n[[executors.e.lanes]]\npriority = 1\nweight = 1.5\n"),
        (
            Some(4),
            Some(10),
            "executor \"e\", lane priority 1: weight = 1.5 has the wrong type: expected a \
             whole number from 1 to 65536, found a float"
                .to_owned()
        )
    );
    for (value, column) in [("-1", 35), ("4294967296", 35)] {
        let toml = format!("[executors.e]\nlanes = [{{ priority = 1, weight = {value} }}]\n");
        assert_eq!(
            placed(&toml),
            (
                Some(2),
                Some(column),
                format!(
                    "executor \"e\", lane priority 1: weight = {value} is not allowed \
                     (expected a whole number from 1 to 65536)"
                )
            )
        );
    }
}

#[test]
fn max_threads_out_of_range_says_at_least_1() {
    assert_eq!(
        placed("[executors.e]\nmax_threads = 1.5\nlanes = [{ priority = 1 }]\n"),
        (
            Some(2),
            Some(15),
            "executor \"e\": max_threads = 1.5 has the wrong type: expected a whole number \
             >= 1, found a float"
                .to_owned()
        )
    );
    assert_eq!(
        placed("[executors.e]\nmax_threads = -2\nlanes = [{ priority = 1 }]\n"),
        (
            Some(2),
            Some(15),
            "executor \"e\": max_threads = -2 is not allowed (expected a whole number >= 1)"
                .to_owned()
        )
    );
}

#[test]
fn max_running_out_of_range_says_1_to_100_percent() {
    // Past what a percentage can be, past 100%, and 0 threads: one message.
    for (value, shown) in [
        ("\"300%\"", "\"300%\""),
        ("\"150%\"", "\"150%\""),
        ("0", "0"),
    ] {
        let toml = format!("[executors.e]\nlanes = [{{ priority = 1, max_running = {value} }}]\n");
        assert_eq!(
            placed(&toml),
            (
                Some(2),
                Some(40),
                format!(
                    "executor \"e\", lane priority 1: max_running = {shown} is not allowed \
                     (expected a number of threads >= 1 or a percentage of max_threads from 1% \
                     to 100%, such as \"20%\")"
                )
            )
        );
    }
}

#[test]
fn promote_after_zero_names_the_value_and_what_is_allowed() {
    assert_eq!(
        placed("[executors.e]\nlanes = [{ priority = 1, promote_after = \"0ms\" }]\n"),
        (
            Some(2),
            Some(42),
            "executor \"e\", lane priority 1: promote_after = \"0ms\" is not allowed (expected a \
             duration longer than zero, such as \"2s\" or \"500ms\"; omit it for no aging)"
                .to_owned()
        )
    );
    // Not a duration at all: the same range.
    let err = load_err("[executors.e]\nlanes = [{ priority = 1, promote_after = \"soon\" }]\n");
    assert_eq!(
        (err.line(), err.column(), err.field()),
        (Some(2), Some(42), Some("promote_after"))
    );
    assert!(
        err.detail()
            .starts_with("promote_after = \"soon\" is not a duration: ")
            && err
                .detail()
                .ends_with("(expected a duration longer than zero, such as \"2s\" or \"500ms\")"),
        "{err}"
    );
}
