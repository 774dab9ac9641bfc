//! The bridge configured from executors.toml: `[amqp.NAME]` beside
//! `[executors.NAME]`, into the registry's executor.

use crate::common::{unique, uri, wait_until};
use priority_executor::{Priority, Registry};
use priority_executor_amqp::{Bridge, ConsumerConfig, Outgoing};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[test]
fn the_file_sets_queue_table_and_prefetch_into_the_registry_executor() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("file");
    let toml = format!(
        r#"
[executors.visa_file]
core_threads = 1
max_threads = 1

[[executors.visa_file.lanes]]
priority = 10
capacity = 16

[[executors.visa_file.lanes]]
priority = 1
capacity = 16

[amqp.visa_file]
queue = "{queue}"
max_priority = 10
priorities = {{ "0-4" = 1, "5-9" = 10 }}
unmapped_lane = 1
prefetch = 3
"#
    );
    let path = std::env::temp_dir().join(format!("{queue}.toml"));
    std::fs::write(&path, toml).expect("write the file");
    let executors =
        Registry::from_path(&path).expect("the registry reads the file, [amqp] included");
    let config = ConsumerConfig::from_executors_toml(&path, "visa_file").expect("[amqp.visa_file]");
    publisher.declare(&config).expect("declare");
    // 7 maps to lane 10, 2 to lane 1, 10 is unmapped: lane 1, counted.
    for (id, p) in [("seven", 7), ("two", 2), ("ten", 10)] {
        publisher
            .publish(&Outgoing::to_queue(&queue, id).message_id(id).priority(p))
            .expect("publish");
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let exec = executors.get("visa_file").expect("declared");
    let bridge = Bridge::builder(uri(), exec)
        .consume(config, move |msg| {
            s.lock().unwrap().push((
                msg.message_id().unwrap_or("-").to_owned(),
                msg.broker_priority(),
                msg.lane(),
                msg.mapped(),
            ));
            Ok(())
        })
        .start()
        .expect("start");
    wait_until(Duration::from_secs(30), "3 messages", || {
        seen.lock().unwrap().len() == 3
    });
    let metrics = bridge.stop();
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("seven".to_owned(), Some(7), Priority(10), true),
            ("ten".to_owned(), Some(10), Priority(1), false),
            ("two".to_owned(), Some(2), Priority(1), true),
        ]
    );
    assert_eq!(metrics[0].unmapped, 1);
    assert_eq!(metrics[0].acked, 3);
    assert!(metrics[0].max_in_hand <= 3, "the file's prefetch");
    executors.shutdown();
    publisher.delete_queue(&queue).expect("delete");
    let _ = std::fs::remove_file(&path);
}
