//! Fault handlers of sequences: a failed run reaches the handler of its
//! sequence, else of its executor, with the message and the error; a
//! handler that panics leaves the run's outcome in its handle; names that
//! do not exist are errors.

use super::sequences::{VISA, ok};
use priority_executor::{JobError, Message, Registry, SequenceFailure};
use std::sync::{Arc, Mutex};

/// An error with a fixed text, for runs that fail.
#[derive(Debug)]
pub(crate) struct Rejected(pub(crate) &'static str);
impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}
impl std::error::Error for Rejected {}

type Faults = Arc<Mutex<Vec<(String, String, String)>>>;

fn recorder(faults: &Faults, who: &'static str) -> impl Fn(Message, &SequenceFailure) + use<> {
    let faults = Arc::clone(faults);
    move |m, failure| {
        faults.lock().expect("lock").push((
            who.to_owned(),
            String::from_utf8_lossy(m.body()).into_owned(),
            failure.error.to_string(),
        ))
    }
}

#[test]
fn fault_handlers_receive_the_message_and_the_error() {
    let executors = Registry::from_toml_str(VISA).expect("valid");
    executors.register_sequence("reject", |_m: Message| Err(Rejected("missing passport")));
    executors.register_sequence("also-reject", |_m: Message| Err(Rejected("expired")));
    executors.register_sequence("boom", |_m: Message| -> Result<(), Rejected> {
        panic!("sequence blew up")
    });
    let faults: Faults = Arc::default();
    executors
        .set_sequence_fault_handler("reject", recorder(&faults, "sequence"))
        .expect("registered");
    executors
        .set_executor_fault_handler("visa", recorder(&faults, "executor"))
        .expect("declared");

    let failure = executors
        .enqueue_sequence("visa", "reject", Message::new().with_body("form-1"))
        .expect("queued")
        .join()
        .expect("no panic")
        .unwrap_err();
    assert_eq!(
        failure.to_string(),
        "sequence \"reject\" on executor \"visa\" (priority 1) failed: missing passport"
    );
    executors
        .enqueue_sequence("visa", "also-reject", Message::new().with_body("form-2"))
        .expect("queued")
        .join()
        .expect("no panic")
        .unwrap_err();
    let panicked = executors
        .enqueue_sequence("visa", "boom", Message::new().with_body("form-3"))
        .expect("queued")
        .join();
    assert!(
        matches!(&panicked, Err(JobError::Panicked { message }) if message.contains("sequence blew up")),
        "{panicked:?}"
    );

    let faults = faults.lock().expect("lock").clone();
    assert_eq!(
        faults,
        [
            (
                "sequence".into(),
                "form-1".into(),
                "missing passport".into()
            ),
            ("executor".into(), "form-2".into(), "expired".into()),
            (
                "executor".into(),
                "form-3".into(),
                "panicked: sequence blew up".into()
            ),
        ]
    );
    let metrics = |name| executors.sequence_metrics(name).expect("registered");
    assert_eq!((metrics("reject").ran, metrics("reject").failed), (1, 1));
    let boom = metrics("boom");
    assert_eq!(
        (boom.enqueued, boom.ran, boom.failed, boom.panicked),
        (1, 1, 1, 1)
    );
    executors.shutdown();
}

#[test]
fn a_panicking_fault_handler_leaves_the_sequence_outcome_in_the_handle() {
    let executors = Registry::from_toml_str(VISA).expect("valid");
    executors.register_sequence("reject", |_m: Message| Err(Rejected("missing passport")));
    executors.register_sequence("boom", |_m: Message| -> Result<(), Rejected> {
        panic!("sequence blew up")
    });
    executors
        .set_executor_fault_handler("visa", |_m, _failure| panic!("fault handler blew up"))
        .expect("declared");

    let failure = executors
        .enqueue_sequence("visa", "reject", Message::new())
        .expect("queued")
        .join()
        .expect("the handler's panic is not the run's")
        .unwrap_err();
    assert_eq!(failure.error.to_string(), "missing passport");
    let panicked = executors
        .enqueue_sequence("visa", "boom", Message::new())
        .expect("queued")
        .join();
    assert!(
        matches!(&panicked, Err(JobError::Panicked { message }) if message == "sequence blew up"),
        "{panicked:?}"
    );
    // The one worker lived through both.
    executors.register_sequence("submit", ok);
    executors
        .enqueue_sequence("visa", "submit", Message::new())
        .expect("queued")
        .join()
        .expect("no panic")
        .expect("ok");
    let reject = executors.sequence_metrics("reject").expect("registered");
    assert_eq!((reject.ran, reject.failed, reject.panicked), (1, 1, 0));
    executors.shutdown();
}

#[test]
fn unknown_names_for_fault_handlers_are_errors() {
    let executors = Registry::from_toml_str(VISA).expect("valid");
    let err = executors
        .set_sequence_fault_handler("nope", |_m, _f| {})
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no sequence named \"nope\" (sequences: none)"
    );
    let err = executors
        .set_executor_fault_handler("nope", |_m, _f| {})
        .unwrap_err();
    assert_eq!(err.known, ["visa"]);
    executors.shutdown();
}
