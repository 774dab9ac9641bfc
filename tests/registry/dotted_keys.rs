//! Dotted keys are TOML: a file that declares executors, lanes and rules
//! through them loads like one with `[table]` headers, and its mistakes
//! are placed as well.

use priority_executor::{Capacity, ConfigErrorKind, Message, Priority, Registry};
use std::io;

#[test]
fn an_executor_declared_by_dotted_keys_loads() {
    let executors =
        Registry::from_toml_str("executors.a.lanes = [{priority = 1}]\n").expect("valid TOML");
    assert_eq!(executors.names(), ["a"]);
    let a = executors.get("a").expect("declared");
    assert_eq!(
        a.config()
            .lanes
            .iter()
            .map(|l| l.priority)
            .collect::<Vec<_>>(),
        [Priority(1)]
    );
    drop(a);
    executors.shutdown();
}

const DOTTED: &str = r#"
executors.visa.core_threads = 1
executors.visa.max_threads = 1
executors.visa.rules = "visa"
executors.visa.lanes = [{ priority = 10, capacity = 5 }, { priority = 1 }]

[rules]
visa.default_priority = 1
visa.when = [
  { priority = 10, not.header = "channel", not.equals = "batch" },
]
"#;

#[test]
fn lanes_and_rules_declared_by_dotted_keys_work() {
    let executors = Registry::from_toml_str(DOTTED).expect("valid TOML");
    let visa = executors.get("visa").expect("declared");
    assert_eq!(
        visa.config()
            .lanes
            .iter()
            .map(|l| l.priority)
            .collect::<Vec<_>>(),
        [Priority(10), Priority(1)]
    );
    let metrics = visa.metrics();
    let capacity = |p| metrics.lane(Priority(p)).map(|l| l.capacity);
    assert_eq!(capacity(10), Some(Capacity::Bounded(5)));
    assert_eq!(capacity(1), Some(Capacity::Unbounded));
    assert_eq!(metrics.threads.live, 0);
    drop(visa);

    let rules = executors.rules("visa").expect("bound");
    assert_eq!(rules.name(), "visa");
    assert_eq!(rules.default_priority(), Some(Priority(1)));
    let batch = Message::new().with_property("channel", "batch");
    let web = Message::new().with_property("channel", "web");
    assert_eq!(executors.priority_for("visa", &batch), Some(Priority(1)));
    assert_eq!(executors.priority_for("visa", &web), Some(Priority(10)));

    // End to end: the rule picks the lane each message runs in.
    executors.register_sequence("submit", |_m: Message| Ok::<(), io::Error>(()));
    for message in [batch, web.clone(), web] {
        executors
            .enqueue_sequence("visa", "submit", message)
            .expect("queued")
            .join()
            .expect("no panic")
            .expect("ok");
    }
    let metrics = executors.get("visa").expect("declared").metrics();
    let submitted = |p| metrics.lane(Priority(p)).map(|l| l.submitted);
    assert_eq!((submitted(10), submitted(1)), (Some(2), Some(1)));
    executors.shutdown();
}

#[test]
fn a_rule_set_by_dotted_keys_under_its_header_loads() {
    let executors = Registry::from_toml_str(
        "[executors.e]\nrules = \"r\"\nlanes = [{ priority = 2 }, { priority = 1 }]\n\
         [rules]\nr.default_priority = 1\n\
         r.when = [{ priority = 2, all = [{ header = \"a\", exists = true }] }]\n",
    )
    .expect("valid TOML");
    let a = Message::new().with_property("a", "");
    assert_eq!(executors.priority_for("e", &a), Some(Priority(2)));
    assert_eq!(
        executors.priority_for("e", &Message::new()),
        Some(Priority(1))
    );
    executors.shutdown();
}

#[test]
fn mistakes_in_dotted_keys_are_placed() {
    let err =
        Registry::from_toml_str("executors.a.lanes = [{priority = 1}]\nexecutors.a.weight = 3\n")
            .unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::UnknownKey);
    assert_eq!(
        (err.line(), err.column(), err.executor(), err.field()),
        (Some(2), Some(13), Some("a"), Some("weight"))
    );

    // No lanes: placed at the executor's name, the only text it has.
    let err = Registry::from_toml_str("executors.a.core_threads = 3\n").unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::MissingKey);
    assert_eq!(
        (err.line(), err.column(), err.executor(), err.field()),
        (Some(1), Some(11), Some("a"), Some("lanes"))
    );

    let err = Registry::from_toml_str("[rules.r]\nwhen = [{ priority = 1, not.header = 3 }]\n")
        .unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::WrongType);
    assert_eq!(
        err.to_string(),
        "line 2, column 38: rule \"r\", when #1, not: header = 3 has the wrong type: \
         expected a string, found an integer"
    );
}
