use super::*;

/// A job runs, the worker goes to sleep with a huge keep-alive, and a
/// later job must still run on a live worker.
fn later_jobs_run(exec: &Executor) {
    let first = exec.enqueue(P, || 1).expect("accepted");
    assert_eq!(within("the first job", LIMIT, move || first.join()), Ok(1));
    // No event marks "the worker went to sleep": wait for the outcome.
    crate::common::wait_until("the worker is asleep", || {
        exec.metrics().threads.sleeping == 1
    });
    let later = exec.enqueue(P, || 2).expect("accepted");
    assert_eq!(
        within(
            "a job queued after the worker slept with a huge keep-alive",
            LIMIT,
            move || later.join()
        ),
        Ok(2)
    );
    let threads = exec.metrics().threads;
    assert_eq!(threads.live, 1, "the worker is alive: {threads:?}");
    assert!(exec.metrics().threads.sleeping <= threads.live);
}

#[test]
fn a_core_thread_allowed_to_time_out() {
    let exec = Owned::new(
        Executor::builder()
            .name("forever-core")
            .core_threads(1)
            .max_threads(1)
            .allow_core_timeout(true)
            .keep_alive(Duration::MAX)
            .lane(P, Capacity::Unbounded)
            .build()
            .expect("valid settings"),
    );
    later_jobs_run(&exec);
}

#[test]
fn a_thread_above_core() {
    let exec = Owned::new(
        Executor::builder()
            .name("forever-extra")
            .core_threads(0)
            .max_threads(1)
            .keep_alive(Duration::MAX)
            .lane(P, Capacity::Unbounded)
            .build()
            .expect("valid settings"),
    );
    later_jobs_run(&exec);
}

#[cfg(feature = "esb")]
#[test]
fn a_huge_keep_alive_in_executors_toml() {
    let executors = load(
        "[executors.k]\ncore_threads = 1\nmax_threads = 1\nallow_core_timeout = true\n\
         keep_alive = \"18446744073709551615s\"\nlanes = [{ priority = 1 }]\n",
    )
    .expect("a huge keep-alive is valid");
    later_jobs_run(&executors.get("k").expect("declared"));
}
