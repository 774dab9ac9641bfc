//! Drives a broker (`priority_executor::actor::Broker`) with an arbitrary
//! script: a mailbox of declared lanes (bounded or not), cycles by hand
//! (`manual_cycles`) or by its thread, a batch size, an end after N quiet
//! or lonely cycles or none; consumers that register (with a strategy and
//! a hop limit; some `init`s fail, some strategies are refused) and
//! unregister while it runs, take all of a batch or part of it, send
//! letters back, fail or panic on them; sends of every kind, ticks,
//! `stop` and `kill`; then one of the ends: drain, join, stop or kill and
//! join, or dropping the broker.
//!
//! Checked: every letter was performed, dead-lettered, faulted or handed
//! back exactly once, and each copy of it dropped once; the exit's
//! counters equal what the script saw; a tick hands at most one batch to
//! each consumer, in the order `consumers()` gives, none larger than the
//! batch size; a consumer unregistered is destroyed before `unregister`
//! returns and gets no batch after; `init` and `destroy` once per
//! consumer, with the right reason.
#![no_main]

#[path = "common/mod.rs"]
mod common;
#[path = "broker/consumer.rs"]
mod consumer;
#[path = "broker/end.rs"]
mod end;

use arbitrary::Arbitrary;
use common::{PANIC_MESSAGE, step};
use consumer::{Cn, Letter, Life, Log};
use libfuzzer_sys::fuzz_target;
use priority_executor::actor::{
    Broker, DeadLetter, Fault, MailboxConfig, PriorityGenerator, Reason, SendError, Strategy,
    Unlisted,
};
use priority_executor::{Capacity, LaneConfig, Priority, SendOptions};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MAX_OPS: usize = 64;

#[derive(Arbitrary, Debug)]
pub struct Script {
    /// (priority, capacity: 0 = unbounded)
    lanes: Vec<(u8, u8)>,
    unlisted: u8,
    default_capacity: u8,
    /// `None`: cycles by `tick` only; else a cycle every 50 us + n * 50 us.
    cycle: Option<u8>,
    batch: u8,
    end_after: Option<u8>,
    ops: Vec<Op>,
    end: End,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Strat {
    Always,
    Predicate { after: u8 },
    Threshold { threshold: u8, step: u8 },
    Ttl { min: u8, max: u8 },
}

#[derive(Arbitrary, Debug, Clone, Copy)]
struct Consumer {
    strategy: Strat,
    /// The hop limit, 0 to 7 (each letter a lazy consumer leaves goes
    /// round that many times).
    hops: u8,
    /// The most letters it takes from a batch: 0 takes none, 255 all.
    takes: u8,
    init_fails: bool,
    init_panics: bool,
    destroy_panics: bool,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum How {
    Send,
    Try,
    Timeout,
    At(u8),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
struct Spec {
    how: How,
    priority: Option<u8>,
    even: bool,
    ttl: u8,
    back_first: u8,
    fail_first: u8,
    fail_panics: bool,
    strategy_panics: bool,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Op {
    Register(Consumer),
    Unregister { which: u8 },
    Tick,
    Send(Spec),
    Stop,
    Kill,
    Metrics,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum End {
    Drain,
    Join,
    Stop,
    Kill,
    Drop,
}

fn strategy(s: Strat, hops: u8) -> Strategy<Letter> {
    let st = match s {
        Strat::Always => Strategy::always(),
        Strat::Predicate { after } => Strategy::predicate(
            |m: &Letter| {
                if m.strategy_panics {
                    panic!("{PANIC_MESSAGE} fz#{}#", m.id);
                }
                m.even
            },
            u32::from(after % 8),
        ),
        // A step of 0 is refused by `register`.
        Strat::Threshold { threshold, step } => {
            Strategy::priority_threshold(Priority(u32::from(threshold))).step(u32::from(step % 8))
        }
        Strat::Ttl { min, max } => {
            Strategy::ttl_range(u32::from(min % 8)..=u32::from(max % 8), |m: &Letter| m.ttl)
        }
    };
    st.hop_limit(u32::from(hops % 8))
}

fn capacity(c: u8) -> Capacity {
    if c == 0 {
        Capacity::Unbounded
    } else {
        Capacity::Bounded(usize::from(c % 6))
    }
}

/// What the script knows while it runs.
pub struct State {
    pub log: Arc<Log>,
    /// Consumers registered, by the broker's number, with their serial.
    pub registered: Vec<(usize, usize)>,
    /// Every number `register` gave.
    pub numbers: HashSet<usize>,
    /// Consumers unregistered by the script (serials).
    pub unregistered: HashSet<usize>,
    /// Serials whose `register` was refused without running `init`.
    pub not_started: HashSet<usize>,
    pub offered: u64,
    /// The broker may have ended: `end_after` set, or a stop or a kill
    /// accepted.
    pub may_end: bool,
    pub manual: bool,
    pub refuse: bool,
    /// A send could wait for room: some lane is bounded.
    pub bounded: bool,
}

fn run(s: &Script) {
    step("spawn");
    let mut mailbox = MailboxConfig::new()
        .unlisted(match s.unlisted % 3 {
            0 => Unlisted::NewLane,
            1 => Unlisted::Nearest,
            _ => Unlisted::Refuse,
        })
        .default_capacity(capacity(s.default_capacity));
    let mut bounded = s.default_capacity != 0;
    for &(p, c) in s.lanes.iter().take(4) {
        bounded |= c != 0;
        mailbox =
            mailbox.lane_config(LaneConfig::new(Priority(u32::from(p))).capacity(capacity(c)));
    }
    let batch = usize::from(s.batch % 8) + 1;
    let log = Arc::new(Log {
        batch_size: batch,
        ..Log::default()
    });
    let dead: Arc<Mutex<Vec<DeadLetter<Letter>>>> = Arc::default();
    let faults: Arc<Mutex<Vec<Fault<Letter>>>> = Arc::default();
    let (d, f, o) = (Arc::clone(&dead), Arc::clone(&faults), Arc::clone(&log));
    let mut builder = Broker::builder("fb")
        .mailbox(mailbox)
        .batch(batch)
        .generator(PriorityGenerator::from_fn(|m: &Letter| {
            m.priority.map(|p| Priority(u32::from(p)))
        }))
        .on_dead_letter(move |l| d.lock().unwrap_or_else(|p| p.into_inner()).push(l))
        .on_fault(move |l| f.lock().unwrap_or_else(|p| p.into_inner()).push(l))
        .on_output(move |id, _| o.outputs.lock().unwrap_or_else(|p| p.into_inner()).push(id));
    builder = match s.cycle {
        None => builder.manual_cycles(),
        Some(n) => builder.cycle(Duration::from_micros(50 + 50 * u64::from(n % 8))),
    };
    if let Some(n) = s.end_after {
        builder = builder.end_after(u32::from(n % 4) + 1);
    }
    let Ok(broker) = builder.spawn() else {
        // A mailbox setting the `stage` target checks.
        return;
    };
    let addr = broker.addr();
    let mut st = State {
        log: Arc::clone(&log),
        registered: Vec::new(),
        numbers: HashSet::new(),
        unregistered: HashSet::new(),
        not_started: HashSet::new(),
        offered: 0,
        may_end: s.end_after.is_some(),
        manual: s.cycle.is_none(),
        refuse: s.unlisted % 3 == 2,
        bounded,
    };

    for op in s.ops.iter().take(MAX_OPS) {
        match *op {
            Op::Register(c) => {
                step("register");
                let serial = {
                    let mut lives = log.lives.lock().unwrap();
                    lives.push(Life::default());
                    lives.len() - 1
                };
                let consumer = Cn {
                    log: Arc::clone(&log),
                    serial,
                    takes: if c.takes == 255 {
                        usize::MAX
                    } else {
                        usize::from(c.takes % 4)
                    },
                    init_fails: c.init_fails,
                    init_panics: c.init_panics,
                    destroy_panics: c.destroy_panics,
                };
                let refused = matches!(c.strategy, Strat::Threshold { step, .. } if step % 8 == 0);
                let number = broker.register(consumer, strategy(c.strategy, c.hops));
                let life = log.life(serial);
                if refused {
                    assert_eq!(number, None, "a priority strategy with step(0) registered");
                    assert_eq!(life.inits, 0, "a refused strategy's consumer ran init");
                    st.not_started.insert(serial);
                    continue;
                }
                match number {
                    Some(n) => {
                        assert!(!c.init_fails, "a consumer whose init fails registered");
                        assert!(st.numbers.insert(n), "consumer number {n} given twice");
                        assert_eq!(life.inits, 1);
                        assert_eq!(life.instance, Some(n));
                        st.registered.push((n, serial));
                    }
                    None => {
                        assert!(c.init_fails || st.may_end, "register refused while open");
                        if life.inits == 0 {
                            // The broker had ended: its init never ran.
                            assert!(st.may_end, "register refused without running init");
                            st.not_started.insert(serial);
                        } else if c.init_fails {
                            assert_eq!(life.destroys, vec![Reason::FailedInit], "{life:?}");
                        }
                    }
                }
            }
            Op::Unregister { which } => {
                if st.registered.is_empty() {
                    continue;
                }
                step("unregister");
                let (n, serial) = st
                    .registered
                    .remove(usize::from(which) % st.registered.len());
                let done = broker.unregister(n);
                assert!(done || st.may_end, "unregister({n}) refused while open");
                let life = log.life(serial);
                if done {
                    st.unregistered.insert(serial);
                    assert_eq!(
                        life.destroys,
                        vec![Reason::Unregistered],
                        "consumer {n} not destroyed when unregister returned"
                    );
                }
                assert!(!broker.unregister(n), "unregister({n}) twice");
            }
            Op::Tick => {
                step("tick");
                let before = broker.consumers();
                match broker.tick() {
                    Ok(batches) => st.check_tick(&before, &batches),
                    Err(reason) => {
                        assert!(st.may_end, "tick ended the broker ({reason:?}) while open");
                    }
                }
            }
            Op::Send(spec) => {
                step("send");
                st.send(&addr, spec);
            }
            Op::Stop => {
                step("stop");
                if addr.stop().is_ok() {
                    st.may_end = true;
                }
            }
            Op::Kill => {
                step("kill");
                if addr.kill().is_ok() {
                    st.may_end = true;
                }
            }
            Op::Metrics => {
                step("metrics");
                let m = broker.metrics();
                assert!(m.settled() <= m.offered, "{m:?}");
                assert_eq!(m.offered, m.accepted + m.handed_back, "{m:?}");
                if !st.may_end {
                    let mut now = broker.consumers();
                    let mut ours: Vec<usize> = st.registered.iter().map(|r| r.0).collect();
                    now.sort_unstable();
                    ours.sort_unstable();
                    assert_eq!(now, ours, "consumers()");
                    assert_eq!(m.instances, ours.len(), "{m:?}");
                }
            }
        }
    }

    st.end(broker, addr, s.end, &dead, &faults);
}

impl State {
    /// A tick's batches: at most one per consumer, in the round's order.
    fn check_tick(&self, before: &[usize], batches: &[(usize, usize)]) {
        let ids: Vec<usize> = batches.iter().map(|b| b.0).collect();
        let distinct: HashSet<usize> = ids.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            ids.len(),
            "two batches to one consumer: {batches:?}"
        );
        for &(n, len) in batches {
            assert!(
                (1..=self.log.batch_size).contains(&len),
                "a batch of {len}: {batches:?}"
            );
            assert!(
                self.numbers.contains(&n),
                "a batch for consumer {n}, never registered"
            );
        }
        if self.manual && !self.may_end {
            // Nothing else cycles or changes the round.
            assert!(
                ids.len() <= before.len() && ids == before[..ids.len()],
                "batches {batches:?} out of the round's order {before:?}"
            );
        }
    }

    fn send(&mut self, addr: &priority_executor::actor::Addr<Letter>, spec: Spec) {
        let (id, guard) = self.log.letter();
        let letter = Letter {
            id,
            guard,
            priority: spec.priority,
            even: spec.even,
            ttl: u32::from(spec.ttl % 12),
            back_first: spec.back_first % 4,
            fail_first: spec.fail_first % 3,
            fail_panics: spec.fail_panics,
            strategy_panics: spec.strategy_panics,
        };
        self.offered += 1;
        // A blocking send to a full lane waits for a cycle this thread may
        // be the one to run, or a consumer that may never come: only
        // where no lane is bounded.
        let (result, blocking) = match spec.how {
            How::Send if !self.bounded => (addr.send(letter), true),
            How::At(p) if !self.bounded => (
                addr.send_with(letter, SendOptions::new().priority(Priority(u32::from(p)))),
                true,
            ),
            How::Send | How::At(_) | How::Try => (
                addr.send_with(letter, SendOptions::new().wait_at_most(Duration::ZERO)),
                false,
            ),
            How::Timeout => (
                addr.send_with(
                    letter,
                    SendOptions::new().wait_at_most(Duration::from_micros(100)),
                ),
                false,
            ),
        };
        if let Err(e) = result {
            match &e {
                SendError::ShutDown { .. } => {
                    assert!(self.may_end, "refused as ShutDown while open")
                }
                SendError::Full { .. } => assert!(!blocking, "a blocking send said Full"),
                SendError::UnknownPriority { .. } => {
                    assert!(self.refuse, "UnknownPriority without Refuse")
                }
                _ => panic!("unexpected send error {e:?}"),
            }
            let letter = e.into_inner();
            letter
                .guard
                .0
                .back
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

fuzz_target!(|script: Script| {
    common::setup();
    let _running = common::Running::start();
    run(&script);
});
