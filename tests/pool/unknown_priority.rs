//! A priority with no lane: the job comes back with an error that says so.

use crate::common::{no_wait, wait_at_most};
use priority_executor::{Capacity, EnqueueError, Executor, Priority};

#[test]
fn unknown_priority_hands_the_job_back() {
    let exec = Executor::builder()
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Bounded(5))
        .build()
        .unwrap();
    let marker = String::from("visa #42");
    let err = exec.enqueue(Priority(5), move || marker).unwrap_err();
    assert!(matches!(err, EnqueueError::UnknownPriority { .. }));
    assert!(
        !matches!(err, EnqueueError::Full { .. }) && !matches!(err, EnqueueError::ShutDown { .. })
    );
    assert_eq!(err.priority(), Priority(5));
    assert_eq!(err.to_string(), "no lane for priority 5 (lanes: 10, 1)");
    assert!(format!("{err:?}").starts_with("UnknownPriority"));
    match &err {
        EnqueueError::UnknownPriority { known, .. } => {
            assert_eq!(known, &vec![Priority(10), Priority(1)]);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(err.into_inner()(), "visa #42");
    assert!(matches!(
        exec.enqueue_with(Priority(0), || (), no_wait())
            .unwrap_err(),
        EnqueueError::UnknownPriority { .. }
    ));
    let timed = exec.enqueue_with(
        Priority(11),
        || (),
        wait_at_most(std::time::Duration::from_millis(1)),
    );
    assert!(matches!(
        timed.unwrap_err(),
        EnqueueError::UnknownPriority { .. }
    ));
    let m = exec.metrics();
    assert_eq!(m.submitted(), 0);
}
