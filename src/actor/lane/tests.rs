//! The lane's unit tests: slots, the ring's turns, the door, the run a
//! waiting sender waits for.

use super::*;

fn make(capacity: Capacity) -> Lane<u32> {
    Lane::new(LaneSpec {
        priority: Priority::MEDIUM,
        weight: 1,
        capacity,
    })
}

fn letter(msg: u32) -> Entry<u32> {
    Entry::Letter(Letter::new(msg, Priority::MEDIUM))
}

fn push(lane: &Lane<u32>, ticket: Ticket, msg: u32) {
    // SAFETY: every test pushes a ticket of the same lane, once.
    unsafe { lane.push(ticket, letter(msg)) };
}

fn popped(lane: &Lane<u32>) -> Option<u32> {
    // SAFETY: the test's thread is the lane's only reader.
    match unsafe { lane.pop() }? {
        Entry::Letter(l) => Some(l.msg),
        Entry::Stop | Entry::Kill | Entry::Vacant => None,
    }
}

/// Takes a slot (`why` says why one must be free) and pushes `msg`.
fn send(lane: &Lane<u32>, msg: u32, why: &str) {
    let t = reserve(lane).ok().expect(why);
    push(lane, t, msg);
}

fn reserve(lane: &Lane<u32>) -> Result<Ticket, NoSlot> {
    lane.try_reserve()
}

fn swept(lane: &Lane<u32>) -> Vec<u32> {
    let mut swept = Vec::new();
    // SAFETY: the test's thread is the lane's only reader.
    unsafe {
        lane.sweep_into(|e| {
            if let Entry::Letter(l) = e {
                swept.push(l.msg);
            }
        });
    }
    swept
}

#[test]
fn a_bounded_lane_refuses_past_capacity_until_a_pop_frees_a_slot() {
    let lane = make(Capacity::Bounded(2));
    for n in 0..2 {
        send(&lane, n, "room");
    }
    // The senders' view of `taken` is stale (0): it says full, the
    // re-read of `taken` agrees.
    assert!(matches!(reserve(&lane), Err(NoSlot::Full)));
    assert_eq!(popped(&lane), Some(0));
    // The view says full again; the re-read finds the freed slot.
    send(&lane, 2, "a slot was freed");
    assert!(matches!(reserve(&lane), Err(NoSlot::Full)));
    assert_eq!(
        (lane.queued(), lane.dispatched(), lane.accepted()),
        (2, 1, 3)
    );
}

#[test]
fn entries_past_the_capacity_keep_their_turn_in_a_ring_lane() {
    // A ring of 4: tickets 0 to 3, two of them forced.
    let lane = make(Capacity::Bounded(4));
    let a = reserve(&lane).ok().expect("room");
    let forced = lane.force_reserve().expect("open");
    let b = reserve(&lane).ok().expect("room");
    let late = lane.force_reserve().expect("open");
    // Pushed out of order: the ticket order is what comes out.
    push(&lane, late, 4);
    push(&lane, b, 3);
    push(&lane, forced, 2);
    assert!(!lane.has_entries());
    push(&lane, a, 1);
    assert!(lane.has_entries());
    assert_eq!(popped(&lane), Some(1));
    assert_eq!(popped(&lane), Some(2));
    // Ticket 4 reuses ticket 0's slot, ticket 5 the forced ticket 1's,
    // which the reader passed over.
    for msg in [5, 6] {
        send(&lane, msg, "room again");
    }
    assert!(matches!(reserve(&lane), Err(NoSlot::Full)));
    assert_eq!(swept(&lane), vec![3, 4, 5, 6]);
    // Forced entries are not new acceptances.
    assert_eq!((lane.dispatched(), lane.accepted()), (6, 4));
}

#[test]
fn a_closed_lane_refuses_senders_but_not_send_backs_and_sweeps_to_empty() {
    for capacity in [Capacity::Unbounded, Capacity::Bounded(4)] {
        let lane = make(capacity);
        send(&lane, 0, "open");
        lane.close();
        assert!(matches!(reserve(&lane), Err(NoSlot::Closed)));
        assert!(lane.force_reserve().is_none());
        // A refused sender took no slot, not even for a moment (rule 2):
        // the length is exact.
        assert_eq!(lane.queued(), 1);
        let t = lane.reserve_past_door();
        push(&lane, t, 1);
        assert_eq!(swept(&lane), vec![0, 1]);
        assert!(!lane.has_reserved());
        // The send-back is not a new acceptance.
        assert_eq!((lane.dispatched(), lane.accepted()), (2, 1));
    }
}

#[test]
fn a_sender_that_found_the_lane_full_waits_for_a_run_of_free_slots() {
    let lane = make(Capacity::Bounded(8));
    for n in 0..8 {
        send(&lane, n, "room");
    }
    // A run is a quarter of 8: one free slot is not enough, two are.
    assert!(!lane.has_room_for_a_run());
    assert_eq!(popped(&lane), Some(0));
    assert!(!lane.has_room_for_a_run());
    assert_eq!(popped(&lane), Some(1));
    assert!(lane.has_room_for_a_run());
    // A closed lane has nothing to wait for.
    send(&lane, 8, "room");
    assert!(!lane.has_room_for_a_run());
    lane.close();
    assert!(lane.has_room_for_a_run());
    // A lane of one: the run is its one slot.
    let one = make(Capacity::Bounded(1));
    assert!(one.has_room_for_a_run());
}
