//! Shutting a registry down from a job of an executor a reload retired
//! (calling `shutdown`, or dropping the last `Arc<Registry>` there): the
//! call returns, though that executor cannot stop before the job does.
//! And once shut down, a registry takes no reload.

use crate::common::Gate;
use crate::temp_file;
use priority_executor::{ConfigErrorKind, Message, Registry, SequenceError};
use std::io;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Turns a hang into a failure; asserts no timing (each test takes
/// milliseconds).
const LIMIT: Duration = Duration::from_secs(60);

const A: &str = "[executors.a]\ncore_threads = 1\nmax_threads = 1\nlanes = [{ priority = 1 }]\n";
const B: &str = "[executors.b]\nlanes = [{ priority = 1 }]\n";

/// Where the `stop` sequence finds the registry: it takes it out, so the
/// test decides whether the job holds the last `Arc`.
type Slot = Arc<Mutex<Option<Arc<Registry>>>>;

struct Stopping {
    executors: Arc<Registry>,
    slot: Slot,
    gate: Gate,
    started: Receiver<()>,
    /// Sent by `stop` once it is past the shutdown (or the drop).
    done: Receiver<()>,
}

/// A registry with executor `a` and a sequence `stop` that waits at the
/// gate, then takes the registry out of the slot and shuts it down (a
/// message with a `drop` property only drops it).
fn stopping() -> Stopping {
    let executors = Arc::new(Registry::from_toml_str(A).expect("valid"));
    let slot: Slot = Arc::default();
    let gate = Gate::default();
    let (started_tx, started) = mpsc::channel();
    let (done_tx, done) = mpsc::channel();
    let (started_tx, done_tx) = (Mutex::new(started_tx), Mutex::new(done_tx));
    let (from, held) = (Arc::clone(&slot), gate.clone());
    executors.register_sequence("stop", move |m: Message| {
        let _ = started_tx.lock().expect("lock").send(());
        held.wait();
        let registry = from.lock().expect("lock").take().expect("set by the test");
        if m.property("drop").is_none() {
            registry.shutdown();
        }
        drop(registry);
        let _ = done_tx.lock().expect("lock").send(());
        Ok::<(), io::Error>(())
    });
    Stopping {
        executors,
        slot,
        gate,
        started,
        done,
    }
}

#[test]
fn a_job_of_a_retired_executor_shuts_the_registry_down() {
    let s = stopping();
    *s.slot.lock().expect("lock") = Some(Arc::clone(&s.executors));
    let handle = s
        .executors
        .enqueue_sequence("a", "stop", Message::new())
        .expect("queued");
    s.started.recv_timeout(LIMIT).expect("`stop` runs on `a`");
    // `a` retired while its one worker runs `stop`.
    let reload = s.executors.reload_toml_str(B).expect("valid");
    assert_eq!(reload.removed, ["a"]);
    s.gate.open();
    s.done
        .recv_timeout(LIMIT)
        .expect("the shutdown called by `stop` returns");
    assert!(matches!(handle.join(), Ok(Ok(()))));
    // `a` drains and stops once `stop` has returned; `b` refuses.
    reload.wait();
    let b = s.executors.get("b").expect("declared");
    assert!(b.is_shut_down());
    assert!(b.enqueue(priority_executor::Priority(1), || ()).is_err());
}

#[test]
fn a_job_of_a_retired_executor_drops_the_last_registry() {
    let s = stopping();
    let b = {
        *s.slot.lock().expect("lock") = Some(Arc::clone(&s.executors));
        let message = Message::new().with_property("drop", "");
        let _detached = s
            .executors
            .enqueue_sequence("a", "stop", message)
            .expect("queued");
        s.started.recv_timeout(LIMIT).expect("`stop` runs on `a`");
        let reload = s.executors.reload_toml_str(B).expect("valid");
        assert_eq!(reload.removed, ["a"]);
        s.executors.get("b").expect("declared")
    };
    let registry = Arc::downgrade(&s.executors);
    drop(s.executors);
    s.gate.open();
    s.done
        .recv_timeout(LIMIT)
        .expect("dropping the last registry in `stop` returns");
    assert!(registry.upgrade().is_none());
    assert!(b.is_shut_down(), "the dropped registry shut `b` down");
}

#[test]
fn a_reload_after_shutdown_is_refused_and_starts_nothing() {
    let both = format!("{A}{B}");
    let path = temp_file("reload-after-shutdown", &both);
    let executors = Registry::from_toml_str(A).expect("valid");
    executors.register_sequence("noop", |_m: Message| Ok::<(), io::Error>(()));
    executors.shutdown();
    for err in [
        executors.reload_toml_str(&both).expect_err("shut down"),
        executors.reload(&path).expect_err("shut down"),
    ] {
        assert_eq!(err.kind(), ConfigErrorKind::ShutDown);
        assert_eq!(err.path(), None);
        assert_eq!(
            err.to_string(),
            "the registry has been shut down and takes no reload \
             (load a new registry to start executors again)"
        );
    }
    // Nothing was started: `b` is unknown, `a` refuses.
    assert_eq!(executors.names(), ["a"]);
    let refused = executors.enqueue_sequence("b", "noop", Message::new());
    assert!(
        matches!(refused, Err(SequenceError::UnknownExecutor { .. })),
        "{refused:?}"
    );
    let refused = executors.enqueue_sequence("a", "noop", Message::new());
    assert!(
        matches!(refused, Err(SequenceError::ShutDown { .. })),
        "{refused:?}"
    );
}
