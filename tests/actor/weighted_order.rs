//! 10:1 weighted lanes give the smooth order `HHHHHLHHHHH`, as the
//! executor's picker does.

use super::support::{Hold, Log, assert_balanced, msg, probes, within};
use priority_executor::actor::{MailboxConfig, Unlisted};
use priority_executor::{LaneConfig, Picker, Priority, SendOptions};

#[test]
fn ten_to_one_lanes_are_served_in_the_smooth_order() {
    within("weighted order", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("weighted", &log, &hold)
            .mailbox(
                MailboxConfig::new()
                    .lane_config(LaneConfig::new(Priority::HIGH).weight(10))
                    .lane_config(LaneConfig::new(Priority::LOW).weight(1))
                    .picker(Picker::Smooth)
                    .unlisted(Unlisted::Refuse),
            )
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        addr.send_with(msg('G', 0), SendOptions::new().priority(Priority::HIGH))
            .unwrap(); // takes ticket 0
        hold.wait_held();
        for i in 0..100 {
            addr.send_with(msg('H', i), SendOptions::new().priority(Priority::HIGH))
                .unwrap();
            addr.send_with(msg('L', i), SendOptions::new().priority(Priority::LOW))
                .unwrap();
        }
        hold.open();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        let order: String = log.performed().iter().map(|m| m.label).collect();
        let cycle: String = Picker::Smooth
            .cycle(&[10, 1])
            .into_iter()
            .map(|lane| if lane == 0 { 'H' } else { 'L' })
            .collect();
        assert_eq!(cycle, "HHHHHLHHHHH");
        // Tickets 1, 2, ... while both lanes have work.
        let expected: String = (1..=88).map(|t| cycle.as_bytes()[t % 11] as char).collect();
        assert_eq!(&order[..88], expected);
    });
}
