//! Four instances share one mailbox: no instance runs two performs at
//! once, `init` runs 4 times before any perform, `destroy` 4 times after
//! the last.

use super::support::{Event, Hold, Log, assert_balanced, msg, probes, within};
use priority_executor::actor::{Actor, ActorError, Outbox, Reason, Stage};
use priority_executor::{Priority, SendOptions};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[test]
fn init_four_times_before_any_perform_and_destroy_four_times_after_the_last() {
    within("4 instances lifecycle", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("four", &log, &hold)
            .instances(4)
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        for i in 0..2000 {
            addr.send_with(msg('M', i), SendOptions::new().priority(Priority::MEDIUM))
                .unwrap();
        }
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.performed, 2000);
        let events = log.events();
        let first_perform = events
            .iter()
            .position(|e| matches!(e, Event::Perform(..)))
            .unwrap();
        let last_perform = events
            .iter()
            .rposition(|e| matches!(e, Event::Perform(..)))
            .unwrap();
        let inits: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Event::Init(_)))
            .map(|(i, _)| i)
            .collect();
        let destroys: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Event::Destroy(_, Reason::Drained)))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(inits.len(), 4);
        assert!(inits.iter().all(|&i| i < first_perform));
        assert_eq!(destroys.len(), 4);
        assert!(destroys.iter().all(|&i| i > last_perform));
        let mut ids: Vec<usize> = events
            .iter()
            .filter_map(|e| match e {
                Event::Destroy(id, _) => Some(*id),
                _ => None,
            })
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, vec![0, 1, 2, 3], "each instance destroyed once");
    });
}

/// Flags its own instance busy for the length of a perform.
struct Exclusive {
    busy: Arc<AtomicBool>,
    overlaps: Arc<AtomicUsize>,
    performs: Arc<Mutex<Vec<usize>>>,
    id: usize,
}

impl Actor for Exclusive {
    type In = u32;
    type Out = ();
    fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        if self.busy.swap(true, Ordering::SeqCst) {
            self.overlaps.fetch_add(1, Ordering::SeqCst);
        }
        for _ in 0..50 {
            std::hint::spin_loop();
        }
        std::thread::yield_now();
        self.performs.lock().map_err(|_| "poisoned")?.push(self.id);
        self.busy.store(false, Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn no_instance_ever_runs_two_performs_at_once() {
    within("4 instances exclusive", || {
        let flags: Vec<Arc<AtomicBool>> = (0..4).map(|_| Arc::default()).collect();
        let overlaps = Arc::new(AtomicUsize::new(0));
        let performs = Arc::new(Mutex::new(Vec::new()));
        let (f, o, p) = (flags.clone(), overlaps.clone(), performs.clone());
        let stage = Stage::builder("exclusive", move |id| Exclusive {
            busy: f[id].clone(),
            overlaps: o.clone(),
            performs: p.clone(),
            id,
        })
        .instances(4)
        .spawn()
        .expect("spawn");
        let addr = stage.addr();
        let senders: Vec<_> = (0..2)
            .map(|_| {
                let addr = addr.clone();
                std::thread::spawn(move || {
                    for n in 0..5000 {
                        addr.send(n).unwrap();
                    }
                })
            })
            .collect();
        for s in senders {
            s.join().unwrap();
        }
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.performed, 10_000);
        assert_eq!(overlaps.load(Ordering::SeqCst), 0);
        assert_eq!(performs.lock().unwrap().len(), 10_000);
    });
}
