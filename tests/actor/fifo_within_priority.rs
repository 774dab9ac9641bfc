//! FIFO among equal priorities, and the first anchor defect (xtra 0.6
//! reorders 58-99% of same-priority sends): here 100 000 sequential sends
//! of one priority are performed in send order.

use super::support::{Hold, Log, assert_balanced, held, msg, probes, within};
use priority_executor::actor::{Actor, ActorError, Outbox, Stage};
use priority_executor::{Priority, SendOptions};
use std::sync::{Arc, Mutex};

#[test]
fn five_hundred_messages_of_one_priority_keep_their_send_order() {
    within("500 in order", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("fifo", &log, &hold).spawn().expect("spawn");
        let addr = held(&stage, &hold);
        for i in 0..500 {
            addr.send_with(msg('M', i), SendOptions::new().priority(Priority::MEDIUM))
                .unwrap();
        }
        hold.open();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        let expected: Vec<_> = (0..500).map(|i| msg('M', i)).collect();
        assert_eq!(log.performed(), expected);
    });
}

struct Order(Arc<Mutex<Vec<u32>>>);

impl Actor for Order {
    type In = u32;
    type Out = ();
    fn perform(&mut self, n: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        self.0.lock().map_err(|_| "poisoned")?.push(n);
        Ok(())
    }
}

#[test]
fn anchor_equal_priorities_keep_send_order_over_100k_sends() {
    within("100k in order", || {
        let seen = Arc::new(Mutex::new(Vec::with_capacity(100_000)));
        let log = seen.clone();
        let stage = Stage::builder("anchor-fifo", move |_| Order(log.clone()))
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        for n in 0..100_000u32 {
            addr.send_with(n, SendOptions::new().priority(Priority::HIGH))
                .unwrap();
        }
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 100_000);
        let reordered = seen.windows(2).filter(|w| w[0] > w[1]).count();
        assert_eq!(
            reordered, 0,
            "no message overtook an earlier one of its priority"
        );
    });
}
