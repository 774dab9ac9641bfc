//! What an instance does to its own stage from inside a perform: a send
//! (or a reserve) to its own full lane is refused instead of blocking for
//! ever, and dropping the stage (or the pipeline holding it) drains it
//! instead of waiting for itself.

use super::common::within;
use priority_executor::actor::{
    Actor, ActorError, Addr, MailboxConfig, Outbox, Pipeline, Reason, SendError, Stage,
};
use priority_executor::{Capacity, Priority, SendOptions};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);

/// On 0, sends 1 and 2 to its own stage, whose lane holds one letter, and
/// reports what became of each send.
struct SelfSender {
    me: Arc<OnceLock<Addr<u32>>>,
    sends: mpsc::Sender<Result<u32, (u32, bool)>>,
    performed: mpsc::Sender<u32>,
}

impl Actor for SelfSender {
    type In = u32;
    type Out = ();
    fn perform(&mut self, n: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        self.performed.send(n)?;
        if n == 0 {
            let me = self.me.get().ok_or("no address yet")?;
            for m in [1, 2] {
                let outcome = match me.send(m) {
                    Ok(()) => Ok(m),
                    Err(e) => {
                        let full = matches!(e, SendError::Full { .. });
                        Err((e.into_inner(), full))
                    }
                };
                self.sends.send(outcome)?;
            }
            let late = me.send_with(3, SendOptions::new().wait_at_most(Duration::from_secs(60)));
            let outcome = match late {
                Ok(()) => Ok(3),
                Err(SendError::Full { message, .. }) => Err((message, true)),
                Err(e) => Err((e.into_inner(), false)),
            };
            self.sends.send(outcome)?;
            // A permit for the full lane: refused as Full, not left to
            // wait for a slot only this instance could free.
            let mut reserve = me.reserve(Priority::MEDIUM);
            let mut cx = Context::from_waker(Waker::noop());
            let outcome = match Pin::new(&mut reserve).poll(&mut cx) {
                Poll::Ready(Err(SendError::Full { .. })) => Err((4, true)),
                Poll::Ready(Ok(_)) => Ok(4),
                _ => Err((4, false)),
            };
            self.sends.send(outcome)?;
        }
        Ok(())
    }
}

#[test]
fn a_send_to_its_own_full_lane_from_perform_is_refused_not_blocked() {
    let (sends, performed) = within("a perform sends to its own full lane", LIMIT, || {
        let me = Arc::new(OnceLock::new());
        let (sends_tx, sends) = mpsc::channel();
        let (performed_tx, performed) = mpsc::channel();
        let m = me.clone();
        let stage = Stage::builder("self-sender", move |_| SelfSender {
            me: m.clone(),
            sends: sends_tx.clone(),
            performed: performed_tx.clone(),
        })
        .mailbox(MailboxConfig::new().lane(Priority::MEDIUM, Capacity::Bounded(1)))
        .spawn()
        .expect("spawn");
        me.set(stage.addr()).expect("set once");
        stage.addr().send(0).expect("accepted");
        let sends: Vec<_> = (0..4)
            .map(|_| sends.recv().expect("a send's outcome"))
            .collect();
        let exit = stage.drain();
        assert!(exit.metrics.is_balanced(), "{:?}", exit.metrics);
        (sends, performed.try_iter().collect::<Vec<_>>())
    });
    assert_eq!(
        sends,
        vec![Ok(1), Err((2, true)), Err((3, true)), Err((4, true))],
        "the first send takes the free slot; the others are handed back Full at once"
    );
    assert_eq!(performed, vec![0, 1]);
}

/// Drops the stage or pipeline it finds in `slot` when it performs 0;
/// reports what it performs and its destroy.
struct Dropper {
    slot: Slot,
    events: mpsc::Sender<String>,
}

/// Where the test leaves the handle for the actor to drop.
type Slot = Arc<Mutex<Option<Box<dyn Send>>>>;

impl Actor for Dropper {
    type In = u32;
    type Out = u32;
    fn perform(&mut self, n: u32, out: &mut Outbox<'_, u32>) -> Result<(), ActorError> {
        if n == 0 {
            let handle = self.slot.lock().map_err(|_| "poisoned")?.take();
            drop(handle);
            self.events.send(format!("{}: dropped", out.stage()))?;
        } else {
            self.events.send(format!("{}: {n}", out.stage()))?;
        }
        let _ = out.send(n);
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        let _ = self.events.send(format!("destroy {reason}"));
    }
}

/// Collects events until `n` destroys were seen; a hang fails.
fn until_destroyed(events: &mpsc::Receiver<String>, n: usize) -> Vec<String> {
    let mut seen = Vec::new();
    while seen
        .iter()
        .filter(|e: &&String| e.starts_with("destroy"))
        .count()
        < n
    {
        match events.recv_timeout(LIMIT) {
            Ok(e) => seen.push(e),
            Err(_) => panic!(
                "HANG: the stage did not end after being dropped from its own perform: {seen:?}"
            ),
        }
    }
    seen
}

#[test]
fn dropping_a_stage_inside_its_own_perform_drains_it_without_a_deadlock() {
    let slot: Slot = Arc::new(Mutex::new(None));
    let (tx, events) = mpsc::channel();
    let (s, t) = (slot.clone(), tx.clone());
    let stage = Stage::builder("dropped", move |_| Dropper {
        slot: s.clone(),
        events: t.clone(),
    })
    .instances(2)
    .spawn()
    .expect("spawn");
    let addr = stage.addr();
    *slot.lock().unwrap() = Some(Box::new(stage));
    addr.send(0).expect("accepted");
    let seen = until_destroyed(&events, 2);
    assert!(seen.contains(&"dropped: dropped".to_owned()), "{seen:?}");
    assert_eq!(
        seen.iter().filter(|e| *e == "destroy drained").count(),
        2,
        "drained, as a drop from outside does: {seen:?}"
    );
    assert!(matches!(
        addr.send(1).unwrap_err(),
        SendError::ShutDown { .. }
    ));
}

#[test]
fn dropping_a_pipeline_inside_one_of_its_performs_drains_it_without_a_deadlock() {
    let slot: Slot = Arc::new(Mutex::new(None));
    let (tx, events) = mpsc::channel();
    let first = {
        let (s, t) = (slot.clone(), tx.clone());
        Stage::builder("first", move |_| Dropper {
            slot: s.clone(),
            events: t.clone(),
        })
    };
    let second = {
        let (s, t) = (slot.clone(), tx.clone());
        Stage::builder("second", move |_| Dropper {
            slot: s.clone(),
            events: t.clone(),
        })
    };
    let pipeline = Pipeline::builder(first)
        .then(second)
        .spawn()
        .expect("spawn");
    let addr = pipeline.addr();
    addr.send(5).expect("accepted");
    *slot.lock().unwrap() = Some(Box::new(pipeline));
    addr.send(0).expect("accepted");
    let seen = until_destroyed(&events, 2);
    assert!(seen.contains(&"first: dropped".to_owned()), "{seen:?}");
    assert!(seen.contains(&"second: 5".to_owned()), "{seen:?}");
    assert_eq!(
        seen.iter().filter(|e| *e == "destroy drained").count(),
        2,
        "{seen:?}"
    );
}

/// Calls `drain` on its own stage: that would wait for itself.
struct Drainer {
    slot: Arc<Mutex<Option<Stage<Drainer>>>>,
}

impl Actor for Drainer {
    type In = u32;
    type Out = ();
    fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        let stage = self.slot.lock().map_err(|_| "poisoned")?.take();
        if let Some(stage) = stage {
            stage.drain();
        }
        Ok(())
    }
}

#[test]
fn draining_a_stage_inside_its_own_perform_is_a_fault_not_a_deadlock() {
    super::common::quiet_panics("Stage::drain or Stage::join called by");
    let slot = Arc::new(Mutex::new(None));
    let (tx, faults) = mpsc::channel();
    let s = slot.clone();
    let stage = Stage::builder("drainer", move |_| Drainer { slot: s.clone() })
        .on_fault(move |f| tx.send(f.error).expect("fault"))
        .spawn()
        .expect("spawn");
    let addr = stage.addr();
    *slot.lock().unwrap() = Some(stage);
    addr.send(1).expect("accepted");
    let error = faults
        .recv_timeout(LIMIT)
        .expect("HANG: drain from the stage's own perform did not return");
    assert!(error.contains("would wait for itself"), "{error}");
    // The handle was dropped as the panic unwound, before the fault was
    // reported: that began the drain.
    assert!(addr.is_shut_down());
}
