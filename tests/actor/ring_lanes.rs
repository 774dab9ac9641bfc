//! Bounded lanes keep their letters in a ring whose slots are the senders'
//! tickets (`src/sync/ring.rs`). With a capacity of 2 every slot is reused
//! every other letter while four senders race for them, and letters sent
//! back pass the capacity (a side list that must keep their turn): every
//! letter is performed exactly once, and each sender's letters that were
//! not sent back are performed in the order it sent them.

use super::support::{Event, Hold, Log, assert_balanced, msg, probes, within};
use priority_executor::Capacity;
use priority_executor::actor::{MailboxConfig, Strategy};
use std::collections::HashMap;

const SENDERS: u32 = 4;
const EACH: u32 = 5_000;

/// Every fifth letter fails the predicate once and is sent back.
fn sent_back_once(seq: u32) -> bool {
    seq.is_multiple_of(5)
}

fn run(instances: usize) {
    let (log, hold) = (Log::default(), Hold::default());
    let stage = probes("ring", &log, &hold)
        .instances(instances)
        .mailbox(MailboxConfig::new().default_capacity(Capacity::Bounded(2)))
        .strategy(Strategy::predicate(
            |m: &super::support::Msg| !sent_back_once(m.seq),
            1,
        ))
        .spawn()
        .expect("spawn");
    let senders: Vec<_> = (0..SENDERS)
        .map(|s| {
            let addr = stage.addr();
            std::thread::spawn(move || {
                let label = char::from(b'a' + s as u8);
                for seq in 0..EACH {
                    addr.send(msg(label, seq)).expect("accepted");
                }
            })
        })
        .collect();
    for s in senders {
        s.join().expect("a sender");
    }
    let exit = stage.drain();
    let m = exit.metrics;
    assert_balanced(&m);
    let total = u64::from(SENDERS * EACH);
    assert_eq!((m.offered, m.performed), (total, total));
    assert_eq!(m.sent_back, total / 5);

    let mut times: HashMap<(char, u32), usize> = HashMap::new();
    let mut last: HashMap<char, u32> = HashMap::new();
    for event in log.events() {
        let Event::Perform(_, m) = event else {
            continue;
        };
        *times.entry((m.label, m.seq)).or_default() += 1;
        if instances == 1 && !sent_back_once(m.seq) {
            if let Some(&before) = last.get(&m.label) {
                assert!(
                    before < m.seq,
                    "sender {}: {} after {before}",
                    m.label,
                    m.seq
                );
            }
            last.insert(m.label, m.seq);
        }
    }
    assert_eq!(times.len() as u64, total, "every letter performed");
    assert!(times.values().all(|&n| n == 1), "none performed twice");
}

#[test]
fn one_instance_performs_every_letter_once_in_each_senders_order() {
    within("ring, one instance", || run(1));
}

#[test]
fn two_instances_perform_every_letter_once() {
    within("ring, two instances", || run(2));
}
