//! A reload while the registry is busy: sequences that enqueue into the
//! same registry, producers blocked on full bounded lanes, executors
//! replaced under them. Nothing waits for the reload, the reload waits for
//! nothing, and no accepted message is lost.
//!
//! With the registry shared as `Arc<RwLock<Registry>>` and a reload taking
//! `&mut self`, the first scenario deadlocked every time: the producers and
//! the forwarding sequence held read guards while blocked on full lanes,
//! the reload waited for the write lock, and std's `RwLock` then queued the
//! read of the sequence on `f` behind that writer, so `f` never freed a
//! slot. Each scenario runs under a watchdog: a hang fails the test with
//! the step it was stuck at, rather than running into a CI time-out.

use crate::common::Gate;
use priority_executor::{Message, Priority, Registry, SequenceHandle};
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread;
use std::time::Duration;

/// How long a scenario may take before it counts as hung: a hang detector,
/// not a timing assertion (each scenario takes milliseconds).
const LIMIT: Duration = Duration::from_secs(20);

/// The step a scenario is at, for the watchdog's message.
#[derive(Clone, Default)]
struct Step(Arc<Mutex<&'static str>>);

impl Step {
    fn set(&self, step: &'static str) {
        *self.0.lock().expect("step lock") = step;
    }

    fn get(&self) -> &'static str {
        *self.0.lock().expect("step lock")
    }
}

/// Runs `scenario` on its own thread and fails the test, naming the step
/// it was at, if it does not finish within `LIMIT` (its thread is then
/// leaked; the test binary still exits).
fn watchdog(name: &str, scenario: impl FnOnce(Step) + Send + 'static) {
    let step = Step::default();
    let (done_tx, done) = mpsc::channel::<()>();
    let watched = step.clone();
    let runner = thread::Builder::new()
        .name(format!("scenario: {name}"))
        .spawn(move || {
            scenario(watched);
            let _ = done_tx.send(());
        })
        .expect("spawn the scenario");
    match done.recv_timeout(LIMIT) {
        Ok(()) => runner.join().expect("the scenario finished"),
        Err(RecvTimeoutError::Timeout) => panic!(
            "HANG: {name} did not finish within {LIMIT:?}, stuck at: {}",
            step.get()
        ),
        Err(RecvTimeoutError::Disconnected) => {
            // It panicked: report its panic as the test's.
            if let Err(panic) = runner.join() {
                std::panic::resume_unwind(panic);
            }
        }
    }
}

/// How the sequences reach the registry they run in: set once it is
/// shared; weak, so that the registry still drops at the end.
type Slot = Arc<OnceLock<Weak<Registry>>>;

fn registry(slot: &Slot) -> Arc<Registry> {
    slot.get()
        .and_then(Weak::upgrade)
        .expect("the registry is alive while its sequences run")
}

/// `e` and `f`: one worker each, one lane of capacity 1 that blocks
/// producers when full (the default `when_full`).
const BEFORE: &str = r#"
[executors.e]
core_threads = 1
max_threads = 1
lanes = [{ priority = 1, capacity = 1 }]

[executors.f]
core_threads = 1
max_threads = 1
lanes = [{ priority = 1, capacity = 1 }]
"#;

/// `e` and `f` changed (so both are replaced and the old ones retired
/// while busy), and `g` added.
const AFTER: &str = r#"
[executors.e]
core_threads = 1
max_threads = 1
lanes = [{ priority = 1, capacity = 1, weight = 2 }]

[executors.f]
core_threads = 1
max_threads = 1
lanes = [{ priority = 1, capacity = 1, weight = 2 }]

[executors.g]
lanes = [{ priority = 1 }]
"#;

const PRODUCERS: usize = 3;

/// Sequence `forward` (on `e`) sends its message on to `lookup` on `f`
/// through the registry, blocking while `f`'s lane is full; `lookup` reads
/// the registry, after waiting at `gate` if the message says `hold`.
struct Scenario {
    slot: Slot,
    executors: Registry,
    lookups: Arc<AtomicUsize>,
    lookup_started: mpsc::Receiver<()>,
    lookup_done: mpsc::Receiver<()>,
    forward_started: mpsc::Receiver<()>,
}

fn scenario(gate: &Gate) -> Scenario {
    let slot: Slot = Arc::default();
    let executors = Registry::from_toml_str(BEFORE).expect("valid");
    let (forward_started_tx, forward_started) = mpsc::channel();
    let forward_started_tx = Mutex::new(forward_started_tx);
    let to_registry = Arc::clone(&slot);
    executors.register_sequence("forward", move |m: Message| {
        let _ = forward_started_tx.lock().expect("lock").send(());
        registry(&to_registry)
            .enqueue_sequence("f", "lookup", m)
            .map(drop)
            .map_err(|err| io::Error::other(err.to_string()))
    });
    let (lookup_started_tx, lookup_started) = mpsc::channel();
    let lookup_started_tx = Mutex::new(lookup_started_tx);
    let to_registry = Arc::clone(&slot);
    let held = gate.clone();
    let lookups = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&lookups);
    let (lookup_done_tx, lookup_done) = mpsc::channel();
    let lookup_done_tx = Mutex::new(lookup_done_tx);
    executors.register_sequence("lookup", move |m: Message| {
        if m.property("hold").is_some() {
            let _ = lookup_started_tx.lock().expect("lock").send(());
            held.wait();
        }
        let priority = registry(&to_registry).priority_for("f", &m);
        assert_eq!(priority, Some(Priority(1)));
        // Counted once the registry is let go, so that the test may take
        // it back once every lookup is counted.
        count.fetch_add(1, Ordering::SeqCst);
        let _ = lookup_done_tx.lock().expect("lock").send(());
        Ok::<(), io::Error>(())
    });
    Scenario {
        slot,
        executors,
        lookups,
        lookup_started,
        lookup_done,
        forward_started,
    }
}

fn ok(handle: SequenceHandle, what: &str) {
    let outcome = handle.join();
    assert!(matches!(outcome, Ok(Ok(()))), "{what}: {outcome:?}");
}

#[test]
fn a_reload_does_not_deadlock_sequences_that_enqueue_into_the_registry() {
    let gate = Gate::default();
    let opener = gate.clone();
    watchdog("reload under load", move |step| {
        let Scenario {
            slot,
            executors,
            lookups,
            lookup_started,
            lookup_done,
            forward_started,
        } = scenario(&gate);
        let shared = Arc::new(executors);
        slot.set(Arc::downgrade(&shared)).expect("set once");
        let enqueue = |message: Message| {
            shared
                .enqueue_sequence("e", "forward", message)
                .expect("accepted")
        };

        step.set("A1 forwards B1, which holds f's worker");
        ok(enqueue(Message::new().with_property("hold", "yes")), "A1");
        lookup_started.recv().expect("B1 started");
        step.set("A2 forwards B2, which fills f's lane");
        ok(enqueue(Message::new()), "A2");
        step.set("A3 blocks e's worker on f's full lane");
        let a3 = enqueue(Message::new());
        for _ in 0..3 {
            forward_started.recv().expect("a forward started");
        }
        step.set("A4 fills e's lane");
        let a4 = enqueue(Message::new());
        step.set("producers block on e's full lane");
        let (blocking_tx, blocking) = mpsc::channel();
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|_| {
                let shared = Arc::clone(&shared);
                let blocking_tx = blocking_tx.clone();
                thread::spawn(move || {
                    blocking_tx.send(()).expect("the test listens");
                    shared
                        .enqueue_sequence("e", "forward", Message::new())
                        .expect("accepted once e has room")
                })
            })
            .collect();
        for _ in 0..PRODUCERS {
            blocking.recv().expect("a producer is on its way");
        }

        step.set("the reload, with everything above blocked");
        let reload = shared.reload_toml_str(AFTER).expect("valid");
        assert_eq!(reload.replaced, ["e", "f"]);
        assert_eq!(reload.added, ["g"]);
        assert!(
            !reload.is_drained(),
            "the old e and f are still held by A3 and the producers"
        );

        step.set("readers, while the old executors are blocked");
        assert_eq!(shared.names(), ["e", "f", "g"]);
        assert!(shared.get("g").is_ok());
        assert_eq!(shared.priority_for("e", &Message::new()), Some(Priority(1)));
        step.set("a new message goes to the new e and f at once");
        ok(enqueue(Message::new()), "a message after the reload");

        step.set("the old executors drain once B1 lets go");
        opener.open();
        ok(a3, "A3");
        ok(a4, "A4");
        for (i, producer) in producers.into_iter().enumerate() {
            let handle = producer.join().expect("the producer did not panic");
            ok(handle, &format!("producer {i}"));
        }
        reload.wait();

        step.set("every accepted message ran, once");
        let forwards = 5 + PRODUCERS;
        let forward = shared.sequence_metrics("forward").expect("registered");
        let total = forwards as u64;
        assert_eq!(
            (forward.enqueued, forward.ran, forward.failed),
            (total, total, 0)
        );
        let lookup = shared.sequence_metrics("lookup").expect("registered");
        assert_eq!(
            (lookup.enqueued, lookup.failed),
            (forwards as u64, 0),
            "each forward queued one lookup"
        );
        step.set("the last lookups, on the new f");
        for _ in 0..forwards {
            lookup_done.recv().expect("a lookup finished");
        }
        assert_eq!(lookups.load(Ordering::SeqCst), forwards);
        step.set("shutting the registry down");
        Arc::into_inner(shared)
            .expect("the test holds the last reference")
            .shutdown();
    });
}

#[test]
fn reloads_racing_producers_lose_nothing() {
    const PRODUCERS: usize = 3;
    const MESSAGES: usize = 300;
    const RELOADS: usize = 30;
    let config = |weight: usize| {
        format!(
            "[executors.a]\ncore_threads = 1\nmax_threads = 2\n\
             lanes = [{{ priority = 2, capacity = 4, weight = {weight} }}, {{ priority = 1, capacity = 4 }}]\n"
        )
    };
    watchdog("reloads racing producers", move |step| {
        let executors = Registry::from_toml_str(&config(60)).expect("valid");
        let ran = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&ran);
        executors.register_sequence("count", move |_m: Message| {
            count.fetch_add(1, Ordering::SeqCst);
            Ok::<(), io::Error>(())
        });
        let shared = Arc::new(executors);
        step.set("producers and reloads, unsynchronised");
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|_| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    (0..MESSAGES)
                        .map(|_| {
                            shared
                                .enqueue_sequence("a", "count", Message::new())
                                .expect("executor a is always there")
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let reloads: Vec<_> = (0..RELOADS)
            .map(|i| {
                // Every reload changes `a`: it is replaced each time.
                let reload = shared.reload_toml_str(&config(61 + i)).expect("valid");
                assert_eq!(reload.replaced, ["a"]);
                reload
            })
            .collect();
        step.set("every message runs");
        for producer in producers {
            for handle in producer.join().expect("the producer did not panic") {
                ok(handle, "a message");
            }
        }
        step.set("every retired executor drains");
        for reload in &reloads {
            reload.wait();
        }
        assert_eq!(ran.load(Ordering::SeqCst), PRODUCERS * MESSAGES);
        let count = shared.sequence_metrics("count").expect("registered");
        let total = (PRODUCERS * MESSAGES) as u64;
        assert_eq!((count.enqueued, count.ran), (total, total));
        step.set("shutting the registry down");
        Arc::into_inner(shared)
            .expect("the test holds the last reference")
            .shutdown();
    });
}
