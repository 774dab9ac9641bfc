//! A `kill` overtakes a queued `stop` of lower priority: the reason is
//! `killed`, and what is still queued comes back as dead letters in FIFO
//! order.

use super::support::{Event, Hold, Log, assert_balanced, held, msg, probes, within};
use priority_executor::actor::{DeadReason, MailboxConfig, Reason};
use priority_executor::{Priority, SendOptions};

#[test]
fn a_kill_overtakes_a_queued_stop_of_lower_priority() {
    within("kill overtakes stop", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("kill", &log, &hold)
            .mailbox(
                MailboxConfig::new()
                    .stop_priority(Priority::LOW)
                    .kill_priority(Priority::URGENT),
            )
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        for i in 0..100 {
            addr.send_with(msg('M', i), SendOptions::new().priority(Priority::MEDIUM))
                .unwrap();
        }
        addr.stop().unwrap(); // LOW: would run after the 100
        addr.kill().unwrap(); // URGENT: runs next
        hold.open();
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Killed);
        assert_balanced(&exit.metrics);
        assert!(log.performed().is_empty(), "nothing ran after the kill");
        assert_eq!(exit.metrics.dead_lettered, 100);
        assert_eq!(
            log.count(|e| matches!(e, Event::Destroy(_, Reason::Killed))),
            1
        );
    });
}

#[test]
fn killed_letters_come_back_in_fifo_order_highest_lane_first() {
    within("kill dead letters", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("kill-order", &log, &hold).spawn().expect("spawn");
        let addr = held(&stage, &hold);
        for i in 0..50 {
            addr.send_with(msg('L', i), SendOptions::new().priority(Priority::LOW))
                .unwrap();
            addr.send_with(msg('M', i), SendOptions::new().priority(Priority::MEDIUM))
                .unwrap();
        }
        addr.kill().unwrap(); // HIGH, the seed's default
        hold.open();
        // Keep the stage to read its dead letters after it ended.
        while stage.finished().is_none() {
            std::thread::yield_now();
        }
        let dead = stage.take_dead_letters();
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Killed);
        assert_balanced(&exit.metrics);
        let expected: Vec<_> = (0..50)
            .map(|i| msg('M', i))
            .chain((0..50).map(|i| msg('L', i)))
            .collect();
        let got: Vec<_> = dead.iter().map(|d| d.message).collect();
        assert_eq!(got, expected);
        assert!(dead.iter().all(|d| d.reason == DeadReason::Killed));
    });
}
