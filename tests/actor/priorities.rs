//! Where a message's priority comes from and which lane takes it: the
//! message's own (`Prioritized`), a generator, the default; a level
//! between two named ones; and the rules for priorities with no lane.

use super::support::{GATE, Hold, Log, assert_balanced, held, msg, probes, within};
use priority_executor::actor::{
    Actor, ActorError, MailboxConfig, Outbox, Prioritized, PriorityGenerator, SendError,
    SpawnError, Stage, Unlisted,
};
use priority_executor::{Capacity, Picker, Priority, SendOptions};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmd {
    Urgent,
    High,
    Between, // 350: between HIGH and URGENT, declared nowhere else
    Plain,   // no priority of its own: the default
    Low,
    Gate,
}

impl Prioritized for Cmd {
    fn priority(&self) -> Option<Priority> {
        match self {
            Cmd::Urgent => Some(Priority::URGENT),
            Cmd::High => Some(Priority::HIGH),
            Cmd::Between => Some(Priority(350)),
            Cmd::Plain => None,
            Cmd::Low => Some(Priority::LOW),
            Cmd::Gate => Some(GATE),
        }
    }
}

struct Record {
    seen: Arc<Mutex<Vec<(Cmd, Priority)>>>,
    hold: Hold,
}

impl Actor for Record {
    type In = Cmd;
    type Out = ();
    fn perform(&mut self, c: Cmd, out: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        if c == Cmd::Gate {
            self.hold.open_and_hold();
        }
        self.seen
            .lock()
            .map_err(|_| "poisoned")?
            .push((c, out.letter().priority));
        Ok(())
    }
}

#[test]
fn prioritized_messages_a_level_in_between_and_the_default() {
    within("prioritized", || {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let hold = Hold::default();
        let (s, h) = (seen.clone(), hold.clone());
        let stage = Stage::builder("cmds", move |_| Record {
            seen: s.clone(),
            hold: h.clone(),
        })
        .generator(PriorityGenerator::prioritized())
        .spawn()
        .expect("spawn");
        let addr = stage.addr();
        addr.send(Cmd::Gate).unwrap();
        hold.wait_held();
        for c in [Cmd::Low, Cmd::Plain, Cmd::High, Cmd::Between, Cmd::Urgent] {
            addr.send(c).unwrap();
        }
        hold.open();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        let seen = seen.lock().unwrap();
        let expected = vec![
            (Cmd::Gate, GATE),
            (Cmd::Urgent, Priority::URGENT),
            (Cmd::Between, Priority(350)),
            (Cmd::High, Priority::HIGH),
            (Cmd::Plain, Priority::MEDIUM),
            (Cmd::Low, Priority::LOW),
        ];
        assert_eq!(*seen, expected);
        let lanes: Vec<Priority> = exit.metrics.lanes.iter().map(|l| l.priority).collect();
        assert_eq!(
            lanes,
            vec![
                GATE,
                Priority::URGENT,
                Priority(350),
                Priority::HIGH,
                Priority::MEDIUM,
                Priority::LOW
            ],
            "each distinct priority got a lane on first use"
        );
    });
}

#[test]
fn a_generator_for_a_type_we_do_not_own_and_a_configured_default() {
    within("generator", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("gen", &log, &hold)
            .generator(PriorityGenerator::from_fn(|m: &super::support::Msg| {
                (m.label == 'U').then_some(Priority::URGENT)
            }))
            .mailbox(MailboxConfig::new().default_priority(Priority::LOW))
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        addr.send(msg('x', 0)).unwrap();
        addr.send(msg('U', 0)).unwrap();
        hold.open();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        let order: Vec<char> = log.performed().iter().map(|m| m.label).collect();
        assert_eq!(order, vec!['U', 'x']);
        let low = exit
            .metrics
            .lanes
            .iter()
            .find(|l| l.priority == Priority::LOW)
            .unwrap();
        assert_eq!(
            low.accepted, 1,
            "the unmarked message went to the default, LOW"
        );
    });
}

#[test]
fn unlisted_priorities_go_to_the_nearest_lane_below_or_are_refused_naming_the_lanes() {
    within("unlisted", || {
        let (log, hold) = (Log::default(), Hold::default());
        let lanes = MailboxConfig::new()
            .lane(Priority::HIGH, Capacity::Unbounded)
            .lane(Priority::LOW, Capacity::Unbounded);
        let nearest = probes("nearest", &log, &hold)
            .mailbox(lanes.clone().unlisted(Unlisted::Nearest))
            .spawn()
            .expect("spawn");
        let addr = nearest.addr();
        addr.send_with(msg('a', 0), SendOptions::new().priority(Priority(250)))
            .unwrap(); // -> LOW (nearest below)
        addr.send_with(msg('b', 0), SendOptions::new().priority(Priority(5)))
            .unwrap(); // -> LOW (none below: the lowest)
        addr.send_with(msg('c', 0), SendOptions::new().priority(Priority(9999)))
            .unwrap(); // -> HIGH
        let exit = nearest.drain();
        assert_balanced(&exit.metrics);
        let accepted: Vec<(Priority, u64)> = exit
            .metrics
            .lanes
            .iter()
            .map(|l| (l.priority, l.accepted))
            .collect();
        assert_eq!(accepted, vec![(Priority::HIGH, 1), (Priority::LOW, 2)]);

        let refuse = probes("refuse", &log, &hold)
            .mailbox(lanes.unlisted(Unlisted::Refuse))
            .spawn()
            .expect("spawn");
        let err = refuse
            .addr()
            .send_with(msg('r', 1), SendOptions::new().priority(Priority(250)))
            .unwrap_err();
        assert!(matches!(err, SendError::UnknownPriority { .. }));
        assert_eq!(
            err.to_string(),
            "no lane for priority 250 (lanes: 300, 100): message handed back"
        );
        assert_eq!(err.into_inner(), msg('r', 1));
        let exit = refuse.drain();
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.handed_back, 1);
    });
}

#[test]
fn every_priority_is_accepted_past_the_lane_limit() {
    within("many priorities", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("many", &log, &hold).spawn().expect("spawn");
        let addr = stage.addr();
        for p in 0..200u32 {
            addr.send_with(msg('p', p), SendOptions::new().priority(Priority(p * 7)))
                .unwrap();
        }
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.performed, 200);
        assert_eq!(exit.metrics.lanes.len(), 64);
    });
}

#[test]
fn a_weighted_picker_needs_declared_lanes() {
    let (log, hold) = (Log::default(), Hold::default());
    let err = probes("weighted", &log, &hold)
        .mailbox(MailboxConfig::new().picker(Picker::Smooth))
        .spawn()
        .unwrap_err();
    assert_eq!(
        err,
        SpawnError::WeightedNeedsFixedLanes {
            picker: Picker::Smooth
        }
    );
    let err = probes("zero", &log, &hold)
        .mailbox(MailboxConfig::new().lane(Priority::LOW, Capacity::Bounded(0)))
        .spawn()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "lane 100: capacity = 0 is not allowed (expected at least 1, or Capacity::Unbounded for \
         no limit)"
    );
}
