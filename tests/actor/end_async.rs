//! `Stage::drain_async` / `join_async` and `Pipeline::drain_async` /
//! `join_async`: the blocking ends as futures any runtime polls (tokio's
//! current-thread and multi-thread runtimes, futures' `block_on`), with
//! the blocking forms' outputs. The first poll begins a drain; a future
//! dropped then leaves it running, one dropped unpolled drains on a thread
//! of its own; polled by one of the stage's own instances, it panics as
//! the blocking forms do.

use super::support::{Event, Hold, LIMIT, Log, assert_balanced, held, msg, probes, within};
use priority_executor::actor::{
    Actor, ActorError, Exit, Outbox, Pipeline, Reason, Stage, StageMonitor,
};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, mpsc};
use std::task::{Context, Poll, Waker};

/// Runs a future to its end on one of three runtimes.
type BlockOn = fn(Pin<Box<dyn Future<Output = Vec<Exit>> + Send>>) -> Vec<Exit>;

const RUNTIMES: [(&str, BlockOn); 3] = [
    ("tokio current-thread", |f| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }),
    ("tokio multi-thread", |f| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap()
            .block_on(f)
    }),
    ("futures block_on", |f| ::futures::executor::block_on(f)),
];

fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(Waker::noop()))
}

fn wait_for_destroy(log: &Log, reason: Reason) {
    super::common::wait_until("the stage's instances destroyed", || {
        log.count(|e| matches!(e, Event::Destroy(_, r) if *r == reason)) > 0
    });
}

#[test]
fn stage_drain_async_performs_what_it_accepted_on_each_runtime() {
    for (runtime, block_on) in RUNTIMES {
        let exits = within(runtime, move || {
            let (log, hold) = (Log::default(), Hold::default());
            let stage = probes("drain-async", &log, &hold)
                .instances(2)
                .spawn()
                .unwrap();
            let addr = held(&stage, &hold);
            for seq in 1..=50 {
                addr.send(msg('a', seq)).unwrap();
            }
            let opener = std::thread::spawn({
                let (addr, hold) = (addr.clone(), hold.clone());
                move || {
                    super::common::wait_until("the drain has begun", || addr.is_shut_down());
                    hold.open();
                }
            });
            let exit = block_on(Box::pin(async move { vec![stage.drain_async().await] }));
            opener.join().unwrap();
            exit
        });
        let exit = &exits[0];
        assert_eq!(exit.reason, Reason::Drained, "{runtime}");
        assert_eq!(exit.metrics.performed, 51, "{runtime}");
        assert_balanced(&exit.metrics);
    }
}

#[test]
fn stage_join_async_returns_the_reason_it_ended_for() {
    for (runtime, block_on) in RUNTIMES {
        let exits = within(runtime, move || {
            let (log, hold) = (Log::default(), Hold::default());
            let stage = probes("join-async", &log, &hold).spawn().unwrap();
            stage.addr().send(msg('a', 1)).unwrap();
            let addr = stage.addr();
            let stopper = std::thread::spawn(move || addr.stop().unwrap());
            let exit = block_on(Box::pin(async move { vec![stage.join_async().await] }));
            stopper.join().unwrap();
            exit
        });
        assert_eq!(exits[0].reason, Reason::Stopped, "{runtime}");
    }
}

#[test]
fn a_stage_drain_future_dropped_after_its_first_poll_leaves_the_drain_running() {
    within("a dropped drain_async", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("dropped-drain", &log, &hold).spawn().unwrap();
        let addr = held(&stage, &hold);
        addr.send(msg('a', 1)).unwrap();
        let mut drain = stage.drain_async();
        assert!(poll_once(&mut drain).is_pending(), "an instance is held");
        assert!(addr.is_shut_down(), "the first poll began the drain");
        drop(drain);
        hold.open();
        wait_for_destroy(&log, Reason::Drained);
        assert_eq!(log.performed(), [msg('a', 1)]);
    });
}

#[test]
fn a_stage_drain_future_dropped_unpolled_drains_without_blocking_the_dropper() {
    within("an unpolled drain_async dropped", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("unpolled-drain", &log, &hold).spawn().unwrap();
        let addr = held(&stage, &hold);
        addr.send(msg('a', 1)).unwrap();
        // The instance is held: a drop that waited for the drain would
        // hang here.
        drop(stage.join_async());
        super::common::wait_until("the dropped stage's drain", || addr.is_shut_down());
        hold.open();
        wait_for_destroy(&log, Reason::Drained);
        assert_eq!(log.performed(), [msg('a', 1)]);
    });
}

#[test]
fn pipeline_drain_async_and_join_async_on_each_runtime() {
    for (runtime, block_on) in RUNTIMES {
        let (drained, joined, outputs) = within(runtime, move || {
            let (tx, rx) = mpsc::channel();
            let (log, hold) = (Log::default(), Hold::default());
            let pipeline = Pipeline::builder(probes("first", &log, &hold))
                .then(probes("second", &log, &hold).instances(2))
                .on_output(move |m, _| tx.send(m).unwrap())
                .spawn()
                .unwrap();
            for seq in 1..=30 {
                pipeline.addr().send(msg('a', seq)).unwrap();
            }
            let drained = block_on(Box::pin(pipeline.drain_async()));

            let (log, hold) = (Log::default(), Hold::default());
            let pipeline = Pipeline::builder(probes("first", &log, &hold))
                .then(probes("second", &log, &hold))
                .spawn()
                .unwrap();
            pipeline.addr().send(msg('a', 1)).unwrap();
            let monitor: StageMonitor = pipeline.monitors().remove(1);
            let drainer = std::thread::spawn(move || monitor.drain());
            let joined = block_on(Box::pin(pipeline.join_async()));
            drainer.join().unwrap();
            (drained, joined, rx.try_iter().count())
        });
        assert_eq!(outputs, 30, "{runtime}");
        for exits in [&drained, &joined] {
            assert_eq!(exits.len(), 2, "{runtime}");
            for exit in exits {
                assert_eq!(exit.reason, Reason::Drained, "{runtime}");
                assert_balanced(&exit.metrics);
            }
        }
        assert_eq!(drained[1].metrics.performed, 30, "{runtime}");
        assert_eq!(joined[1].metrics.performed, 1, "{runtime}");
    }
}

#[test]
fn a_pipeline_drain_future_dropped_unpolled_drains_on_a_thread_of_its_own() {
    within("an unpolled pipeline drain_async dropped", || {
        let (log, hold) = (Log::default(), Hold::default());
        let pipeline = Pipeline::builder(probes("first", &log, &hold))
            .then(probes("second", &log, &hold))
            .spawn()
            .unwrap();
        let monitors = pipeline.monitors();
        let addr = pipeline.addr();
        addr.send_with(
            msg('G', 0),
            priority_executor::SendOptions::new().priority(super::support::GATE),
        )
        .unwrap();
        hold.wait_held();
        drop(pipeline.drain_async());
        super::common::wait_until("the dropped pipeline's drain", || addr.is_shut_down());
        hold.open();
        super::common::wait_until("the pipeline's end", || {
            monitors
                .iter()
                .all(|m| m.finished() == Some(Reason::Drained))
        });
    });
}

/// Awaits `drain_async` on its own stage inside `perform`.
struct AsyncDrainer {
    slot: Arc<Mutex<Option<Stage<AsyncDrainer>>>>,
}

impl Actor for AsyncDrainer {
    type In = u32;
    type Out = ();
    fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        let stage = self.slot.lock().map_err(|_| "poisoned")?.take();
        if let Some(stage) = stage {
            ::futures::executor::block_on(stage.drain_async());
        }
        Ok(())
    }
}

#[test]
fn awaiting_drain_async_inside_its_own_perform_is_a_fault_not_a_deadlock() {
    super::common::quiet_panics("Stage::drain_async or Stage::join_async called by");
    let slot = Arc::new(Mutex::new(None));
    let (tx, faults) = mpsc::channel();
    let s = slot.clone();
    let stage = Stage::builder("async-drainer", move |_| AsyncDrainer { slot: s.clone() })
        .on_fault(move |f| tx.send(f.error).expect("fault"))
        .spawn()
        .expect("spawn");
    let addr = stage.addr();
    *slot.lock().unwrap() = Some(stage);
    addr.send(1).expect("accepted");
    let error = faults
        .recv_timeout(LIMIT)
        .expect("HANG: drain_async from the stage's own perform did not return");
    assert!(error.contains("would wait for itself"), "{error}");
    assert!(addr.is_shut_down());
}
