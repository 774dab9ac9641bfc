//! The picker's order as one worker sees it: exact, in dispatch order.

use crate::common::{hold_worker, single_worker};
use priority_executor::{Picker, Priority};
use std::sync::{Arc, Mutex};

/// Queues `counts[i]` jobs in lane `lanes[i]` behind a held worker, releases
/// it and returns the order in which the lanes were served.
fn served_order(picker: Picker, lanes: &[(u32, u32)], counts: &[usize]) -> Vec<u32> {
    let exec = single_worker(lanes, picker);
    let gate = hold_worker(&exec, Priority(lanes[0].0));
    let order = Arc::new(Mutex::new(Vec::new()));
    for (&(p, _), &n) in lanes.iter().zip(counts) {
        for _ in 0..n {
            let order = order.clone();
            let _detached = exec.enqueue(Priority(p), move || order.lock().unwrap().push(p));
        }
    }
    drop(gate);
    exec.shutdown();
    Arc::try_unwrap(order).unwrap().into_inner().unwrap()
}

fn letters(order: &[u32], names: &[(u32, char)]) -> String {
    order
        .iter()
        .map(|p| names.iter().find(|(q, _)| q == p).map(|(_, c)| *c).unwrap())
        .collect()
}

#[test]
fn ten_to_one_smooth_is_exact_in_dispatch_order() {
    let order = served_order(Picker::Smooth, &[(10, 10), (1, 1)], &[40, 10]);
    let s = letters(&order, &[(10, 'H'), (1, 'L')]);
    // The gate job took the cycle's first turn (an H), so the backlog
    // starts at the cycle's second position: HHHHHLHHHHH rotated by one.
    assert_eq!(&s[..33], "HHHHLHHHHHH".repeat(3));
    // Every window of 11 dispatches while both lanes are backlogged holds
    // exactly ten H and one L.
    for w in s.as_bytes()[..40].windows(11) {
        assert_eq!(w.iter().filter(|&&c| c == b'L').count(), 1, "{s}");
    }
    // Nothing lost: all 50 ran, the rest of the L lane after the H lane ran dry.
    assert_eq!(s.len(), 50);
    assert!(s.ends_with("LLLLLL"), "{s}");
}

#[test]
fn ten_to_one_classic_runs_ten_then_one() {
    let order = served_order(Picker::Classic, &[(10, 10), (1, 1)], &[30, 10]);
    let s = letters(&order, &[(10, 'H'), (1, 'L')]);
    assert_eq!(&s[..22], "HHHHHHHHHLHHHHHHHHHHLH");
}

#[test]
fn ten_five_one_smooth_interleaves() {
    let order = served_order(Picker::Smooth, &[(10, 10), (5, 5), (1, 1)], &[40, 20, 4]);
    let s = letters(&order, &[(10, 'A'), (5, 'B'), (1, 'C')]);
    let cycle = "ABAABACABAABAABA";
    let expected: String = cycle.chars().cycle().skip(1).take(32).collect();
    assert_eq!(&s[..32], expected);
}

#[test]
fn ten_five_one_classic_serves_runs() {
    let order = served_order(Picker::Classic, &[(10, 10), (5, 5), (1, 1)], &[40, 20, 4]);
    let s = letters(&order, &[(10, 'A'), (5, 'B'), (1, 'C')]);
    let cycle = "AAAAAAAAAABBBBBC";
    let expected: String = cycle.chars().cycle().skip(1).take(32).collect();
    assert_eq!(&s[..32], expected);
}

#[test]
fn strict_empties_the_high_lane_first() {
    let order = served_order(Picker::Strict, &[(10, 10), (1, 1)], &[5, 5]);
    assert_eq!(order, vec![10, 10, 10, 10, 10, 1, 1, 1, 1, 1]);
}

#[test]
fn explicit_weights_override_priorities() {
    // Priority 100 and 1 with weights 1:1 alternate.
    let order = served_order(Picker::Smooth, &[(100, 1), (1, 1)], &[6, 6]);
    let s = letters(&order, &[(100, 'H'), (1, 'L')]);
    assert_eq!(&s[..10], "LHLHLHLHLH");
}

#[test]
fn low_lane_alone_is_served_at_once() {
    // An empty high lane's turns pass straight to the low lane.
    let order = served_order(Picker::Smooth, &[(10, 10), (1, 1)], &[0, 5]);
    assert_eq!(order, vec![1; 5]);
}
