//! Accounting: offered = performed + faulted + dead-lettered + handed back,
//! per stage, after a scenario that produces every outcome at once. (The
//! other modules check it after each of theirs with `assert_balanced`.)

use super::support::{GATE, Hold, Log, assert_balanced, msg, probes, within};
use priority_executor::actor::{MailboxConfig, SendError, Unlisted};
use priority_executor::{Capacity, Priority, SendOptions};
use std::time::Duration;

#[test]
fn every_message_is_accounted_for_performed_faulted_dead_or_handed_back() {
    within("accounting", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("books", &log, &hold)
            .instances(2)
            .mailbox(
                MailboxConfig::new()
                    .lane(GATE, Capacity::Unbounded)
                    .lane(Priority::HIGH, Capacity::Bounded(8))
                    .lane(Priority::MEDIUM, Capacity::Unbounded)
                    .lane(Priority::LOW, Capacity::Unbounded)
                    .unlisted(Unlisted::Refuse)
                    .default_priority(Priority::HIGH)
                    .stop_priority(Priority::MEDIUM),
            )
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        for _ in 0..2 {
            addr.send_with(msg('G', 0), SendOptions::new().priority(GATE))
                .unwrap();
            hold.wait_held();
        }
        let (mut full, mut unknown) = (0, 0);
        let no_wait = SendOptions::new().wait_at_most(Duration::ZERO);
        for i in 0..20 {
            // The first 8 fit: 3 fail, 2 panic, 3 succeed. The rest are full.
            let label = match i {
                0..3 => 'E',
                3..5 => 'P',
                _ => 'H',
            };
            if let Err(e) = addr.send_with(msg(label, i), no_wait) {
                assert!(matches!(e, SendError::Full { .. }));
                full += 1;
            }
            if let Err(e) = addr.send_with(msg('x', i), SendOptions::new().priority(Priority(7))) {
                assert!(matches!(e, SendError::UnknownPriority { .. }));
                unknown += 1;
            }
        }
        for i in 0..30 {
            addr.send_with(msg('L', i), SendOptions::new().priority(Priority::LOW))
                .unwrap(); // dead: below the stop
        }
        addr.stop().unwrap();
        hold.open();
        let exit = stage.join();
        let m = exit.metrics;
        assert_balanced(&m);
        assert_eq!((full, unknown), (12, 20));
        assert_eq!(m.offered, 2 + 20 + 20 + 30);
        assert_eq!(m.performed, 2 + 3);
        assert_eq!(m.faulted, 5);
        assert_eq!(m.dead_lettered, 30);
        assert_eq!(m.handed_back, 12 + 20);
    });
}

#[test]
fn a_message_sent_again_after_a_refusal_is_offered_twice_and_accepted_once() {
    within("offered and accepted", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("retry-send", &log, &hold)
            .mailbox(
                MailboxConfig::new()
                    .lane(GATE, Capacity::Unbounded)
                    .lane(Priority::HIGH, Capacity::Bounded(2))
                    .default_priority(Priority::HIGH),
            )
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        addr.send_with(msg('G', 0), SendOptions::new().priority(GATE))
            .unwrap();
        hold.wait_held();
        let no_wait = SendOptions::new().wait_at_most(Duration::ZERO);
        addr.send_with(msg('H', 1), no_wait).unwrap();
        addr.send_with(msg('H', 2), no_wait).unwrap();
        let refused = addr.send_with(msg('H', 3), no_wait).unwrap_err();
        assert!(matches!(refused, SendError::Full { .. }));
        hold.open();
        // The sender keeps its message and sends it again, blocking.
        addr.send(refused.into_inner()).unwrap();
        let m = stage.drain().metrics;
        assert_balanced(&m);
        assert_eq!((m.offered, m.accepted, m.handed_back), (5, 4, 1));
        assert_eq!(m.performed, 4);
        // The log holds the three 'H' letters (the gate letter only holds).
        let sent: Vec<u32> = log.performed().iter().map(|m| m.seq).collect();
        assert_eq!(sent.len(), 3);
        assert!([1, 2, 3].iter().all(|seq| sent.contains(seq)), "{sent:?}");
    });
}

/// Senders racing a close: every message is performed, dead-lettered or
/// handed back to its sender, never lost, whichever way the race goes.
fn race(end: fn(&priority_executor::actor::Addr<super::support::Msg>)) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let (log, hold) = (Log::default(), Hold::default());
    let stage = probes("race", &log, &hold)
        .instances(2)
        .mailbox(MailboxConfig::new().default_capacity(Capacity::Bounded(16)))
        .spawn()
        .expect("spawn");
    let refused = Arc::new(AtomicU64::new(0));
    // The close lands while all three senders are mid-stream.
    let midway = Arc::new(std::sync::Barrier::new(4));
    let senders: Vec<_> = (0..3)
        .map(|t| {
            let (addr, refused, midway) = (stage.addr(), refused.clone(), midway.clone());
            std::thread::spawn(move || {
                for i in 0..5000 {
                    if i == 1000 {
                        midway.wait();
                    }
                    let p = [Priority::LOW, Priority::MEDIUM, Priority::HIGH][(i % 3) as usize];
                    if addr
                        .send_with(msg('r', t * 10_000 + i), SendOptions::new().priority(p))
                        .is_err()
                    {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    midway.wait();
    end(&stage.addr());
    for s in senders {
        s.join().unwrap();
    }
    let exit = stage.drain();
    let m = exit.metrics;
    assert_balanced(&m);
    assert_eq!(m.offered, 15_000);
    assert_eq!(m.handed_back, refused.load(Ordering::Relaxed));
    assert_eq!(m.performed + m.dead_lettered + m.handed_back, 15_000);
    assert_eq!(log.performed().len() as u64, m.performed);
}

#[test]
fn senders_racing_a_kill_lose_nothing() {
    within("race kill", || {
        race(|addr| {
            let _ = addr.kill();
        })
    });
}

#[test]
fn senders_racing_a_stop_lose_nothing() {
    within("race stop", || {
        race(|addr| {
            let _ = addr.stop();
        })
    });
}
