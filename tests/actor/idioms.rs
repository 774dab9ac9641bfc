//! The channel idioms of an address: `try_send` never waits, and
//! `SendError::is_full` / `is_shut_down` say why a message came back.

use super::support::{GATE, Hold, Log, assert_balanced, held, msg, probes, within};
use priority_executor::actor::{MailboxConfig, SendError, Unlisted};
use priority_executor::{Capacity, Priority, SendOptions};

fn bounded(capacity: usize) -> MailboxConfig {
    MailboxConfig::new()
        .lane(GATE, Capacity::Unbounded)
        .lane(Priority::HIGH, Capacity::Bounded(capacity))
        .lane(Priority::LOW, Capacity::Bounded(capacity))
        .default_priority(Priority::LOW)
}

#[test]
fn try_send_refuses_a_full_lane_at_once_with_the_message() {
    within("try_send on a full lane", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("full", &log, &hold)
            .mailbox(bounded(1))
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        addr.try_send(msg('L', 0)).unwrap();
        // The lane is full and its only instance held: a wait would hang.
        let err = addr.try_send(msg('L', 1)).unwrap_err();
        assert!(err.is_full(), "{err:?}");
        assert!(!err.is_shut_down());
        assert!(matches!(err, SendError::Full { .. }));
        assert_eq!(err.into_inner(), msg('L', 1));
        hold.open();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.handed_back, 1);
        let performed: Vec<char> = log.performed().iter().map(|m| m.label).collect();
        assert_eq!(performed, vec!['L']);
    });
}

#[test]
fn try_send_is_send_with_no_wait() {
    within("try_send and send_with agree", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("agree", &log, &hold)
            .mailbox(bounded(1))
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        addr.try_send(msg('L', 0)).unwrap();
        let no_wait = SendOptions::new().wait_at_most(std::time::Duration::ZERO);
        let by_options = addr.send_with(msg('L', 1), no_wait).unwrap_err();
        let by_idiom = addr.try_send(msg('L', 1)).unwrap_err();
        assert_eq!(by_options.to_string(), by_idiom.to_string());
        assert_eq!(by_options.is_full(), by_idiom.is_full());
        hold.open();
        stage.drain();
    });
}

#[test]
fn after_shutdown_try_send_is_shut_down_with_the_message() {
    within("try_send after a drain", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("closed", &log, &hold)
            .mailbox(bounded(1))
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        hold.open();
        stage.drain();
        let err = addr.try_send(msg('L', 0)).unwrap_err();
        assert!(err.is_shut_down(), "{err:?}");
        assert!(!err.is_full());
        assert_eq!(err.into_inner(), msg('L', 0));
        // send answers alike.
        let err = addr.send(msg('L', 1)).unwrap_err();
        assert!(err.is_shut_down() && !err.is_full());
    });
}

#[test]
fn an_unknown_priority_is_neither_full_nor_shut_down() {
    within("unknown priority", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("refuse", &log, &hold)
            .mailbox(bounded(1).unlisted(Unlisted::Refuse))
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        let at_5 = SendOptions::new().priority(Priority(5));
        let err = addr.send_with(msg('U', 0), at_5).unwrap_err();
        assert!(matches!(err, SendError::UnknownPriority { .. }));
        assert!(!err.is_full() && !err.is_shut_down());
        assert_eq!(err.into_inner(), msg('U', 0));
        hold.open();
        stage.drain();
    });
}
