//! Reloading an edited file: new executors start, removed ones drain and
//! stop, changed ones are replaced, those with only new thread settings
//! take them in place, unchanged ones keep running, and no accepted job is
//! lost.

use crate::common::Gate;
use priority_executor::{ConfigErrorKind, Message, Priority, Registry};
use std::collections::BTreeMap;
use std::io;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

const BEFORE: &str = r#"
[executors.changed]
core_threads = 1
max_threads = 1
lanes = [{ priority = 2 }, { priority = 1 }]

[executors.removed]
core_threads = 1
max_threads = 1
lanes = [{ priority = 1 }]

[executors.kept]
core_threads = 1
max_threads = 1
rules = "r"
lanes = [{ priority = 2 }, { priority = 1 }]

[rules.r]
default_priority = 1
"#;

const AFTER: &str = r#"
[executors.changed]
core_threads = 1
max_threads = 2                     # thread settings alone apply in place,
lanes = [{ priority = 2, weight = 4 }, { priority = 1 }]  # a lane change replaces

[executors.kept]
core_threads = 1
max_threads = 1
rules = "r"
lanes = [{ priority = 2 }, { priority = 1 }]

[executors.added]
lanes = [{ priority = 1 }]

[rules.r]
default_priority = 2                # rules change without replacing `kept`
"#;

type Counts = Arc<Mutex<BTreeMap<String, usize>>>;

/// A registry whose `hold` sequence blocks until the gate opens and whose
/// `count` sequence counts runs by the message's `to` property.
fn registry(toml: &str, gate: &Gate) -> (Registry, Counts, mpsc::Receiver<()>) {
    let executors = Registry::from_toml_str(toml).expect("valid");
    let held = gate.clone();
    let (started_tx, started_rx) = mpsc::channel();
    let started_tx = Mutex::new(started_tx);
    executors.register_sequence("hold", move |_m: Message| {
        let _ = started_tx.lock().expect("lock").send(());
        held.wait();
        Ok::<(), io::Error>(())
    });
    let counts: Counts = Arc::default();
    let tally = Arc::clone(&counts);
    executors.register_sequence("count", move |m: Message| {
        let to = m.property("to").unwrap_or("?").to_owned();
        *tally.lock().expect("lock").entry(to).or_default() += 1;
        Ok::<(), io::Error>(())
    });
    (executors, counts, started_rx)
}

fn to(name: &str) -> Message {
    Message::new().with_property("to", name)
}

#[test]
fn no_accepted_job_is_lost() {
    let gate = Gate::default();
    let (executors, counts, started) = registry(BEFORE, &gate);

    // Hold the one worker of each executor so its queue fills.
    let mut handles = Vec::new();
    for name in ["changed", "removed", "kept"] {
        handles.push(
            executors
                .enqueue_sequence(name, "hold", Message::new())
                .expect("queued"),
        );
        started.recv().expect("worker held");
    }
    for name in ["changed", "removed", "kept"] {
        for _ in 0..50 {
            handles.push(
                executors
                    .enqueue_sequence(name, "count", to(name))
                    .expect("queued"),
            );
        }
    }

    let reload = executors.reload_toml_str(AFTER).expect("valid");
    assert_eq!(reload.added, ["added"]);
    assert_eq!(reload.removed, ["removed"]);
    assert_eq!(reload.replaced, ["changed"]);
    assert_eq!(reload.unchanged, ["kept"]);
    assert!(
        !reload.is_drained(),
        "the retired executors still run their held jobs"
    );
    assert_eq!(executors.names(), ["added", "changed", "kept"]);

    // The kept executor is the same one: its queue is still there.
    let kept = executors.get("kept").expect("kept").metrics();
    assert_eq!(kept.submitted(), 51);
    // Its rules were replaced.
    assert_eq!(
        executors.priority_for("kept", &Message::new()),
        Some(Priority(2))
    );

    // New messages go to the new executors at once, while the old ones
    // are still held.
    for name in ["changed", "added"] {
        for _ in 0..20 {
            let handle = executors
                .enqueue_sequence(name, "count", to(&format!("{name}-new")))
                .expect("queued");
            handle.join().expect("no panic").expect("ok");
        }
    }
    assert!(!reload.is_drained());

    gate.open();
    reload.wait();
    assert!(reload.is_drained());
    for handle in handles {
        handle.join().expect("no panic").expect("ok");
    }
    let counts = counts.lock().expect("lock").clone();
    let expected: BTreeMap<String, usize> = [
        ("added-new", 20),
        ("changed", 50),
        ("changed-new", 20),
        ("kept", 50),
        ("removed", 50),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(counts, expected);
    let count = executors.sequence_metrics("count").expect("registered");
    assert_eq!((count.enqueued, count.ran, count.failed), (190, 190, 0));
    executors.shutdown();
}

#[test]
fn a_file_with_a_mistake_changes_nothing() {
    let gate = Gate::default();
    gate.open();
    let (executors, counts, _started) = registry(BEFORE, &gate);
    let broken = AFTER.replace("max_threads = 2 ", "max_threads = 0 ");
    let err = executors.reload_toml_str(&broken).unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!(
        (err.executor(), err.field()),
        (Some("changed"), Some("max_threads"))
    );
    assert_eq!(executors.names(), ["changed", "kept", "removed"]);
    for name in ["changed", "kept", "removed"] {
        executors
            .enqueue_sequence(name, "count", to(name))
            .expect("still running")
            .join()
            .expect("no panic")
            .expect("ok");
    }
    assert_eq!(counts.lock().expect("lock").values().sum::<usize>(), 3);
    executors.shutdown();
}

#[test]
fn hooks_and_fault_handlers_follow_the_name() {
    let gate = Gate::default();
    gate.open();
    let (executors, _counts, _started) = registry(BEFORE, &gate);
    executors
        .set_before_enqueue("changed", |m: &mut Message, _p: &mut Priority| {
            m.set_property("hooked", "yes");
        })
        .expect("declared");
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    executors.register_sequence("echo", move |m: Message| {
        let _ = tx
            .lock()
            .expect("lock")
            .send(m.property("hooked").map(str::to_owned));
        Ok::<(), io::Error>(())
    });
    let reload = executors.reload_toml_str(AFTER).expect("valid");
    assert_eq!(reload.replaced, ["changed"]);
    executors
        .enqueue_sequence("changed", "echo", Message::new())
        .expect("queued")
        .join()
        .expect("no panic")
        .expect("ok");
    assert_eq!(rx.recv().expect("ran"), Some("yes".to_owned()));
    // Removed, then added again: a new executor with no hook.
    executors.reload_toml_str(BEFORE).expect("valid").wait();
    executors
        .set_before_enqueue("removed", |_m: &mut Message, _p: &mut Priority| {})
        .expect("back again");
    executors.shutdown();
}

#[test]
fn reload_from_a_path_and_shutdown_waits_for_retired_executors() {
    let path = crate::temp_file("reload", BEFORE);

    let gate = Gate::default();
    let executors = Registry::from_path(&path).expect("valid");
    let held = gate.clone();
    let (started_tx, started_rx) = mpsc::channel();
    let started_tx = Mutex::new(started_tx);
    executors.register_sequence("hold", move |_m: Message| {
        let _ = started_tx.lock().expect("lock").send(());
        held.wait();
        Ok::<(), io::Error>(())
    });
    let ran = Arc::new(Mutex::new(0usize));
    let tally = Arc::clone(&ran);
    executors.register_sequence("count", move |_m: Message| {
        *tally.lock().expect("lock") += 1;
        Ok::<(), io::Error>(())
    });
    let _hold = executors
        .enqueue_sequence("removed", "hold", Message::new())
        .expect("queued");
    started_rx.recv().expect("held");
    for _ in 0..25 {
        // Detached: only the count says whether they ran.
        drop(
            executors
                .enqueue_sequence("removed", "count", Message::new())
                .expect("queued"),
        );
    }

    std::fs::write(&path, AFTER).expect("write");
    let reload = executors.reload(&path).expect("valid");
    assert_eq!(reload.removed, ["removed"]);

    std::fs::write(
        &path,
        "[executors.x]\nlanes = [{ priority = 1 }]\nbogus = 1\n",
    )
    .expect("write");
    let err = executors.reload(&path).unwrap_err();
    assert_eq!(err.path(), Some(path.as_path()));
    assert_eq!((err.line(), err.field()), (Some(3), Some("bogus")));

    gate.open();
    executors.shutdown();
    assert_eq!(
        *ran.lock().expect("lock"),
        25,
        "the retired executor drained"
    );
    assert!(reload.is_drained());
    let _ = std::fs::remove_dir_all(path.parent().expect("a directory of its own"));
}

#[test]
fn reloads_while_producers_run_lose_nothing() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    let config = |weight: usize| {
        format!(
            "[executors.a]\ncore_threads = 1\nmax_threads = 1\n\
             lanes = [{{ priority = 2, weight = {weight} }}, {{ priority = 1 }}]\n"
        )
    };
    let executors = Registry::from_toml_str(&config(1)).expect("valid");
    let ran = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&ran);
    executors.register_sequence("count", move |_m: Message| {
        count.fetch_add(1, Ordering::SeqCst);
        Ok::<(), io::Error>(())
    });
    // No lock around it: reload takes &self.
    let registry = Arc::new(executors);

    // Lock-step: each producer queues 50 messages, then waits while the
    // main thread reloads, so every reload falls between queued batches.
    let (tick_tx, tick_rx) = mpsc::channel();
    let mut acks = Vec::new();
    let producers: Vec<_> = (0..2)
        .map(|p| {
            let registry = Arc::clone(&registry);
            let tick_tx = tick_tx.clone();
            let (ack_tx, ack_rx) = mpsc::channel::<()>();
            acks.push(ack_tx);
            std::thread::spawn(move || {
                let mut handles = Vec::new();
                for _ in 0..10 {
                    for _ in 0..50 {
                        handles.push(
                            registry
                                .enqueue_sequence("a", "count", Message::new())
                                .expect("executor a is always there"),
                        );
                    }
                    tick_tx.send(p).expect("main listens");
                    ack_rx.recv().expect("main acks");
                }
                handles
            })
        })
        .collect();
    let mut reloads = Vec::new();
    for i in 0..20 {
        let p: usize = tick_rx.recv().expect("a producer ticks");
        // Every reload changes `a`, so it is replaced each time.
        let reload = registry.reload_toml_str(&config(2 + i % 2)).expect("valid");
        assert_eq!(reload.replaced, ["a"]);
        reloads.push(reload);
        acks[p].send(()).expect("producer waits");
    }
    for producer in producers {
        for handle in producer.join().expect("producer") {
            handle.join().expect("no panic").expect("ok");
        }
    }
    for reload in &reloads {
        reload.wait();
    }
    assert_eq!(ran.load(Ordering::SeqCst), 1000);
    let executors = Arc::into_inner(registry).expect("last owner");
    let count = executors.sequence_metrics("count").expect("registered");
    assert_eq!((count.enqueued, count.ran), (1000, 1000));
    executors.shutdown();
}

#[test]
fn thread_settings_alone_apply_in_place() {
    const ONE: &str =
        "[executors.a]\ncore_threads = 1\nmax_threads = 1\nlanes = [{ priority = 1 }]\n";
    const TWO: &str = "[executors.a]\ncore_threads = 1\nmax_threads = 2\nkeep_alive = \"5s\"\nlanes = [{ priority = 1 }]\n";
    let gate = Gate::default();
    let (executors, counts, started) = registry(ONE, &gate);
    let before = executors.get("a").expect("declared");
    let held = executors
        .enqueue_sequence("a", "hold", Message::new())
        .expect("queued");
    started.recv().expect("the one worker is held");
    let queued: Vec<_> = (0..10)
        .map(|_| {
            executors
                .enqueue_sequence("a", "count", to("a"))
                .expect("queued")
        })
        .collect();

    let reload = executors.reload_toml_str(TWO).expect("valid");
    assert_eq!(reload.resized, ["a"]);
    assert!(reload.replaced.is_empty() && reload.unchanged.is_empty());
    assert!(reload.is_drained(), "nothing was retired");
    // The same executor, queue and all, now allowed a second thread: the
    // queued jobs run on it while the first is still held.
    let config = before.config();
    assert_eq!(
        (config.max_threads, config.keep_alive),
        (2, std::time::Duration::from_secs(5))
    );
    for handle in queued {
        handle.join().expect("no panic").expect("ok");
    }
    assert_eq!(counts.lock().expect("lock")["a"], 10);
    gate.open();
    held.join().expect("no panic").expect("ok");

    // Back to one thread, and a mistake in the thread settings changes
    // nothing.
    let reload = executors.reload_toml_str(ONE).expect("valid");
    assert_eq!(reload.resized, ["a"]);
    assert_eq!(before.config().max_threads, 1);
    let err = executors
        .reload_toml_str(&TWO.replace("core_threads = 1", "core_threads = 3"))
        .unwrap_err();
    assert_eq!(
        (err.executor(), err.field()),
        (Some("a"), Some("core_threads"))
    );
    assert_eq!(before.config().max_threads, 1);
    drop(before);
    executors.shutdown();
}

#[test]
fn a_clone_from_get_of_a_removed_executor_is_refused_and_the_wait_returns() {
    let gate = Gate::default();
    let (executors, counts, _started) = registry(BEFORE, &gate);
    gate.open();
    let removed = executors.get("removed").expect("declared");
    let (ran_tx, ran) = mpsc::channel();
    let _detached = removed.enqueue(Priority(1), move || ran_tx.send(()).unwrap());
    let reload = executors.reload_toml_str(AFTER).expect("valid");
    assert_eq!(reload.removed, ["removed"]);
    assert!(executors.get("removed").is_err(), "no longer listed");
    // Retired: shut down, the clone held or not. What it had accepted
    // runs; what comes after is refused and handed back.
    assert!(removed.is_shut_down());
    assert_eq!(
        removed
            .enqueue(Priority(1), || 6 * 7)
            .unwrap_err()
            .into_inner()(),
        42
    );
    reload.wait();
    assert!(reload.is_drained());
    ran.try_recv()
        .expect("the accepted job ran before the drain ended");
    assert!(removed.is_terminated());
    assert!(counts.lock().expect("lock").is_empty());
    drop(removed);
    executors.shutdown();
}

#[test]
fn shutting_the_registry_down_shuts_down_a_retired_executor_still_held() {
    let gate = Gate::default();
    let (executors, _counts, _started) = registry(BEFORE, &gate);
    gate.open();
    let removed = executors.get("removed").expect("declared");
    let (ran_tx, ran) = mpsc::channel();
    let _detached = removed.enqueue(Priority(1), move || ran_tx.send(()).unwrap());
    let reload = executors.reload_toml_str(AFTER).expect("valid");
    executors.shutdown();
    // Drained and stopped, though the clone is still held: it refuses now.
    ran.try_recv().expect("the accepted job ran");
    assert!(reload.is_drained());
    assert!(removed.is_terminated());
    let err = removed.enqueue(Priority(1), || 7).unwrap_err();
    assert_eq!(err.into_inner()(), 7);
    drop(removed);
}

#[test]
fn a_reload_of_thread_settings_resolves_share_caps_again() {
    const TWO: &str = "[executors.a]\ncore_threads = 2\nmax_threads = 2\n\
                       lanes = [{ priority = 1, max_running = \"50%\" }]\n";
    let executors = Registry::from_toml_str(TWO).expect("valid");
    let a = executors.get("a").expect("declared");
    let cap = |exec: &priority_executor::Executor| {
        exec.metrics().lane(Priority(1)).expect("lane").max_running
    };
    assert_eq!(cap(&a), Some(1));
    let reload = executors
        .reload_toml_str(&TWO.replace("= 2", "= 8"))
        .expect("valid");
    assert_eq!(reload.resized, ["a"]);
    // As a fresh load of the same file gives.
    let fresh = Registry::from_toml_str(&TWO.replace("= 2", "= 8")).expect("valid");
    assert_eq!(cap(&fresh.get("a").expect("declared")), Some(4));
    assert_eq!(cap(&a), Some(4));
    fresh.shutdown();
    drop(a);
    executors.shutdown();
}

/// Clones of an executor a reload retires (a user's from `get`, one a
/// hook captured) neither keep it running nor hold `Reload::wait` up: it
/// drains what it had accepted and refuses what comes after, while the
/// registry's own enqueues go to the executor in its place.
#[test]
fn clones_of_a_retired_executor_do_not_pin_it() {
    const ONE: &str = "[executors.a]\ncore_threads = 1\nmax_threads = 1\n\
                       lanes = [{ priority = 1, capacity = 4 }]\n";
    let gate = Gate::default();
    let (executors, counts, started) = registry(ONE, &gate);
    let old = executors.get("a").expect("declared");
    // A hook that captures a clone of its own executor: it stays with the
    // name, so with the executor that replaces this one.
    let captured = old.clone();
    executors
        .set_before_enqueue("a", move |_m: &mut Message, _p: &mut Priority| {
            let _ = captured.metrics();
        })
        .expect("declared");
    let held = executors
        .enqueue_sequence("a", "hold", Message::new())
        .expect("queued");
    started.recv().expect("the worker is held");
    let queued = executors
        .enqueue_sequence("a", "count", to("old"))
        .expect("queued");

    let reload = executors
        .reload_toml_str(&ONE.replace("capacity = 4", "capacity = 5"))
        .expect("valid");
    assert_eq!(reload.replaced, ["a"]);
    // Retired: the clone is refused, and gets its job back.
    let refused = old.enqueue(Priority(1), || "late").unwrap_err();
    assert!(
        matches!(refused, priority_executor::EnqueueError::ShutDown { .. }),
        "{refused:?}"
    );
    // The registry queues into the executor in its place.
    let new = executors
        .enqueue_sequence("a", "count", to("new"))
        .expect("queued");
    new.join().expect("no panic").expect("ok");

    gate.open();
    crate::common::watchdog("a reload's wait with clones held", move || {
        reload.wait();
        reload.is_drained()
    });
    held.join().expect("no panic").expect("ok");
    queued.join().expect("no panic").expect("ok");
    assert!(old.is_terminated());
    let counts = counts.lock().expect("lock").clone();
    assert_eq!((counts["old"], counts["new"]), (1, 1));
    drop(old);
    executors.shutdown();
}
