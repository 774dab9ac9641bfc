//! The publisher sets the broker priority from a value's `Prioritized`
//! priority, or from the registry's rules for an ESB `Message`; it
//! survives the broker and lands in that lane.

use crate::common::{executor, unique, uri, wait_until};
use priority_executor::actor::Prioritized;
use priority_executor::{Message, Priority, Registry};
use priority_executor_amqp::{Bridge, ConsumerConfig, Outgoing, PriorityTable};
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct Visa {
    diplomatic: bool,
}

impl Prioritized for Visa {
    fn priority(&self) -> Option<Priority> {
        self.diplomatic.then_some(Priority(10))
    }
}

#[test]
fn prioritized_values_and_ruled_messages_land_in_their_lanes() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("publish-priority");
    let table = PriorityTable::new()
        .map(0..=4, Priority(1))
        .map(5..=9, Priority(10));
    let config = ConsumerConfig::new(&queue)
        .max_priority(10)
        .priorities(table.clone());
    publisher.declare(&config).expect("declare");
    let executors = Registry::from_toml_str(
        r#"
[executors.visa]
rules = "visa"
lanes = [{ priority = 10 }, { priority = 1 }]
[rules.visa]
when = [{ priority = 10, header = "PRIORITYID", equals = "ABC" }]
"#,
    )
    .expect("registry");
    let abc = Message::new()
        .with_property("PRIORITYID", "ABC")
        .with_body("ruled-abc");
    let plain = Message::new().with_body("ruled-plain");
    let messages = [
        Outgoing::to_queue(&queue, "value-diplomatic")
            .prioritized(&table, &Visa { diplomatic: true }),
        Outgoing::to_queue(&queue, "value-plain").prioritized(&table, &Visa { diplomatic: false }),
        Outgoing::from_message(&queue, &abc, &executors, "visa", &table),
        Outgoing::from_message(&queue, &plain, &executors, "visa", &table),
    ];
    publisher.publish_all(messages).expect("publish");
    executors.shutdown();

    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let bridge = Bridge::builder(uri(), executor(1))
        .consume(config, move |msg| {
            s.lock().unwrap().push((
                msg.body_str()?.to_owned(),
                msg.broker_priority(),
                msg.lane(),
                msg.header("PRIORITYID"),
            ));
            Ok(())
        })
        .start()
        .expect("start");
    wait_until(Duration::from_secs(30), "4 messages", || {
        seen.lock().unwrap().len() == 4
    });
    let metrics = bridge.stop();
    assert_eq!(
        metrics[0].requeued, 0,
        "the executor, owned by the bridge, ran every one"
    );
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            (
                "ruled-abc".to_owned(),
                Some(9),
                Priority(10),
                Some("ABC".to_owned())
            ),
            ("ruled-plain".to_owned(), Some(4), Priority(1), None),
            ("value-diplomatic".to_owned(), Some(9), Priority(10), None),
            ("value-plain".to_owned(), None, Priority(1), None),
        ]
    );
    publisher.delete_queue(&queue).expect("delete");
}
