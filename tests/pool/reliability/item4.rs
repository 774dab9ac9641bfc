use super::*;

/// An expired job whose capture panics when dropped: the handle
/// resolves `Expired` and the worker lives on.
#[test]
fn an_expired_job_whose_capture_panics_on_drop() {
    quiet_panics(DELIBERATE);
    let exec = one_worker("expired-bomb", LaneConfig::new(P));
    let worker = worker_name(&exec, P);
    let release = crate::common::hold_worker(&exec, P);
    let bomb = PanicsOnDrop;
    let handle = exec
        .enqueue_with(
            P,
            move || {
                let _bomb = bomb;
                "ran"
            },
            JobOptions::new().deadline(Instant::now()),
        )
        .expect("accepted");
    drop(release);
    let outcome = within("the expired job's handle", LIMIT, move || handle.join());
    assert_eq!(outcome, Err(JobError::Expired));
    assert_eq!(worker_name(&exec, P), worker, "the worker survived");
    assert_eq!(exec.metrics().lane(P).expect("lane").expired, 1);
}

/// A retrying job holding a capture that panics when dropped, failing
/// once and succeeding on attempt 2: its handle resolves (with the
/// value, or as a panic) and the worker lives on.
#[test]
fn a_retrying_job_whose_capture_panics_on_drop_succeeds_on_attempt_2() {
    quiet_panics(DELIBERATE);
    let exec = one_worker("retry-bomb", LaneConfig::new(P));
    let worker = worker_name(&exec, P);
    let bomb = PanicsOnDrop;
    let handle = exec
        .enqueue_retrying(
            P,
            move |attempt| {
                let _held = &bomb;
                if attempt.number == 1 {
                    Err("the first attempt fails")
                } else {
                    Ok(attempt.number)
                }
            },
            RetryPolicy::new(1),
        )
        .expect("accepted");
    let outcome = within("the retrying job's handle", LIMIT, move || handle.join());
    assert!(
        matches!(outcome, Ok(2) | Err(JobError::Panicked { .. })),
        "got {outcome:?}"
    );
    assert_eq!(worker_name(&exec, P), worker, "the worker survived");
}

/// A discard-oldest lane pushes out a job whose capture panics when
/// dropped: the producer's `enqueue` does not panic, the pushed-out
/// handle resolves `Discarded`, the new job runs.
#[test]
fn discard_oldest_pushing_out_a_job_whose_capture_panics_on_drop() {
    quiet_panics(DELIBERATE);
    let exec = one_worker(
        "discard-bomb",
        LaneConfig::new(P)
            .capacity(Capacity::Bounded(1))
            .when_full(RejectionPolicy::DiscardOldest),
    );
    let release = crate::common::hold_worker(&exec, P);
    let bomb = PanicsOnDrop;
    let oldest = exec
        .enqueue(P, move || {
            let _bomb = bomb;
            "the oldest ran"
        })
        .expect("accepted");
    let newer = catch_unwind(AssertUnwindSafe(|| exec.enqueue(P, || "the newer ran")))
        .unwrap_or_else(|payload| {
            panic!(
                "the producer's enqueue panicked: {}",
                panic_text(payload.as_ref())
            )
        })
        .expect("accepted, pushing the oldest out");
    let outcome = within("the pushed-out job's handle", LIMIT, move || oldest.join());
    assert_eq!(outcome, Err(JobError::Discarded));
    drop(release);
    let outcome = within("the newer job's handle", LIMIT, move || newer.join());
    assert_eq!(outcome, Ok("the newer ran"));
    assert_eq!(exec.metrics().lane(P).expect("lane").discarded, 1);
}

/// Dropping a `PendingJob` whose capture panics when dropped: its
/// handle resolves `Cancelled` and the drop does not panic.
#[test]
fn dropping_a_pending_job_whose_capture_panics_on_drop() {
    quiet_panics(DELIBERATE);
    let exec = one_worker("pending-bomb", LaneConfig::new(P));
    let release = crate::common::hold_worker(&exec, P);
    let bomb = PanicsOnDrop;
    let handle = exec
        .enqueue(P, move || {
            let _bomb = bomb;
        })
        .expect("accepted");
    let pending = exec.shutdown_now();
    assert_eq!(pending.len(), 1);
    let dropped = catch_unwind(AssertUnwindSafe(move || drop(pending)));
    drop(release);
    let outcome = within("the dropped pending job's handle", LIMIT, move || {
        handle.join()
    });
    assert_eq!(outcome, Err(JobError::Cancelled));
    if let Err(payload) = dropped {
        panic!(
            "dropping the PendingJob panicked: {}",
            panic_text(payload.as_ref())
        );
    }
}

/// After a panic on a `max_running` lane's worker, the lane must run
/// later jobs on the same worker, and once shut down its running count
/// must be 0 with no thread left.
fn capped_lane_still_runs(exec: &Owned<Executor>, worker: String) {
    let later = exec
        .enqueue(P, || thread::current().name().map(str::to_owned))
        .expect("accepted");
    let outcome = within("a later job on the max_running lane", LIMIT, move || {
        later.join()
    });
    assert_eq!(outcome, Ok(Some(worker)), "ran, on the same worker");
    assert_eq!(exec.shutdown_now().len(), 0);
    assert!(exec.await_termination(LIMIT).is_ok(), "the worker exited");
    let metrics = exec.metrics();
    assert_eq!(metrics.lane(P).expect("lane").running, Some(0));
    assert_eq!(metrics.threads.live, 0);
}

/// A job's result whose destructor panics, dropped on the worker
/// because the handle was dropped first.
#[test]
fn a_max_running_lane_survives_a_result_whose_drop_panics() {
    quiet_panics(DELIBERATE);
    let exec = one_worker(
        "result-bomb",
        LaneConfig::new(P).max_running(MaxRunning::Threads(1)),
    );
    let worker = worker_name(&exec, P);
    let (release, gate) = mpsc::channel::<()>();
    let handle = exec
        .enqueue(P, move || {
            let _ = gate.recv();
            PanicsOnDrop
        })
        .expect("accepted");
    drop(handle);
    release.send(()).expect("the job waits");
    capped_lane_still_runs(&exec, worker);
}

/// The handle polled once as a future with a waker whose `wake`
/// panics; then the job finishes and wakes it.
#[test]
fn a_max_running_lane_survives_a_waker_that_panics() {
    quiet_panics(DELIBERATE);
    let exec = one_worker(
        "waker-bomb",
        LaneConfig::new(P).max_running(MaxRunning::Threads(1)),
    );
    let worker = worker_name(&exec, P);
    let (release, gate) = mpsc::channel::<()>();
    let mut handle = exec
        .enqueue(P, move || {
            let _ = gate.recv();
            7
        })
        .expect("accepted");
    let waker = Waker::from(Arc::new(PanickyWaker));
    let mut cx = Context::from_waker(&waker);
    assert!(Pin::new(&mut handle).poll(&mut cx).is_pending());
    release.send(()).expect("the job waits");
    let outcome = within("the polled handle", LIMIT, move || handle.join());
    assert_eq!(outcome, Ok(7));
    capped_lane_still_runs(&exec, worker);
}
