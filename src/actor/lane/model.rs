//! loom models of the lane's rules (`README.md`), run on the lane's own
//! code (its counts, the ring, the side list, the signal) through the
//! `sync` facade:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test --release --lib actor::lane::model
//! ```
//!
//! Each model is small (two threads beside the reader, a lane of one or
//! two slots) and names the race it checks and the rules it stands on. The
//! reader is the model's main thread, the one holder of the take lock. A
//! wait that never ends (a lost wake-up, a ticket never pushed) shows as
//! loom's deadlock or its "maximum number of branches" failure: the reader
//! yields while it waits, so loom runs every other thread first. Only the
//! reader spins: a sender that waits for room sleeps (`reserve_waiting`),
//! as under loom two threads spinning on yields can starve a third for
//! ever, a failure of the model rather than of the code.
//!
//! The bound is three preemptions, two for the model of the ticket order
//! (three take it from 16 628 interleavings to 254 749, about 40 s);
//! `LOOM_MAX_PREEMPTIONS=N` overrides it.

use super::*;
use crate::sync::line::Place;
use crate::sync::{Arc, thread};
use loom::model::Builder;

/// Runs `f` under loom with `bound` preemptions, unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise (as `tests/loom/support.rs`).
fn check(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(bound);
    }
    // A std atomic: read after the run, outside the interleavings.
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&runs);
    builder.check(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    // Shown with `--nocapture`: how much of the state space was explored.
    println!(
        "explored {} interleavings (preemption bound {:?})",
        runs.load(std::sync::atomic::Ordering::Relaxed),
        builder.preemption_bound
    );
}

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

/// Pushes `msg` into the slot `ticket` took.
fn push(lane: &Lane<u32>, ticket: Ticket, msg: u32) {
    // SAFETY: every model pushes a ticket of the same lane, once.
    unsafe { lane.push(ticket, letter(msg)) };
}

/// What `Mailbox::send` does with its lane when it may not wait: `Ok` if
/// the letter was accepted, `Err` if it is handed back.
fn send(lane: &Lane<u32>, msg: u32) -> Result<(), NoSlot> {
    let ticket = lane.try_reserve()?;
    push(lane, ticket, msg);
    Ok(())
}

/// Pops the next entry, if it is in.
fn popped(lane: &Lane<u32>) -> Option<u32> {
    // SAFETY: the model's main thread is the lane's only reader.
    match unsafe { lane.pop() }? {
        Entry::Letter(l) => Some(l.msg),
        Entry::Stop | Entry::Kill | Entry::Vacant => unreachable!("the models queue letters only"),
    }
}

/// Waits for the next entry, yielding to the threads that will push it.
fn next(lane: &Lane<u32>) -> u32 {
    loop {
        if let Some(msg) = popped(lane) {
            return msg;
        }
        thread::yield_now();
    }
}

/// Pops until the lane's length is zero (rule 5).
fn swept(lane: &Lane<u32>, into: &mut Vec<u32>) {
    // SAFETY: the model's main thread is the lane's only reader.
    unsafe {
        lane.sweep_into(|e| match e {
            Entry::Letter(l) => into.push(l.msg),
            Entry::Stop | Entry::Kill | Entry::Vacant => {
                unreachable!("the models queue letters only")
            }
        });
    }
}

/// (a) Two senders race the reader closing the door (what a dispatched
/// `stop` does: one pop while open, then close, then sweep). Rules 1, 2,
/// 4 and 5: every letter is either accepted and read once, or handed back
/// and never read; never both, never neither; the lane ends empty and
/// counts exactly the letters accepted.
fn senders_racing_the_door(capacity: Capacity) {
    check(3, move || {
        let lane = Arc::new(make(capacity));
        let senders: Vec<_> = (0..2)
            .map(|msg| {
                let lane = Arc::clone(&lane);
                thread::spawn(move || match send(&lane, msg) {
                    Ok(()) => true,
                    Err(NoSlot::Closed) => false,
                    Err(NoSlot::Full) => panic!("a lane of 2 refused one of 2 letters as full"),
                })
            })
            .collect();
        let mut read = Vec::new();
        read.extend(popped(&lane));
        lane.close();
        swept(&lane, &mut read);
        // Rule 2: a refused sender takes no slot, not even for a moment, so
        // the length the sweep left stays zero while the senders still
        // run (a stage's figures read at its end say nothing is queued).
        assert_eq!(lane.queued(), 0, "a refused sender raised the length");
        let accepted: Vec<bool> = senders.into_iter().map(|s| s.join().unwrap()).collect();
        for (msg, accepted) in (0..).zip(&accepted) {
            let times = read.iter().filter(|&&m| m == msg).count();
            assert_eq!(
                times,
                usize::from(*accepted),
                "letter {msg}: accepted {accepted}, read {times} times"
            );
        }
        assert_eq!(lane.queued(), 0, "the sweep left a slot behind");
        let n = accepted.iter().filter(|&&a| a).count() as u64;
        assert_eq!((lane.accepted(), lane.dispatched()), (n, n));
    });
}

/// (a) on an unbounded lane: slots are compare-exchanges too, so a refused
/// sender writes nothing (rule 2).
#[test]
fn senders_racing_the_door_unbounded() {
    senders_racing_the_door(Capacity::Unbounded);
}

/// (a) on a ring lane: slots are compare-exchanges, and the tickets
/// address the ring (rules 6 and 7).
#[test]
fn senders_racing_the_door_ring() {
    senders_racing_the_door(Capacity::Bounded(2));
}

/// (b) A letter sent back races the door closing, beside a sender. Rules
/// 1, 3, 5, 6 and 7: the send-back passes the closed door, goes to the
/// side list with its ticket, and is read; the sender's letter is read if
/// and only if it was accepted; a send-back is not a new acceptance.
#[test]
fn a_send_back_passes_a_closed_door() {
    check(3, || {
        // A ring lane of one slot, holding letter 0.
        let lane = Arc::new(make(Capacity::Bounded(1)));
        send(&lane, 0)
            .ok()
            .expect("an empty lane of 1 takes a letter");
        let closer = {
            let lane = Arc::clone(&lane);
            thread::spawn(move || lane.close())
        };
        let sender = {
            let lane = Arc::clone(&lane);
            // Closed, or full while letter 0 or its send-back holds the
            // slot: handed back either way.
            thread::spawn(move || send(&lane, 1).is_ok())
        };
        // The instance dispatches letter 0 and its strategy sends it back.
        assert_eq!(popped(&lane), Some(0));
        let ticket = lane.reserve_past_door();
        push(&lane, ticket, 0);
        closer.join().unwrap();
        // The door is closed: what the instances still dispatch.
        let mut read = Vec::new();
        swept(&lane, &mut read);
        let accepted = sender.join().unwrap();
        assert_eq!(
            read.iter().filter(|&&m| m == 0).count(),
            1,
            "the send-back was lost or read twice: {read:?}"
        );
        assert_eq!(
            read.contains(&1),
            accepted,
            "letter 1: accepted {accepted}, read: {read:?}"
        );
        assert_eq!(lane.queued(), 0);
        assert_eq!(lane.accepted(), 1 + u64::from(accepted));
    });
}

/// (c) One sender writes the ring while another thread queues entries
/// past the capacity (a control entry, then a send-back) on the side list.
/// Rules 6, 7 and 8: the reader takes the tickets 0, 1, 2, 3 in order,
/// whichever of ring and side list holds each, skipping the ring slots of
/// the side list's tickets so the ring's next writers get them, and never
/// overwrites a slot not yet read. Each entry carries its ticket.
#[test]
fn the_reader_takes_tickets_in_order_across_ring_and_side_list() {
    check(2, || {
        let lane = Arc::new(make(Capacity::Bounded(1)));
        let ring = {
            let lane = Arc::clone(&lane);
            thread::spawn(move || {
                for _ in 0..2 {
                    // Waits (rule 9) while the side list's entries fill the
                    // one slot. A sleep, not a spin: under loom two threads
                    // that spin on yields can starve a third for ever.
                    let ticket = match lane.reserve_waiting(None) {
                        Ok(t) => t,
                        Err(_) => unreachable!("the door stays open, no deadline"),
                    };
                    let n = ticket.number() as u32;
                    push(&lane, ticket, n);
                }
            })
        };
        let past = {
            let lane = Arc::clone(&lane);
            thread::spawn(move || {
                let control = lane.force_reserve().expect("the door is open");
                let n = control.number() as u32;
                push(&lane, control, n);
                let back = lane.reserve_past_door();
                let n = back.number() as u32;
                push(&lane, back, n);
            })
        };
        for ticket in 0..4 {
            assert_eq!(next(&lane), ticket, "tickets read out of order");
        }
        ring.join().unwrap();
        past.join().unwrap();
        assert_eq!(lane.queued(), 0);
        assert_eq!((lane.accepted(), lane.dispatched()), (2, 4));
    });
}

/// (d) Two senders find a lane of one slot full and wait for room (the
/// spin for a run, then the sleep on `space`) while the reader pops. Rules
/// 8 to 11: no lost wake-up: each pop that frees the slot a sender sleeps
/// for wakes one, every letter gets its slot and is read, and the lane is
/// never over its capacity (a ring writer would wait on an unread slot for
/// ever).
#[test]
fn senders_waiting_for_room_race_the_reader() {
    check(3, || {
        let lane = Arc::new(make(Capacity::Bounded(1)));
        send(&lane, 0)
            .ok()
            .expect("an empty lane of 1 takes a letter");
        let senders: Vec<_> = (1..3)
            .map(|msg| {
                let lane = Arc::clone(&lane);
                thread::spawn(move || {
                    let ticket = match lane.reserve_waiting(None) {
                        Ok(t) => t,
                        Err(NoSlot::Full) => panic!("a wait with no deadline gave up"),
                        Err(NoSlot::Closed) => unreachable!("the door stays open"),
                    };
                    push(&lane, ticket, msg);
                })
            })
            .collect();
        let mut read: Vec<u32> = (0..3).map(|_| next(&lane)).collect();
        for s in senders {
            s.join().unwrap();
        }
        assert_eq!(read[0], 0, "letter 0 was queued first");
        read.sort_unstable();
        assert_eq!(read, [0, 1, 2]);
        assert_eq!(lane.space.waiting(), 0);
    });
}

/// A waiter on a full lane of one, with no pop to come, races the door
/// closing: `wait` is how it waits for room (a sender's sleep or a
/// future's place in line). It is woken by `close` (or sees the door
/// closed before it waits) and refused without a slot.
fn waiting_for_room_meets_the_door(wait: fn(&Lane<u32>) -> Result<Ticket, NoSlot>) {
    check(3, move || {
        let lane = Arc::new(make(Capacity::Bounded(1)));
        send(&lane, 0)
            .ok()
            .expect("an empty lane of 1 takes a letter");
        let waiter = {
            let lane = Arc::clone(&lane);
            thread::spawn(move || wait(&lane).map(|_| ()))
        };
        // Yields, so that loom also runs the waiter through its whole spin
        // to its sleep before the door closes: a thread that yields is not
        // run again while another can run, and a sender yields at every
        // snooze. Not a synchronisation: every other order is explored too.
        for _ in 0..4 {
            thread::yield_now();
        }
        lane.close();
        assert!(
            matches!(waiter.join().unwrap(), Err(NoSlot::Closed)),
            "a waiter on a full lane was not refused at the closed door"
        );
        assert_eq!(lane.queued(), 1);
    });
}

/// (d) A sender waiting for room on a full lane races the door closing.
/// Rules 9 to 11: `close` wakes it and it is refused; it never sleeps for
/// ever, and it never takes a slot.
#[test]
fn a_sender_waiting_for_room_is_woken_by_the_door() {
    waiting_for_room_meets_the_door(|lane| lane.reserve_waiting(None));
}

/// An instance ending a drain, as `dispatch.rs`'s `next` and `serve`: it
/// pops while it can; with nothing to pop and the length zero the stage
/// ends; with a slot taken and not pushed yet it waits on the mailbox's
/// ready signal (a spin, then a sleep). While no permit is held it waits
/// for the length to say mail (a sender's push is under way); while one
/// is, it reads the lane's count of permits' pushes, pops once more, and
/// waits until the count has moved and the length says mail, as every
/// permit's push raises the count and then notifies, or until the head
/// entry is pushed (rule 13). Only permits fill the slots of the models
/// that hold one, so the wait has no nap here: a lost wake-up is loom's
/// deadlock. Returns what it read.
fn drained_by_an_instance(lane: &Lane<u32>, ready: &Signal) -> Vec<u32> {
    let mut read = Vec::new();
    let mut fills = None;
    loop {
        if let Some(msg) = popped(lane) {
            read.push(msg);
            continue;
        }
        if !lane.has_reserved() {
            // Nothing queued, nothing coming: the stage ends.
            return read;
        }
        if fills.is_none() && lane.holds_permits() {
            fills = Some(lane.filled());
            continue;
        }
        // A slot is taken and its push is under way, or a permit holds
        // it: wait for the push, a yield for the spin, then the sleep.
        let since = fills.take();
        thread::yield_now();
        ready.wait(None, || match since {
            None => lane.has_reserved(),
            Some(f) => (lane.filled() != f && lane.has_reserved()) || lane.has_mail_past_permits(),
        });
    }
}

/// (e) An instance ending a drain races senders refused at the closed door
/// of an unbounded lane (or accepted just before it closed); the instance
/// waits for the push of a slot taken (`drained_by_an_instance`). Rules 1,
/// 2, 4, 5 and 12: the length falls only by a pop. A sender that took a
/// slot and gave it back when refused made the length fall with no pop and
/// no notify: the instance that saw its slot slept for ever (loom reports
/// the deadlock).
#[test]
fn a_draining_instance_never_waits_for_a_refused_sender() {
    check(3, || {
        let lane = Arc::new(make(Capacity::Unbounded));
        let ready = Arc::new(Signal::default());
        // Two senders: one may be accepted and still pushing while the
        // other is refused.
        let senders: Vec<_> = (0..2)
            .map(|msg| {
                let (lane, ready) = (Arc::clone(&lane), Arc::clone(&ready));
                thread::spawn(move || {
                    let accepted = send(&lane, msg).is_ok();
                    if accepted {
                        // `Mailbox::send`: the push, then the notify.
                        ready.notify_one();
                    }
                    accepted
                })
            })
            .collect();
        // The drain begins: the door closes.
        lane.close();
        let mut read = drained_by_an_instance(&lane, &ready);
        let accepted: Vec<bool> = senders.into_iter().map(|s| s.join().unwrap()).collect();
        read.sort_unstable();
        let expected: Vec<u32> = (0..)
            .zip(&accepted)
            .filter(|(_, a)| **a)
            .map(|(m, _)| m)
            .collect();
        assert_eq!(read, expected, "accepted {accepted:?}");
        assert_eq!(lane.queued(), 0);
    });
}

/// Waits, as a future on loom's executor, for a permit's slot (rule 13).
fn reserved(lane: &Lane<u32>) -> Result<Ticket, NoSlot> {
    let mut place = Place::default();
    loom::future::block_on(std::future::poll_fn(|cx| lane.poll_reserve(&mut place, cx)))
}

/// (f) A future waiting for room on a full lane races the pop that frees
/// it. Rules 10 and 13: the future arms, then checks, under `space`'s
/// lock; the pop frees the slot, then looks for waiters. It is woken (or
/// sees the slot before it waits) and its permit's letter is read next; a
/// lost wake-up leaves it parked for ever (loom's deadlock).
#[test]
fn a_future_waiting_for_room_is_woken_by_a_pop() {
    check(3, || {
        let lane = Arc::new(make(Capacity::Bounded(1)));
        send(&lane, 0)
            .ok()
            .expect("an empty lane of 1 takes a letter");
        let sender = {
            let lane = Arc::clone(&lane);
            thread::spawn(move || {
                let ticket = reserved(&lane).ok().expect("a pop frees the slot");
                // SAFETY: a permit's ticket of this lane, pushed once.
                unsafe { lane.push_permit(ticket, letter(1)) };
            })
        };
        assert_eq!(next(&lane), 0);
        assert_eq!(next(&lane), 1);
        sender.join().unwrap();
        assert_eq!(lane.queued(), 0);
    });
}

/// (g) A future waiting for room on a full lane races the door closing.
/// Rules 10, 11 and 13: `close` wakes every future in line (or it sees the
/// door closed before it waits), and it is refused without a slot.
#[test]
fn a_future_waiting_for_room_is_woken_by_the_door() {
    waiting_for_room_meets_the_door(reserved);
}

/// (h) An instance ending a drain races two permit holders: one sends its
/// letter, the other drops its permit unused (each reserved before the door
/// closed, or was refused). The instance drains as in (e): it sleeps until
/// a push, however long a permit is held. Rules 5, 12 and 13: the letter of
/// a permit granted is read once; the vacant slot of an unused one is
/// passed over; the instance never ends with a slot held, and never sleeps
/// through the push that fills one (loom's deadlock).
#[test]
fn a_draining_instance_waits_for_held_permits_and_passes_over_unused_ones() {
    check(3, || {
        let lane = Arc::new(make(Capacity::Bounded(2)));
        let ready = Arc::new(Signal::default());
        let holders: Vec<_> = [true, false]
            .into_iter()
            .map(|use_it| {
                let (lane, ready) = (Arc::clone(&lane), Arc::clone(&ready));
                thread::spawn(move || {
                    let Ok(ticket) = reserved(&lane) else {
                        return false;
                    };
                    // SAFETY: a permit's ticket of this lane, pushed once.
                    unsafe {
                        if use_it {
                            lane.push_permit(ticket, letter(7));
                        } else {
                            lane.push_vacant(ticket);
                        }
                    }
                    // `SendPermit::send` and its drop: the push, then the
                    // notify.
                    ready.notify_one();
                    use_it
                })
            })
            .collect();
        lane.close();
        let read = drained_by_an_instance(&lane, &ready);
        let sent: Vec<bool> = holders.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(read.len(), usize::from(sent[0]), "sent {sent:?}");
        assert_eq!(lane.queued(), 0);
    });
}
