//! Named lanes in `executors.toml`: the code finds a lane by its name, the
//! lanes the code needs are checked at load (and at every reload), and a
//! name given twice or empty is an error at the value.

use priority_executor::{ConfigErrorKind, Priority, Registry};

const FILE: &str = r#"[executors.thumbs]
core_threads = 1
max_threads = 1

[[executors.thumbs.lanes]]
priority = 10
name = "interactive"

[[executors.thumbs.lanes]]
priority = 1
name = "bulk"
"#;

#[test]
fn the_code_finds_a_file_lane_by_its_name() {
    let executors = Registry::builder()
        .require_lanes("thumbs", ["interactive", "bulk"])
        .load_toml_str(FILE)
        .unwrap();
    let thumbs = executors.get("thumbs").unwrap();
    assert_eq!(thumbs.lane_priority("interactive"), Ok(Priority(10)));
    assert_eq!(thumbs.lane_priority("bulk"), Ok(Priority(1)));
    let lane = thumbs.lane_priority("interactive").unwrap();
    assert_eq!(
        thumbs.enqueue(lane, || "resized").unwrap().join(),
        Ok("resized")
    );
    let err = thumbs.lane_priority("batch").unwrap_err();
    assert_eq!(err.known, ["interactive", "bulk"]);
    let names: Vec<Option<String>> = thumbs.config().lanes.into_iter().map(|l| l.name).collect();
    assert_eq!(
        names,
        [Some("interactive".to_owned()), Some("bulk".to_owned())]
    );
    executors.shutdown();
}

#[test]
fn a_lane_the_code_needs_and_the_file_lacks_fails_the_load_at_the_lanes() {
    let renamed = FILE.replace("\"bulk\"", "\"batch\"");
    let err = Registry::builder()
        .require_lanes("thumbs", ["interactive"])
        .require_lanes("thumbs", ["bulk"])
        .load_toml_str(&renamed)
        .unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::MissingKey);
    assert_eq!(err.executor(), Some("thumbs"));
    assert_eq!(err.field(), Some("name"));
    // The executor's lanes begin on line 5.
    assert_eq!(err.line(), Some(5));
    assert!(
        err.detail().contains(
            "no lane named \"bulk\", which the code needs (give a lane name = \"bulk\"; \
             its lanes are named \"interactive\", \"batch\")"
        ),
        "{err}"
    );
    // An executor the file lacks is named as such.
    let err = Registry::builder()
        .require_lanes("reports", ["bulk"])
        .load_toml_str(FILE)
        .unwrap_err();
    assert!(
        err.to_string().contains("no [executors.reports] section"),
        "{err}"
    );
}

#[test]
fn a_reload_that_drops_a_needed_lane_name_is_refused_and_changes_nothing() {
    let executors = Registry::builder()
        .require_lanes("thumbs", ["bulk"])
        .load_toml_str(FILE)
        .unwrap();
    let err = executors
        .reload_toml_str(&FILE.replace("name = \"bulk\"\n", ""))
        .unwrap_err();
    assert!(err.detail().contains("none of its lanes") || err.detail().contains("\"interactive\""));
    assert_eq!(
        executors.get("thumbs").unwrap().lane_priority("bulk"),
        Ok(Priority(1))
    );
    executors.shutdown();
}

#[test]
fn a_lane_name_given_twice_or_empty_is_an_error_at_the_value() {
    let twice = FILE.replace("\"bulk\"", "\"interactive\"");
    let err = Registry::from_toml_str(&twice).unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!((err.line(), err.column()), (Some(11), Some(8)));
    assert!(
        err.detail().contains(
            "name = \"interactive\" is given to two lanes (a lane's name is unique in its executor)"
        ),
        "{err}"
    );
    let empty = FILE.replace("\"bulk\"", "\"\"");
    let err = Registry::from_toml_str(&empty).unwrap_err();
    assert_eq!((err.line(), err.column()), (Some(11), Some(8)));
    assert!(
        err.detail().contains("a lane's name is a non-empty string"),
        "{err}"
    );
    let number = FILE.replace("\"bulk\"", "7");
    let err = Registry::from_toml_str(&number).unwrap_err();
    assert_eq!(err.line(), Some(11));
    assert!(err.detail().contains("a string"), "{err}");
}
