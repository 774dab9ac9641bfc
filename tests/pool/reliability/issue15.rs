use super::*;

fn cpus() -> usize {
    thread::available_parallelism().map_or(1, usize::from)
}

/// The default core (one per CPU) is lowered to fit an explicit
/// `max_threads`, so the same program builds on every machine.
#[test]
fn max_threads_1_builds_on_any_machine() {
    let exec = Executor::builder()
        .name("max-1")
        .max_threads(1)
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap_or_else(|err| panic!("refused on a {}-CPU machine: {err}", cpus()));
    let exec = Owned::new(exec);
    assert_eq!(exec.prestart_core_threads(), 1, "core lowered to 1");
    let job = exec.enqueue(P, || "ran").expect("accepted");
    assert_eq!(within("a job", LIMIT, move || job.join()), Ok("ran"));
}

#[cfg(feature = "esb")]
#[test]
fn max_threads_1_alone_in_executors_toml() {
    let executors = load("[executors.a]\nmax_threads = 1\nlanes = [{ priority = 1 }]\n")
        .unwrap_or_else(|err| panic!("refused on a {}-CPU machine: {err}", cpus()));
    assert_eq!(
        executors.get("a").expect("a").prestart_core_threads(),
        1,
        "core lowered to 1"
    );
}
