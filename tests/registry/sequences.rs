//! Named sequences on named executors: the rules pick the priority, the
//! hook may change it, failures reach the fault handler and the counters,
//! and a refused message always comes back.

use crate::common::Gate;
use crate::sequence_faults::Rejected;
use priority_executor::{
    Message, Priority, Registry, SendOptions, SequenceError, SequenceFailure, SequenceMetrics,
};
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) const VISA: &str = r#"
[executors.visa]
core_threads = 1
max_threads = 1
rules = "visa"
lanes = [{ priority = 10 }, { priority = 5 }, { priority = 1 }]

[rules.visa]
default_priority = 1

[[rules.visa.when]]
priority = 10
header = "PRIORITYID"
equals = "ABC"

[[rules.visa.when]]
priority = 10
header = "applicant"
matches = "embassy|consulate"
ignore_case = true

[[rules.visa.when]]
priority = 5
all = [
  { header = "premium", exists = true },
  { not = { header = "channel", equals = "batch", ignore_case = true } },
]

[[rules.visa.when]]
priority = 5
any = [{ header = "tier", equals = "gold" }, { header = "tier", matches = "plat.*" }]
"#;

pub(crate) fn message(props: &[(&str, &str)]) -> Message {
    props
        .iter()
        .fold(Message::new(), |m, (k, v)| m.with_property(*k, *v))
        .with_body("<visa/>")
}

pub(crate) fn ok(_: Message) -> Result<(), io::Error> {
    Ok(())
}

#[test]
fn rules_give_each_message_its_priority() {
    let executors = Registry::from_toml_str(VISA).expect("valid");
    let p = |props: &[(&str, &str)]| executors.priority_for("visa", &message(props));

    assert_eq!(p(&[("PRIORITYID", "ABC")]), Some(Priority(10)));
    // Header names ignore case; values do not, unless asked.
    assert_eq!(p(&[("priorityid", "ABC")]), Some(Priority(10)));
    assert_eq!(p(&[("PRIORITYID", "abc")]), Some(Priority(1)));
    // `matches` is anchored: the whole value must match.
    assert_eq!(p(&[("applicant", "EMBASSY")]), Some(Priority(10)));
    assert_eq!(p(&[("applicant", "not an embassy")]), Some(Priority(1)));
    // all / exists / not.
    assert_eq!(p(&[("premium", "")]), Some(Priority(5)));
    assert_eq!(
        p(&[("premium", "1"), ("channel", "BATCH")]),
        Some(Priority(1))
    );
    // any.
    assert_eq!(p(&[("tier", "platinum")]), Some(Priority(5)));
    assert_eq!(p(&[("tier", "silver")]), Some(Priority(1)));
    // First match wins.
    assert_eq!(
        p(&[("tier", "gold"), ("PRIORITYID", "ABC")]),
        Some(Priority(10))
    );
    // Default.
    assert_eq!(p(&[]), Some(Priority(1)));
    assert_eq!(executors.priority_for("nope", &Message::new()), None);
    executors.shutdown();
}

#[test]
fn without_default_priority_the_lowest_lane() {
    let executors = Registry::from_toml_str(
        "[executors.e]\nrules = \"r\"\nlanes = [{ priority = 7 }, { priority = 3 }]\n\
         [rules.r]\n[[rules.r.when]]\npriority = 7\nheader = \"x\"\nexists = true\n",
    )
    .expect("valid");
    let rules = executors.rules("e").expect("bound");
    assert_eq!(rules.priority_for(&Message::new()), None);
    assert_eq!(
        executors.priority_for("e", &Message::new()),
        Some(Priority(3))
    );
    let x = Message::new().with_property("x", "");
    assert_eq!(executors.priority_for("e", &x), Some(Priority(7)));
    executors.shutdown();
}

#[test]
fn enqueue_sequence_uses_the_rules() {
    let executors = Registry::from_toml_str(VISA).expect("valid");
    executors.register_sequence("submit", ok);
    let mut handles = Vec::new();
    for props in [
        &[("PRIORITYID", "ABC")][..],
        &[("premium", "yes")][..],
        &[][..],
        &[][..],
    ] {
        handles.push(
            executors
                .enqueue_sequence("visa", "submit", message(props))
                .expect("queued"),
        );
    }
    for handle in handles {
        assert!(handle.join().expect("no panic").is_ok());
    }
    let metrics = executors.get("visa").expect("declared").metrics();
    let submitted = |p| metrics.lane(Priority(p)).map(|l| l.submitted);
    assert_eq!(
        (submitted(10), submitted(5), submitted(1)),
        (Some(1), Some(1), Some(2))
    );
    executors.shutdown();
}

#[test]
fn flood_is_served_ten_to_one() {
    // One worker held by a first job while the flood is queued, as after a
    // maintenance week: then any 11 consecutive runs hold ten ABC and one
    // ordinary application.
    let executors = Registry::from_toml_str(
        r#"
        [executors.visa]
        core_threads = 1
        max_threads = 1
        rules = "visa"
        lanes = [{ priority = 10 }, { priority = 1 }]
        [rules.visa]
        [[rules.visa.when]]
        priority = 10
        header = "PRIORITYID"
        equals = "ABC"
        "#,
    )
    .expect("valid");
    let gate = Gate::default();
    let (started_tx, started_rx) = mpsc::channel();
    let started_tx = Mutex::new(started_tx);
    let held = gate.clone();
    executors.register_sequence("hold", move |_m: Message| {
        let _ = started_tx.lock().expect("lock").send(());
        held.wait();
        Ok::<(), io::Error>(())
    });
    let order = Arc::new(Mutex::new(String::new()));
    let record = Arc::clone(&order);
    executors.register_sequence("submit", move |m: Message| {
        let class = if m.property("PRIORITYID") == Some("ABC") {
            'H'
        } else {
            'L'
        };
        record.lock().expect("lock").push(class);
        Ok::<(), io::Error>(())
    });

    let first = executors
        .enqueue_sequence("visa", "hold", Message::new())
        .expect("queued");
    started_rx.recv().expect("the worker is held");
    let mut handles = Vec::new();
    for i in 0..40 {
        let m = if i % 2 == 0 {
            message(&[("PRIORITYID", "ABC")])
        } else {
            message(&[])
        };
        handles.push(
            executors
                .enqueue_sequence("visa", "submit", m)
                .expect("queued"),
        );
    }
    gate.open();
    first.join().expect("no panic").expect("ok");
    for h in handles {
        h.join().expect("no panic").expect("ok");
    }
    let order = order.lock().expect("lock").clone();
    assert_eq!(order.len(), 40);
    let window = &order[..11];
    assert_eq!(window.matches('H').count(), 10, "order: {order}");
    assert_eq!(window.matches('L').count(), 1, "order: {order}");
    executors.shutdown();
}

#[test]
fn unknown_executor_sequence_or_priority_hands_the_message_back() {
    let executors = Registry::from_toml_str(VISA).expect("valid");
    executors.register_sequence("submit", ok);

    let err = executors
        .enqueue_sequence("visa_exec", "submit", message(&[("id", "1")]))
        .unwrap_err();
    assert!(matches!(err, SequenceError::UnknownExecutor { .. }));
    assert!(
        matches!(
            &err,
            SequenceError::UnknownExecutor { executor, known, .. }
                if executor == "visa_exec" && known == &["visa"]
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "no executor named \"visa_exec\" (executors: visa)"
    );
    assert_eq!(err.into_inner().property("id"), Some("1"));

    let err = executors
        .enqueue_sequence("visa", "call-external", message(&[("id", "2")]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no sequence named \"call-external\" (sequences: submit)"
    );
    assert_eq!(err.message().property("id"), Some("2"));

    let err = executors
        .enqueue_sequence_with(
            "visa",
            "submit",
            message(&[("id", "3")]),
            SendOptions::new().priority(Priority(7)),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "executor \"visa\" has no lane for priority 7 (lanes: 10, 5, 1)"
    );
    let back = err.into_inner();
    assert_eq!(
        (back.property("id"), back.body()),
        (Some("3"), &b"<visa/>"[..])
    );

    assert_eq!(
        executors.sequence_metrics("submit"),
        Some(SequenceMetrics::default()),
        "nothing refused is counted"
    );
    executors.shutdown();
}

#[test]
fn before_enqueue_hook_changes_priority_and_properties() {
    let executors = Registry::from_toml_str(VISA).expect("valid");
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    executors.register_sequence("submit", move |m: Message| {
        let _ = tx
            .lock()
            .expect("lock")
            .send(m.property("received-by").map(str::to_owned));
        Ok::<(), io::Error>(())
    });
    executors
        .set_before_enqueue("visa", |m: &mut Message, p: &mut Priority| {
            m.set_property("received-by", "hook");
            if m.property("escalate").is_some() {
                *p = Priority(5);
            }
            if m.property("bogus").is_some() {
                *p = Priority(99);
            }
        })
        .expect("executor exists");

    let handle = executors
        .enqueue_sequence("visa", "submit", message(&[("escalate", "1")]))
        .expect("queued");
    handle.join().expect("no panic").expect("ok");
    assert_eq!(rx.recv().expect("ran"), Some("hook".to_owned()));
    let lane5 = executors
        .get("visa")
        .ok()
        .and_then(|e| e.metrics().lane(Priority(5)).map(|l| l.submitted));
    assert_eq!(lane5, Some(1));

    // A priority with no lane, set by the hook, is refused with the message
    // as the hook left it.
    let err = executors
        .enqueue_sequence("visa", "submit", message(&[("bogus", "1")]))
        .unwrap_err();
    assert!(matches!(
        err,
        SequenceError::UnknownPriority {
            priority: Priority(99),
            ..
        }
    ));
    assert_eq!(err.into_inner().property("received-by"), Some("hook"));

    assert!(
        executors
            .set_before_enqueue("nope", |_m: &mut Message, _p: &mut Priority| {})
            .is_err()
    );
    executors.shutdown();
}

#[test]
fn counters_count_every_run_exactly() {
    let executors = Registry::from_toml_str(
        "[executors.e]\ncore_threads = 2\nmax_threads = 4\nlanes = [{ priority = 2 }, { priority = 1 }]\n",
    )
    .expect("valid");
    executors.register_sequence("every-third-fails", |m: Message| {
        let n: usize = m.property("n").and_then(|n| n.parse().ok()).unwrap_or(0);
        if n.is_multiple_of(3) {
            Err(Rejected("third"))
        } else {
            Ok(())
        }
    });
    let handles: Vec<_> = (0..300)
        .map(|n| {
            let m = Message::new().with_property("n", n.to_string());
            executors
                .enqueue_sequence("e", "every-third-fails", m)
                .expect("queued")
        })
        .collect();
    let failed = handles
        .into_iter()
        .map(|h| h.join().expect("no panic"))
        .filter(Result::is_err)
        .count();
    assert_eq!(failed, 100);
    let m = executors
        .sequence_metrics("every-third-fails")
        .expect("registered");
    assert_eq!(
        (m.enqueued, m.ran, m.failed, m.panicked),
        (300, 300, 100, 0)
    );

    // Registering again replaces the code and keeps the counts.
    executors.register_sequence("every-third-fails", ok);
    executors
        .enqueue_sequence("e", "every-third-fails", Message::new())
        .expect("queued")
        .join()
        .expect("no panic")
        .expect("ok now");
    let m = executors
        .sequence_metrics("every-third-fails")
        .expect("registered");
    assert_eq!((m.ran, m.failed), (301, 100));
    executors.shutdown();
}

#[test]
fn full_lane_and_shut_down_executor_hand_the_message_back() {
    let executors = Registry::from_toml_str(
        "[executors.e]\ncore_threads = 1\nmax_threads = 1\nlanes = [{ priority = 1, capacity = 1 }]\n",
    )
    .expect("valid");
    let gate = Gate::default();
    let held = gate.clone();
    let (started_tx, started_rx) = mpsc::channel();
    let started_tx = Mutex::new(started_tx);
    executors.register_sequence("hold", move |_m: Message| {
        let _ = started_tx.lock().expect("lock").send(());
        held.wait();
        Ok::<(), io::Error>(())
    });
    let ran = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&ran);
    executors.register_sequence("count", move |_m: Message| {
        count.fetch_add(1, Ordering::SeqCst);
        Ok::<(), io::Error>(())
    });

    let first = executors
        .enqueue_sequence("e", "hold", Message::new())
        .expect("queued");
    started_rx.recv().expect("worker held");
    let second = executors
        .enqueue_sequence_with(
            "e",
            "count",
            Message::new(),
            SendOptions::new().wait_at_most(Duration::ZERO),
        )
        .expect("room for one");
    let err = executors
        .enqueue_sequence_with(
            "e",
            "count",
            Message::new().with_body("third"),
            SendOptions::new().wait_at_most(Duration::ZERO),
        )
        .unwrap_err();
    assert!(matches!(
        err,
        SequenceError::Full {
            priority: Priority(1),
            ..
        }
    ));
    assert!(matches!(err, SequenceError::Full { .. }));
    assert_eq!(err.to_string(), "executor \"e\": lane 1 is full");
    assert_eq!(err.into_inner().body(), b"third");

    gate.open();
    first.join().expect("no panic").expect("ok");
    second.join().expect("no panic").expect("ok");
    assert_eq!(ran.load(Ordering::SeqCst), 1);

    let pending = executors.get("e").expect("declared").shutdown_now();
    assert!(pending.is_empty());
    let err = executors
        .enqueue_sequence("e", "count", Message::new().with_body("late"))
        .unwrap_err();
    assert!(matches!(err, SequenceError::ShutDown { .. }));
    assert!(matches!(err, SequenceError::ShutDown { .. }));
    assert_eq!(err.into_inner().body(), b"late");
    let m = executors.sequence_metrics("count").expect("registered");
    assert_eq!((m.enqueued, m.ran), (1, 1));
    executors.shutdown();
}

#[test]
fn the_registry_and_its_errors_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Registry>();
    send_sync::<priority_executor::SequenceError>();
    send_sync::<SequenceFailure>();
    send_sync::<priority_executor::ConfigError>();
}

#[test]
fn producers_on_many_threads_share_one_registry() {
    let executors = Registry::from_toml_str(VISA).expect("valid");
    let ran = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&ran);
    executors.register_sequence("count", move |_m: Message| {
        count.fetch_add(1, Ordering::SeqCst);
        Ok::<(), io::Error>(())
    });
    let executors = Arc::new(executors);
    let producers: Vec<_> = (0..4)
        .map(|t| {
            let executors = Arc::clone(&executors);
            std::thread::spawn(move || {
                (0..250)
                    .map(|i| {
                        let m = if (t + i) % 2 == 0 {
                            message(&[("PRIORITYID", "ABC")])
                        } else {
                            message(&[])
                        };
                        executors
                            .enqueue_sequence("visa", "count", m)
                            .expect("queued")
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for producer in producers {
        for handle in producer.join().expect("producer") {
            handle.join().expect("no panic").expect("ok");
        }
    }
    assert_eq!(ran.load(Ordering::SeqCst), 1000);
    let metrics = executors.get("visa").expect("declared").metrics();
    // `submitted`: the core counts `completed` just after resolving the
    // handle, so it may lag a join.
    assert_eq!(metrics.lane(Priority(10)).map(|l| l.submitted), Some(500));
    assert_eq!(metrics.lane(Priority(1)).map(|l| l.submitted), Some(500));
    Arc::into_inner(executors).expect("last owner").shutdown();
}

#[test]
fn a_rejecting_lane_hands_the_message_back_from_the_blocking_call() {
    let executors = Registry::from_toml_str(
        "[executors.e]\ncore_threads = 1\nmax_threads = 1\n\
         lanes = [{ priority = 1, capacity = 1, when_full = \"reject\" }]\n",
    )
    .expect("valid");
    let gate = Gate::default();
    let held = gate.clone();
    let (started_tx, started_rx) = mpsc::channel();
    let started_tx = Mutex::new(started_tx);
    executors.register_sequence("hold", move |_m: Message| {
        let _ = started_tx.lock().expect("lock").send(());
        held.wait();
        Ok::<(), io::Error>(())
    });
    let first = executors
        .enqueue_sequence("e", "hold", Message::new())
        .expect("queued");
    started_rx.recv().expect("worker held");
    let second = executors
        .enqueue_sequence("e", "hold", Message::new())
        .expect("room for one");
    let err = executors
        .enqueue_sequence("e", "hold", Message::new().with_body("third"))
        .unwrap_err();
    assert!(matches!(err, SequenceError::Full { .. }));
    assert_eq!(err.into_inner().body(), b"third");
    gate.open();
    first.join().expect("no panic").expect("ok");
    second.join().expect("no panic").expect("ok");
    executors.shutdown();
}
