//! The second anchor defect (ractor's factory queue sits behind a FIFO
//! mailbox, so the first urgent message after a backlog waited while lows
//! went ahead): here a high message sent into a backlog is the next one
//! dispatched, behind only the message already running.

use super::support::{Hold, Log, assert_balanced, held, msg, probes, within};
use priority_executor::{Priority, SendOptions};

#[test]
fn anchor_a_high_message_sent_into_a_low_backlog_starts_next() {
    within("high starts next", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("backlog", &log, &hold).spawn().expect("spawn");
        let addr = held(&stage, &hold); // the message already running
        for i in 0..4000 {
            addr.send_with(msg('L', i), SendOptions::new().priority(Priority::LOW))
                .unwrap();
        }
        addr.send_with(msg('H', 0), SendOptions::new().priority(Priority::HIGH))
            .unwrap();
        hold.open();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        let performed = log.performed();
        assert_eq!(performed.len(), 4001);
        assert_eq!(performed[0], msg('H', 0), "no low message went ahead of it");
        assert!(performed[1..].iter().all(|m| m.label == 'L'));
    });
}
