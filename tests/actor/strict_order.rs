//! Strict order on one instance: URGENT before a stop at HIGH, the LOW
//! backlog handed back as dead letters in FIFO order; with a graceful stop
//! at LOW the backlog runs first. `init` and `destroy` run once each.

use super::support::{Event, Hold, Log, assert_balanced, held, msg, probes, within};
use priority_executor::actor::{DeadReason, MailboxConfig, Reason, SendError};
use priority_executor::{Priority, SendOptions};

fn run(stop_at: Priority) -> (Log, Reason) {
    within("strict order", move || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("strict", &log, &hold)
            .mailbox(MailboxConfig::new().stop_priority(stop_at))
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        for i in 0..1000 {
            addr.send_with(msg('L', i), SendOptions::new().priority(Priority::LOW))
                .unwrap();
        }
        for i in 0..10 {
            addr.send_with(msg('U', i), SendOptions::new().priority(Priority::URGENT))
                .unwrap();
        }
        addr.stop().unwrap();
        hold.open();
        let exit = stage.join();
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.dead_lettered, 0);
        (log, exit.reason)
    })
}

#[test]
fn urgent_runs_then_a_high_stop_and_the_low_backlog_comes_back_in_fifo_order() {
    within("strict order, stop at HIGH", || {
        let (log, hold) = (Log::default(), Hold::default());
        let (dead_tx, dead_rx) = std::sync::mpsc::channel();
        let stage = probes("strict", &log, &hold)
            .on_dead_letter(move |d| dead_tx.send(d).unwrap())
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        for i in 0..1000 {
            addr.send_with(msg('L', i), SendOptions::new().priority(Priority::LOW))
                .unwrap();
        }
        for i in 0..10 {
            addr.send_with(msg('U', i), SendOptions::new().priority(Priority::URGENT))
                .unwrap();
        }
        addr.stop().unwrap(); // at HIGH, the seed's default
        hold.open();
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Stopped);
        assert_balanced(&exit.metrics);

        let performed = log.performed();
        let urgent: Vec<_> = (0..10).map(|i| msg('U', i)).collect();
        assert_eq!(performed, urgent, "the 10 URGENT run, then the stop");

        let dead: Vec<_> = dead_rx.try_iter().collect();
        assert_eq!(dead.len(), 1000);
        for (i, d) in dead.iter().enumerate() {
            assert_eq!(d.message, msg('L', i as u32), "dead letters in FIFO order");
            assert_eq!((d.priority, d.reason), (Priority::LOW, DeadReason::Stopped));
        }
        assert_eq!(exit.metrics.dead_lettered, 1000);
        assert_eq!(log.count(|e| matches!(e, Event::Init(_))), 1);
        assert_eq!(
            log.count(|e| matches!(e, Event::Destroy(_, Reason::Stopped))),
            1
        );
        assert!(matches!(log.events().last(), Some(Event::Destroy(..))));
    });
}

#[test]
fn a_graceful_stop_at_low_waits_for_the_low_backlog() {
    let (log, reason) = run(Priority::LOW);
    assert_eq!(reason, Reason::Stopped);
    let performed = log.performed();
    let mut expected: Vec<_> = (0..10).map(|i| msg('U', i)).collect();
    expected.extend((0..1000).map(|i| msg('L', i)));
    assert_eq!(
        performed, expected,
        "URGENT first, then every LOW in order, then the stop"
    );
    assert_eq!(log.count(|e| matches!(e, Event::Init(_))), 1);
    assert_eq!(log.count(|e| matches!(e, Event::Destroy(..))), 1);
}

#[test]
fn a_stop_refuses_later_sends_with_the_message() {
    within("send after stop", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("refuse", &log, &hold).spawn().expect("spawn");
        let addr = stage.addr();
        addr.stop().unwrap();
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Stopped);
        let err = addr.send(msg('L', 7)).unwrap_err();
        assert!(matches!(err, SendError::ShutDown { .. }));
        assert_eq!(err.into_inner(), msg('L', 7));
        assert!(addr.stop().is_err(), "a closed stage refuses control too");
        let m = exit.metrics;
        assert_eq!(m.handed_back, 0, "the refusal came after the snapshot");
    });
}
