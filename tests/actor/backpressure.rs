//! Backpressure per lane: `send` blocks on a full lane, `send_with` a
//! bounded wait (none, or a timeout) hands the message back, and a full
//! low lane never blocks a high one (nor, in a pipeline, high-priority
//! output).

use super::support::{GATE, Hold, Log, assert_balanced, held, msg, probes, within};
use priority_executor::actor::{MailboxConfig, Pipeline, Reason, SendError};
use priority_executor::{Capacity, Priority, SendOptions};
use std::time::Duration;

fn bounded(capacity: usize) -> MailboxConfig {
    MailboxConfig::new()
        .lane(GATE, Capacity::Unbounded)
        .lane(Priority::HIGH, Capacity::Bounded(capacity))
        .lane(Priority::LOW, Capacity::Bounded(capacity))
}

#[test]
fn a_full_lane_refuses_try_send_and_send_timeout_with_the_message() {
    within("full lane", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("full", &log, &hold)
            .mailbox(bounded(2).default_priority(Priority::LOW))
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        addr.send(msg('L', 0)).unwrap();
        addr.send(msg('L', 1)).unwrap();
        let err = addr
            .send_with(msg('L', 2), SendOptions::new().wait_at_most(Duration::ZERO))
            .unwrap_err();
        assert!(matches!(err, SendError::Full { .. }));
        assert_eq!(
            err.to_string(),
            "lane 100 is full (capacity 2): message handed back"
        );
        assert_eq!(err.into_inner(), msg('L', 2));
        let err = addr
            .send_with(
                msg('L', 3),
                SendOptions::new().wait_at_most(Duration::from_millis(1)),
            )
            .unwrap_err();
        assert_eq!(err.into_inner(), msg('L', 3));
        // The high lane is not full: a full low lane does not block it.
        addr.send_with(msg('H', 0), SendOptions::new().priority(Priority::HIGH))
            .unwrap();
        hold.open();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.handed_back, 2);
        let order: Vec<char> = log.performed().iter().map(|m| m.label).collect();
        assert_eq!(order, vec!['H', 'L', 'L']);
    });
}

#[test]
fn a_blocked_send_completes_when_room_is_made() {
    within("blocked send", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("blocked", &log, &hold)
            .mailbox(bounded(1).default_priority(Priority::LOW))
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        addr.send(msg('L', 0)).unwrap();
        assert!(matches!(
            addr.send_with(msg('L', 1), SendOptions::new().wait_at_most(Duration::ZERO))
                .unwrap_err(),
            SendError::Full { .. }
        ));
        let sender = {
            let addr = addr.clone();
            std::thread::spawn(move || addr.send(msg('L', 1)))
        };
        hold.open(); // the instance makes room; the blocked send goes in
        sender.join().unwrap().unwrap();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.performed, 3);
    });
}

#[test]
fn a_send_blocked_on_a_full_lane_gets_its_message_back_when_the_stage_is_killed() {
    within("blocked send, kill", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("blocked-kill", &log, &hold)
            .mailbox(
                bounded(1)
                    .default_priority(Priority::LOW)
                    .kill_priority(GATE),
            )
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        addr.send(msg('L', 0)).unwrap();
        let (entered_tx, entered) = std::sync::mpsc::channel();
        let sender = {
            let addr = addr.clone();
            std::thread::spawn(move || {
                entered_tx.send(()).unwrap();
                addr.send(msg('L', 1))
            })
        };
        entered.recv().unwrap();
        addr.kill().unwrap();
        hold.open();
        // Either the send was refused at the closed door, or it got in
        // before and was turned into a dead letter: never lost.
        let sent = sender.join().unwrap();
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Killed);
        assert_balanced(&exit.metrics);
        match sent {
            Err(e) => assert_eq!(e.into_inner(), msg('L', 1)),
            Ok(()) => assert_eq!(exit.metrics.dead_lettered, 2),
        }
    });
}

#[test]
fn a_full_low_lane_downstream_never_blocks_high_priority_output() {
    within("pipeline backpressure per lane", || {
        let (up_log, up_hold) = (Log::default(), Hold::default());
        let (down_log, down_hold) = (Log::default(), Hold::default());
        let pipeline = Pipeline::builder(probes("up", &up_log, &up_hold).instances(2))
            .then(probes("down", &down_log, &down_hold).mailbox(bounded(1)))
            .spawn()
            .expect("spawn");
        // Hold the downstream instance: the gate message passes through up.
        up_hold.open();
        pipeline
            .addr()
            .send_with(msg('G', 0), SendOptions::new().priority(GATE))
            .unwrap();
        down_hold.wait_held();
        pipeline
            .addr()
            .send_with(msg('L', 0), SendOptions::new().priority(Priority::LOW))
            .unwrap(); // fills down's low lane
        pipeline
            .addr()
            .send_with(msg('L', 1), SendOptions::new().priority(Priority::LOW))
            .unwrap(); // one up instance blocks on it
        let metrics = || pipeline.metrics();
        let low_queued = || {
            metrics()[1]
                .lanes
                .iter()
                .find(|l| l.priority == Priority::LOW)
                .is_some_and(|l| l.queued == 1)
        };
        while up_log.performed().len() < 2 || !low_queued() {
            std::thread::yield_now();
        }
        pipeline
            .addr()
            .send_with(msg('H', 0), SendOptions::new().priority(Priority::HIGH))
            .unwrap();
        // The other up instance forwards it past the full low lane.
        while metrics()[1]
            .lanes
            .iter()
            .find(|l| l.priority == Priority::HIGH)
            .is_none_or(|l| l.queued == 0)
        {
            std::thread::yield_now();
        }
        down_hold.open();
        let exits = pipeline.drain();
        for exit in &exits {
            assert_balanced(&exit.metrics);
        }
        let order: Vec<char> = down_log.performed().iter().map(|m| m.label).collect();
        assert_eq!(order, vec!['H', 'L', 'L']);
    });
}
