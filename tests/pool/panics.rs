//! A panicking job is caught, reported in its handle and counted; the
//! worker lives on and capacity is not lost.

use priority_executor::{Capacity, Executor, JobError, Priority};

#[test]
fn panics_are_isolated_and_counted() {
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let bad: Vec<_> = (0..5)
        .map(|i| {
            exec.enqueue(Priority(10), move || -> u32 { panic!("job {i} failed") })
                .unwrap()
        })
        .collect();
    let formatted = exec
        .enqueue(Priority(1), || -> () {
            std::panic::panic_any(format!("owned {}", 1))
        })
        .unwrap();
    let odd = exec
        .enqueue(Priority(1), || std::panic::panic_any(17u8))
        .unwrap();
    let good = exec.enqueue(Priority(1), || "still here").unwrap();
    for (i, h) in bad.into_iter().enumerate() {
        assert_eq!(
            h.join(),
            Err(JobError::Panicked {
                message: format!("job {i} failed")
            })
        );
    }
    assert_eq!(
        formatted.join(),
        Err(JobError::Panicked {
            message: "owned 1".into()
        })
    );
    assert!(matches!(odd.join(), Err(JobError::Panicked { .. })));
    // The single worker survived seven panics.
    assert_eq!(good.join(), Ok("still here"));
    let m = exec.metrics();
    assert_eq!(m.lane(Priority(10)).unwrap().panicked, 5);
    assert_eq!(m.lane(Priority(1)).unwrap().panicked, 2);
    assert_eq!(m.lane(Priority(1)).unwrap().completed, 1);
    assert_eq!(m.threads.peak, 1);
}

#[test]
fn panic_message_is_in_the_error_display() {
    let exec = Executor::builder()
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let err = exec
        .enqueue(Priority(1), || panic!("disk full"))
        .unwrap()
        .join()
        .unwrap_err();
    assert_eq!(err.to_string(), "job panicked: disk full");
}
