//! Jobs of one lane run in the order they were queued (Synapse's unbounded
//! sub-queue was LIFO; this one is not).

use crate::common::{hold_worker, single_worker};
use priority_executor::{Picker, Priority};
use std::sync::{Arc, Mutex};

#[test]
fn each_lane_is_fifo() {
    let exec = single_worker(&[(10, 10), (1, 1)], Picker::Smooth);
    let gate = hold_worker(&exec, Priority(10));
    let seen = Arc::new(Mutex::new(Vec::new()));
    for i in 0..200u32 {
        let p = if i % 3 == 0 { 1 } else { 10 };
        let seen = seen.clone();
        let _detached = exec.enqueue(Priority(p), move || seen.lock().unwrap().push((p, i)));
    }
    drop(gate);
    exec.shutdown();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 200);
    for p in [10, 1] {
        let ids: Vec<u32> = seen
            .iter()
            .filter(|(q, _)| *q == p)
            .map(|(_, i)| *i)
            .collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "lane {p} out of order: {ids:?}"
        );
    }
}

#[test]
fn each_producers_jobs_keep_their_order() {
    // Two producers interleave in one lane; each one's jobs run in the
    // order that producer queued them.
    let exec = Arc::new(single_worker(&[(5, 5)], Picker::Smooth));
    let gate = hold_worker(&exec, Priority(5));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let producers: Vec<_> = (0..2u32)
        .map(|p| {
            let exec = exec.clone();
            let seen = seen.clone();
            std::thread::spawn(move || {
                for i in 0..500u32 {
                    let seen = seen.clone();
                    let _detached =
                        exec.enqueue(Priority(5), move || seen.lock().unwrap().push((p, i)));
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    drop(gate);
    Arc::try_unwrap(exec).unwrap().shutdown();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1000);
    for p in 0..2 {
        let ids: Vec<u32> = seen
            .iter()
            .filter(|(q, _)| *q == p)
            .map(|(_, i)| *i)
            .collect();
        assert_eq!(ids, (0..500).collect::<Vec<_>>(), "producer {p}");
    }
}
