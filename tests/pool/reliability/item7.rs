use super::*;

#[test]
fn percent_of_usize_max_does_not_overflow() {
    for (percent, expected) in [
        (1, usize::MAX / 100 + 1),
        (50, usize::MAX / 2 + 1),
        (100, usize::MAX),
    ] {
        let resolved = catch_unwind(|| MaxRunning::Percent(percent).resolve(usize::MAX))
            .unwrap_or_else(|payload| {
                panic!(
                    "Percent({percent}).resolve(usize::MAX) panicked: {}",
                    panic_text(payload.as_ref())
                )
            });
        assert_eq!(resolved, expected, "Percent({percent}) of usize::MAX");
    }
}

#[test]
fn build_with_a_huge_max_threads_and_a_percent_cap() {
    let built = catch_unwind(|| {
        Executor::builder()
            .name("huge-max")
            .core_threads(1)
            .max_threads(usize::MAX)
            .lane_config(LaneConfig::new(P).max_running(MaxRunning::Percent(50)))
            .build()
    })
    .unwrap_or_else(|payload| panic!("build() panicked: {}", panic_text(payload.as_ref())));
    let exec = Owned::new(built.expect("valid settings"));
    assert_eq!(
        exec.metrics().lane(P).expect("lane").max_running,
        Some(usize::MAX / 2 + 1)
    );
    let job = exec.enqueue(P, || "ran").expect("accepted");
    assert_eq!(within("a job", LIMIT, move || job.join()), Ok("ran"));
}
