//! Every class of mistake in `executors.toml` is reported at its line and
//! column, with the executor or rule, the key, the value and what is
//! allowed.

use crate::temp_file;
use priority_executor::{
    Capacity, ConfigError, ConfigErrorKind, Picker, Priority, Registry, Rules,
};

pub(crate) fn load_err(toml: &str) -> ConfigError {
    match Registry::from_toml_str(toml) {
        Ok(executors) => {
            let names: Vec<String> = executors.names();
            executors.shutdown();
            panic!("expected an error, loaded {names:?}");
        }
        Err(err) => err,
    }
}

const VISA_WEIGHT_0: &str = r#"# The seed's visa executor with a mistake on line 7.
[executors.visa_priority_exec]
core_threads = 2
max_threads = 100
[[executors.visa_priority_exec.lanes]]
priority = 1
weight   =   0
[[executors.visa_priority_exec.lanes]]
priority = 10
"#;

#[test]
fn display_names_file_line_column_executor_lane_field_value_and_rule() {
    let path = temp_file("display", VISA_WEIGHT_0);
    let err = Registry::from_path(&path).unwrap_err();
    assert_eq!(err.path(), Some(path.as_path()));
    assert_eq!(
        err.to_string(),
        format!(
            "{}:7:14: executor \"visa_priority_exec\", lane priority 1: \
             weight = 0 is not allowed (expected a whole number from 1 to 65536)",
            path.display()
        )
    );
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

#[test]
fn unknown_key() {
    // Synapse's documented-but-ignored attribute, here an error.
    let err = load_err(
        "[executors.visa]\n\
         core_threads = 2\n\
         isFixed = true\n\
         [[executors.visa.lanes]]\n\
         priority = 1\n",
    );
    assert_eq!(err.kind(), ConfigErrorKind::UnknownKey);
    assert_eq!((err.line(), err.column()), (Some(3), Some(1)));
    assert_eq!(err.executor(), Some("visa"));
    assert_eq!(err.field(), Some("isFixed"));
    assert!(err.detail().contains("unknown key `isFixed`"), "{err}");
    assert!(
        err.detail().contains("allowed: core_threads, max_threads"),
        "{err}"
    );
}

#[test]
fn unknown_key_in_a_lane_and_in_a_rule() {
    let err = load_err("[executors.e]\n[[executors.e.lanes]]\npriority = 1\nsize = 100\n");
    assert_eq!(err.kind(), ConfigErrorKind::UnknownKey);
    assert_eq!((err.line(), err.field()), (Some(4), Some("size")));
    assert!(err.to_string().contains("lane priority 1"), "{err}");
    assert!(
        err.detail().contains("allowed: priority, capacity, weight"),
        "{err}"
    );

    let err =
        load_err("[rules.r]\n[[rules.r.when]]\npriority = 1\nheader = \"a\"\nequal = \"b\"\n");
    assert_eq!(err.kind(), ConfigErrorKind::UnknownKey);
    assert_eq!(
        (err.line(), err.rule(), err.field()),
        (Some(5), Some("r"), Some("equal"))
    );
}

#[test]
fn wrong_type() {
    let err = load_err("[executors.visa]\ncore_threads = \"two\"\nlanes = [{ priority = 1 }]\n");
    assert_eq!(err.kind(), ConfigErrorKind::WrongType);
    assert_eq!((err.line(), err.column()), (Some(2), Some(16)));
    assert_eq!(err.field(), Some("core_threads"));
    assert_eq!(
        err.to_string(),
        "line 2, column 16: executor \"visa\": core_threads = \"two\" has the wrong type: \
         expected a whole number >= 0, found a string"
    );
}

#[test]
fn weight_zero() {
    let err = load_err(VISA_WEIGHT_0);
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!((err.line(), err.column()), (Some(7), Some(14)));
    assert_eq!(err.executor(), Some("visa_priority_exec"));
    assert_eq!(err.field(), Some("weight"));
    assert!(err.source().is_some(), "the builder's error is the source");
}

#[test]
fn priority_zero_gets_weight_one() {
    let toml = "[executors.e]\nlanes = [{ priority = 0 }, { priority = 1 }]\n";
    let registry = Registry::from_toml_str(toml).unwrap();
    let lanes = registry.get("e").unwrap().config().lanes;
    assert_eq!((lanes[1].priority, lanes[1].weight), (Priority(0), 1));
    registry.shutdown();
}

#[test]
fn duplicate_priority() {
    let err = load_err(
        "[executors.visa]\n\
         [[executors.visa.lanes]]\n\
         priority = 10\n\
         [[executors.visa.lanes]]\n\
         priority = 10\n",
    );
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    // The second declaration is the mistake.
    assert_eq!((err.line(), err.column()), (Some(5), Some(12)));
    assert_eq!(err.field(), Some("priority"));
    assert!(
        err.detail().contains("priority = 10 is declared twice"),
        "{err}"
    );
}

#[test]
fn core_threads_above_max_threads() {
    let err = load_err(
        "[executors.visa]\n\
         core_threads = 8\n\
         max_threads = 4\n\
         lanes = [{ priority = 1 }]\n",
    );
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!((err.line(), err.column()), (Some(2), Some(16)));
    assert_eq!(err.field(), Some("core_threads"));
    assert!(
        err.detail()
            .contains("core_threads = 8 is greater than max_threads = 4"),
        "{err}"
    );
}

#[test]
fn max_threads_zero() {
    let err = load_err("[executors.e]\nmax_threads = 0\nlanes = [{ priority = 1 }]\n");
    assert_eq!((err.line(), err.field()), (Some(2), Some("max_threads")));
}

#[test]
fn bad_duration() {
    let err =
        load_err("[executors.visa]\nkeep_alive = \"5 parsecs\"\nlanes = [{ priority = 1 }]\n");
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!((err.line(), err.column()), (Some(2), Some(14)));
    assert_eq!(err.field(), Some("keep_alive"));
    assert!(
        err.detail()
            .starts_with("keep_alive = \"5 parsecs\" is not a duration"),
        "{err}"
    );
    assert!(
        err.detail().contains("\"250ms\""),
        "says what is allowed: {err}"
    );
}

#[test]
fn bad_regex() {
    let err = load_err(
        "[rules.visa]\n\
         [[rules.visa.when]]\n\
         priority = 10\n\
         header = \"PRIORITYID\"\n\
         matches = \"[A-Z\"\n",
    );
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!((err.line(), err.column()), (Some(5), Some(11)));
    assert_eq!(err.rule(), Some("visa"));
    assert_eq!(err.field(), Some("matches"));
    assert!(err.to_string().contains("rule \"visa\", when #1"), "{err}");
    assert!(err.detail().contains("unclosed character class"), "{err}");
}

#[test]
fn rule_priority_with_no_lane() {
    let err = load_err(
        "[executors.visa_priority_exec]\n\
         rules = \"visa\"\n\
         lanes = [{ priority = 10 }, { priority = 1 }]\n\
         [rules.visa]\n\
         default_priority = 1\n\
         [[rules.visa.when]]\n\
         priority = 5\n\
         header = \"PRIORITYID\"\n\
         equals = \"ABC\"\n",
    );
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!((err.line(), err.column()), (Some(7), Some(12)));
    assert_eq!(err.rule(), Some("visa"));
    assert_eq!(err.executor(), Some("visa_priority_exec"));
    assert_eq!(err.field(), Some("priority"));
    assert!(
        err.detail()
            .contains("priority = 5 names no lane of executor \"visa_priority_exec\""),
        "{err}"
    );
    assert!(err.detail().contains("(lanes: 10, 1)"), "{err}");
}

#[test]
fn default_priority_with_no_lane() {
    let err = load_err(
        "[executors.e]\nrules = \"r\"\nlanes = [{ priority = 10 }]\n[rules.r]\ndefault_priority = 1\n",
    );
    assert_eq!(
        (err.line(), err.rule(), err.field()),
        (Some(5), Some("r"), Some("default_priority"))
    );
}

#[test]
fn unknown_rule_set() {
    let err = load_err("[executors.e]\nrules = \"visa\"\nlanes = [{ priority = 1 }]\n");
    assert_eq!(
        (err.line(), err.executor(), err.field()),
        (Some(2), Some("e"), Some("rules"))
    );
    assert!(err.detail().contains("names no rule set"), "{err}");
}

#[test]
fn unknown_picker() {
    let err = load_err("[executors.visa]\npicker = \"fair\"\nlanes = [{ priority = 1 }]\n");
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!((err.line(), err.column()), (Some(2), Some(10)));
    assert_eq!(err.field(), Some("picker"));
    assert_eq!(
        err.detail(),
        "picker = \"fair\" is not a picker (allowed: smooth, classic, strict)"
    );
}

#[test]
fn missing_lanes() {
    let err = load_err("[executors.visa]\ncore_threads = 1\n");
    assert_eq!(err.kind(), ConfigErrorKind::MissingKey);
    assert_eq!(
        (err.line(), err.executor(), err.field()),
        (Some(1), Some("visa"), Some("lanes"))
    );
}

#[test]
fn capacity_zero_and_not_a_number() {
    let err = load_err("[executors.e]\nlanes = [{ priority = 1, capacity = 0 }]\n");
    assert_eq!(
        (err.line(), err.column(), err.field()),
        (Some(2), Some(37), Some("capacity"))
    );
    let err = load_err("[executors.e]\nlanes = [{ priority = 1, capacity = \"lots\" }]\n");
    assert_eq!(err.field(), Some("capacity"));
    assert!(err.detail().contains("\"unbounded\""), "{err}");
}

#[test]
fn malformed_conditions() {
    let both = load_err(
        "[rules.r]\n[[rules.r.when]]\npriority = 1\nheader = \"a\"\nequals = \"b\"\nmatches = \"c\"\n",
    );
    assert_eq!((both.line(), both.field()), (Some(6), Some("matches")));

    let nested_priority = load_err(
        "[rules.r]\n[[rules.r.when]]\npriority = 1\n\
         any = [{ priority = 2, header = \"a\", equals = \"b\" }]\n",
    );
    assert_eq!(
        (nested_priority.line(), nested_priority.field()),
        (Some(4), Some("priority"))
    );
    assert!(
        nested_priority.to_string().contains("when #1, any #1"),
        "{nested_priority}"
    );

    let no_test = load_err("[rules.r]\n[[rules.r.when]]\npriority = 1\nheader = \"a\"\n");
    assert_eq!((no_test.line(), no_test.field()), (Some(4), Some("header")));

    let no_priority = load_err("[rules.r]\n[[rules.r.when]]\nheader = \"a\"\nequals = \"b\"\n");
    assert_eq!(no_priority.kind(), ConfigErrorKind::MissingKey);
    assert_eq!(no_priority.field(), Some("priority"));

    let empty_all = load_err("[rules.r]\n[[rules.r.when]]\npriority = 1\nall = []\n");
    assert_eq!(
        (empty_all.line(), empty_all.field()),
        (Some(4), Some("all"))
    );
}

#[test]
fn syntax_error_and_unreadable_file() {
    let err = load_err("[executors.visa\n");
    assert_eq!(err.kind(), ConfigErrorKind::Syntax);
    assert_eq!(err.line(), Some(1));

    let err = Registry::from_path("/no/such/dir/executors.toml").unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::Io);
    assert_eq!(err.line(), None);
    assert!(
        err.to_string()
            .starts_with("/no/such/dir/executors.toml: cannot read"),
        "{err}"
    );
}

#[test]
fn inline_tables_are_placed_as_well_as_headers() {
    let err = load_err("[executors.e]\nlanes = [{ priority = 3 }, { priority = 1, weight = 0 }]\n");
    assert_eq!(
        (err.line(), err.column(), err.field()),
        (Some(2), Some(53), Some("weight"))
    );
    assert!(err.to_string().contains("lane priority 1"), "{err}");
}

#[test]
fn the_shipped_file_loads() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/executors.toml");
    let executors = Registry::from_path(path).expect("executors.toml at the repo root loads");
    assert_eq!(executors.names(), ["visa_priority_exec"]);
    assert_eq!(
        executors
            .rules("visa_priority_exec")
            .as_deref()
            .map(Rules::name),
        Some("visa")
    );
    // The settings reached the builder.
    let visa = executors.get("visa_priority_exec").expect("declared");
    assert_eq!(visa.config().picker, Picker::Smooth);
    assert_eq!(
        visa.config()
            .lanes
            .iter()
            .map(|l| l.priority)
            .collect::<Vec<_>>(),
        [Priority(10), Priority(1)]
    );
    let metrics = visa.metrics();
    let lane = |p| metrics.lane(Priority(p)).map(|l| (l.weight, l.capacity));
    assert_eq!(lane(10), Some((10, Capacity::Bounded(1000))));
    assert_eq!(lane(1), Some((1, Capacity::Bounded(1000))));
    drop(visa);
    executors.shutdown();
}

use std::error::Error as _;

#[test]
fn lane_policies_load_and_their_mistakes_are_placed() {
    let executors = Registry::from_toml_str(
        "[executors.e]\nmax_threads = 10\n\
         [[executors.e.lanes]]\npriority = 10\n\
         [[executors.e.lanes]]\npriority = 1\ncapacity = 5\nmax_running = \"20%\"\n\
         promote_after = \"2s\"\nwhen_full = \"discard-oldest\"\n",
    )
    .expect("valid");
    let metrics = executors.get("e").expect("declared").metrics();
    let lane = metrics.lane(Priority(1)).expect("lane 1");
    assert_eq!(lane.max_running, Some(2));
    executors.shutdown();

    let err = load_err("[executors.e]\n[[executors.e.lanes]]\npriority = 1\nmax_running = 0\n");
    assert_eq!((err.line(), err.field()), (Some(4), Some("max_running")));
    let err =
        load_err("[executors.e]\n[[executors.e.lanes]]\npriority = 1\nmax_running = \"150%\"\n");
    assert_eq!((err.line(), err.field()), (Some(4), Some("max_running")));
    assert!(err.detail().contains("1% to 100%"), "{err}");
    let err =
        load_err("[executors.e]\n[[executors.e.lanes]]\npriority = 1\npromote_after = \"0s\"\n");
    assert_eq!((err.line(), err.field()), (Some(4), Some("promote_after")));
    let err =
        load_err("[executors.e]\n[[executors.e.lanes]]\npriority = 1\nwhen_full = \"drop\"\n");
    assert_eq!(
        (err.line(), err.column(), err.field()),
        (Some(4), Some(13), Some("when_full"))
    );
    assert!(
        err.detail()
            .contains("allowed: block, reject, caller-runs, discard-oldest"),
        "{err}"
    );
}

#[test]
fn a_pattern_that_would_escape_its_anchors_is_refused() {
    // Wrapped as ^(?:...)$, "a)|(b" would compile to an unanchored
    // alternation; checked alone it is unbalanced.
    let err = load_err(
        "[rules.r]\n[[rules.r.when]]\npriority = 1\nheader = \"h\"\nmatches = \"a)|(b\"\n",
    );
    assert_eq!((err.line(), err.field()), (Some(5), Some("matches")));
    assert!(err.detail().contains("not a valid regex"), "{err}");
}

#[test]
fn header_and_property_are_one_key() {
    let err = load_err(
        "[rules.r]\n[[rules.r.when]]\npriority = 1\nheader = \"a\"\nproperty = \"b\"\nequals = \"x\"\n",
    );
    assert_eq!((err.rule(), err.field()), (Some("r"), Some("header")));
    assert!(err.detail().contains("same key"), "{err}");
}

#[test]
fn windows_line_endings_and_a_byte_order_mark() {
    let text = "\u{feff}[executors.e]\r\nlanes = [{ priority = 1 }]\r\npicker = \"fair\"\r\n";
    let err = load_err(text);
    assert_eq!(
        (err.line(), err.column(), err.field()),
        (Some(3), Some(10), Some("picker"))
    );
    let executors = Registry::from_toml_str(&text.replace("fair", "classic")).expect("valid");
    executors.shutdown();
}

#[test]
fn an_integer_too_large_for_toml_names_its_executor_and_key() {
    let path = temp_file(
        "too-large",
        "[executors.x]\ncore_threads = 99999999999999999999\nlanes = [{ priority = 1 }]\n",
    );
    let err = Registry::from_path(&path).unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!(
        (err.line(), err.column(), err.executor(), err.field()),
        (Some(2), Some(16), Some("x"), Some("core_threads"))
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}:2:16: executor \"x\": core_threads = 99999999999999999999 is too large \
             (TOML integers go up to 9223372036854775807)",
            path.display()
        )
    );
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));

    // In a lane, in an inline table, negative, in hexadecimal, in a rule.
    let err = load_err(
        "[executors.x]\nlanes = [{ priority = 1, weight = -99_999_999_999_999_999_999 }]\n",
    );
    assert_eq!(
        (err.line(), err.executor(), err.field()),
        (Some(2), Some("x"), Some("weight"))
    );
    assert!(
        err.to_string()
            .contains("lane priority 1: weight = -99_999"),
        "{err}"
    );
    assert!(err.detail().contains("is too small"), "{err}");
    let err = load_err("[executors.x]\nmax_threads = 0x1_0000_0000_0000_0000\n");
    assert_eq!(
        (err.executor(), err.field()),
        (Some("x"), Some("max_threads"))
    );
    let err = load_err("[rules.r]\ndefault_priority = 18446744073709551616\n");
    assert_eq!(
        (err.rule(), err.field()),
        (Some("r"), Some("default_priority"))
    );

    // Other malformed numbers stay syntax errors.
    for text in ["x = 1__2\n", "x = 1e999\n", "x = 0123\n"] {
        let err = load_err(&format!("[executors.x]\n{text}"));
        assert_eq!(err.kind(), ConfigErrorKind::Syntax, "{text}: {err}");
    }
}

#[test]
fn a_nul_byte_in_an_executor_name_is_refused_at_load_and_placed_at_the_name() {
    let err = load_err("[executors.\"a\\u0000b\"]\nlanes = [{ priority = 1 }]\n");
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!(
        (err.line(), err.column(), err.executor(), err.field()),
        (Some(1), Some(12), Some("a\0b"), None)
    );
    assert_eq!(
        err.to_string(),
        "line 1, column 12: executor \"a\\0b\": the name contains a NUL byte, which a thread \
         name cannot hold (an executor's threads are named after it)"
    );
    let source = err.source().expect("the builder's error");
    assert!(source.to_string().contains("NUL byte"), "{source}");

    // Through dotted keys, and on reload: the running registry is kept.
    let err = load_err("executors.\"a\\u0000b\".lanes = [{ priority = 1 }]\n");
    assert_eq!((err.line(), err.column()), (Some(1), Some(11)));
    let executors =
        Registry::from_toml_str("[executors.a]\nlanes = [{ priority = 1 }]\n").expect("valid");
    let err = executors
        .reload_toml_str("[executors.\"a\\u0000b\"]\nlanes = [{ priority = 1 }]\n")
        .unwrap_err();
    assert_eq!(err.executor(), Some("a\0b"));
    assert_eq!(executors.names(), ["a"]);
    executors.shutdown();
}
