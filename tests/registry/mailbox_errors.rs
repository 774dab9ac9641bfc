//! Mistakes in a `[mailboxes.NAME]` section of `executors.toml` (the
//! priorities of a stage's mailbox) are placed at their line and column,
//! with the mailbox, the setting, the value and what is allowed.

use crate::config_errors::load_err;
use crate::temp_file;
use priority_executor::{ConfigErrorKind, Registry};

const PRINTER_BAD_STOP: &str = r#"# A stage's mailbox with a mistake on line 4.
[mailboxes.printer]
priority.default = "medium"
priority.poison-pill = "highest"
priority.kill-pill = 400
"#;

#[test]
fn mailbox_priority_not_a_level_names_file_line_mailbox_setting_and_value() {
    let path = temp_file("mailbox", PRINTER_BAD_STOP);
    let err = Registry::from_path(&path).unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!(
        (err.mailbox(), err.field(), err.executor()),
        (Some("printer"), Some("priority.poison-pill"), None)
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}:4:24: mailbox \"printer\": priority.poison-pill = \"highest\" is not allowed \
             (expected a whole number from 0 to 4294967295 or one of \"urgent\", \"high\", \
             \"medium\", \"low\")",
            path.display()
        )
    );
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

#[test]
fn mailbox_priority_out_of_range_and_of_the_wrong_type() {
    let negative = load_err(
        "[mailboxes.m]
priority.default = -1
",
    );
    assert_eq!(negative.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!(
        (negative.line(), negative.column(), negative.field()),
        (Some(2), Some(20), Some("priority.default"))
    );
    assert!(
        negative
            .detail()
            .starts_with("priority.default = -1 is not allowed"),
        "{negative}"
    );

    // The same setting as a table of its own and as an inline table.
    let boolean = load_err(
        "[mailboxes.m.priority]
kill-pill = true
",
    );
    assert_eq!(boolean.kind(), ConfigErrorKind::WrongType);
    assert_eq!(
        (boolean.line(), boolean.mailbox(), boolean.field()),
        (Some(2), Some("m"), Some("priority.kill-pill"))
    );
    assert!(
        boolean
            .detail()
            .starts_with("priority.kill-pill = true has the wrong type"),
        "{boolean}"
    );
    let float = load_err(
        "[mailboxes.m]
priority = { poison-pill = 2.5 }
",
    );
    assert_eq!(float.kind(), ConfigErrorKind::WrongType);
    assert_eq!(float.field(), Some("priority.poison-pill"));
}

#[test]
fn mailbox_unknown_settings() {
    // Rust's name for the poison pill is not the file's.
    let err = load_err(
        "[mailboxes.m]
priority.stop = \"high\"
",
    );
    assert_eq!(err.kind(), ConfigErrorKind::UnknownKey);
    assert_eq!(
        (err.line(), err.mailbox(), err.field()),
        (Some(2), Some("m"), Some("priority.stop"))
    );
    assert!(
        err.detail()
            .contains("allowed: default, poison-pill, kill-pill"),
        "{err}"
    );
    let err = load_err(
        "[mailboxes.m]
poison-pill = 300
",
    );
    assert_eq!(err.kind(), ConfigErrorKind::UnknownKey);
    assert_eq!(err.field(), Some("poison-pill"));
    assert!(err.detail().contains("(allowed: priority)"), "{err}");
    let err = load_err(
        "[mailboxes.m]
priority = \"high\"
",
    );
    assert_eq!(err.kind(), ConfigErrorKind::WrongType);
    assert_eq!(err.field(), Some("priority"));
}
