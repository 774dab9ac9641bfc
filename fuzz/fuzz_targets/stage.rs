//! Drives an actor stage (`priority_executor::actor::Stage`) with an
//! arbitrary script: a mailbox of declared lanes (bounded or not), a rule
//! for other priorities, a picker, stop and kill priorities; a consumer
//! strategy (predicate, priority threshold, TTL) with a hop limit; retries
//! with a backoff; instances whose `init` or `destroy` fail; then sends of
//! every kind (`send`, and `send_with` no wait, a timeout or a priority)
//! of letters whose performs fail, panic, wait for the script or send to
//! the stage itself, `stop` and `kill` in between, and one of the ends:
//! drain, stop, kill, or dropping the stage.
//!
//! Checked: every letter (the script's and the instances' own) was
//! performed, dead-lettered, faulted or handed back exactly once, and each
//! copy of it dropped once; `sent = performed + faulted + dead_lettered +
//! handed_back` with each term equal to what the script saw; nothing
//! queued or running at the end; `destroy` ran once per instance.
#![no_main]

#[path = "stage/actor.rs"]
mod actor;
#[path = "stage/check.rs"]
mod check;
#[path = "common/mod.rs"]
mod common;

use actor::{Fz, Gate, Letter, Log};
use arbitrary::Arbitrary;
use common::{PANIC_MESSAGE, step};
use libfuzzer_sys::fuzz_target;
use priority_executor::actor::{
    DeadLetter, Fault, MailboxConfig, PriorityGenerator, SendError, SpawnError, Stage, Strategy,
    Unlisted,
};
use priority_executor::{Capacity, LaneConfig, Picker, Priority, RetryPolicy};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MAX_OPS: usize = 48;

#[derive(Arbitrary, Debug)]
struct Script {
    /// (priority, weight, capacity: 0 = unbounded)
    lanes: Vec<(u8, u8, u8)>,
    unlisted: u8,
    picker: u8,
    default_capacity: u8,
    default_priority: Option<u8>,
    stop_priority: Option<u8>,
    kill_priority: Option<u8>,
    instances: u8,
    strategy: Strat,
    retry: Option<(u8, u8)>,
    idle_ms: Option<u8>,
    init_fails: u8,
    init_panics: bool,
    destroy_panics: bool,
    /// Dead letters and faults go to callbacks, else the stage keeps them.
    sinks: bool,
    ops: Vec<Op>,
    end: End,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Strat {
    Always,
    Predicate {
        after: u8,
        hops: Option<u8>,
    },
    Threshold {
        threshold: u8,
        step: u8,
        hops: Option<u8>,
    },
    Ttl {
        min: u8,
        max: u8,
        hops: Option<u8>,
    },
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum How {
    Send,
    Try,
    Timeout,
    At(u8),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Spec {
    how: How,
    priority: Option<u8>,
    even: bool,
    ttl: u8,
    fail_first: u8,
    fail_panics: bool,
    strategy_panics: bool,
    echo: bool,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Op {
    Send(Spec),
    /// A letter whose perform waits for `Release`.
    Hold(Spec),
    Release,
    Stop,
    Kill,
    Metrics,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum End {
    Drain,
    Stop,
    Kill,
    Drop,
}

fn strategy(s: Strat) -> Strategy<Letter> {
    let hop = |st: Strategy<Letter>, hops: Option<u8>| match hops {
        Some(h) => st.hop_limit(u32::from(h % 8)),
        None => st,
    };
    match s {
        Strat::Always => Strategy::always(),
        Strat::Predicate { after, hops } => hop(
            Strategy::predicate(
                |m: &Letter| {
                    if m.strategy_panics {
                        panic!("{PANIC_MESSAGE} fz#{}#", m.id);
                    }
                    m.even
                },
                u32::from(after % 8),
            ),
            hops,
        ),
        Strat::Threshold {
            threshold,
            step,
            hops,
        } => hop(
            Strategy::priority_threshold(Priority(u32::from(threshold))).step(u32::from(step % 64)),
            hops,
        ),
        Strat::Ttl { min, max, hops } => hop(
            Strategy::ttl_range(u32::from(min % 8)..=u32::from(max % 8), |m: &Letter| m.ttl),
            hops,
        ),
    }
}

fn capacity(c: u8) -> Capacity {
    if c == 0 {
        Capacity::Unbounded
    } else {
        Capacity::Bounded(usize::from(c % 6))
    }
}

fn run(s: &Script) {
    step("spawn");
    let mut mailbox = MailboxConfig::new()
        .unlisted(match s.unlisted % 3 {
            0 => Unlisted::NewLane,
            1 => Unlisted::Nearest,
            _ => Unlisted::Refuse,
        })
        .picker(match s.picker % 4 {
            0 | 1 => Picker::Strict,
            2 => Picker::Smooth,
            _ => Picker::Classic,
        })
        .default_capacity(capacity(s.default_capacity));
    for &(p, w, c) in s.lanes.iter().take(4) {
        let lane = LaneConfig::new(Priority(u32::from(p)))
            .weight(u32::from(w % 4))
            .capacity(capacity(c));
        mailbox = mailbox.lane_config(lane);
    }
    if let Some(p) = s.default_priority {
        mailbox = mailbox.default_priority(Priority(u32::from(p)));
    }
    if let Some(p) = s.stop_priority {
        mailbox = mailbox.stop_priority(Priority(u32::from(p)));
    }
    if let Some(p) = s.kill_priority {
        mailbox = mailbox.kill_priority(Priority(u32::from(p)));
    }
    let instances = usize::from(s.instances % 4);
    let log = Arc::new(Log {
        init_fails: s.init_fails,
        init_panics: s.init_panics,
        destroy_panics: s.destroy_panics,
        ..Log::default()
    });
    let dead: Arc<Mutex<Vec<DeadLetter<Letter>>>> = Arc::default();
    let faults: Arc<Mutex<Vec<Fault<Letter>>>> = Arc::default();
    let factory_log = Arc::clone(&log);
    let mut builder = Stage::builder("fs", move |index| {
        factory_log
            .made
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Fz {
            log: Arc::clone(&factory_log),
            index,
        }
    })
    .instances(instances)
    .mailbox(mailbox)
    .generator(PriorityGenerator::from_fn(|m: &Letter| {
        m.priority.map(|p| Priority(u32::from(p)))
    }))
    .strategy(strategy(s.strategy));
    if let Some((retries, backoff_ms)) = s.retry {
        builder = builder.retry(
            RetryPolicy::new(u32::from(retries % 3))
                .backoff(Duration::from_millis(u64::from(backoff_ms % 4)), 2.0),
        );
    }
    if let Some(ms) = s.idle_ms {
        builder = builder.idle_after(Duration::from_millis(u64::from(ms % 16) + 1));
    }
    if s.sinks {
        let (d, f) = (Arc::clone(&dead), Arc::clone(&faults));
        builder = builder
            .on_dead_letter(move |l| d.lock().unwrap_or_else(|p| p.into_inner()).push(l))
            .on_fault(move |l| f.lock().unwrap_or_else(|p| p.into_inner()).push(l));
    }
    let stage = match builder.spawn() {
        Ok(stage) => stage,
        Err(e) => {
            match e {
                SpawnError::Invalid(invalid) if invalid.setting == "instances" => {
                    assert!(instances == 0 || instances > priority_executor::actor::MAX_INSTANCES)
                }
                SpawnError::FactoryPanicked { .. } => panic!("the factory does not panic: {e}"),
                // The rest name a setting of the mailbox or the strategy.
                _ => {}
            }
            return;
        }
    };
    let addr = stage.addr();
    let _ = log.addr.set(addr.clone());
    let mut st = check::State::new(s, &log, instances);
    let mut holds: Vec<Gate> = Vec::new();

    for op in s.ops.iter().take(MAX_OPS) {
        match *op {
            Op::Send(spec) => {
                step("send");
                st.send(&addr, spec, None, !holds.is_empty());
            }
            Op::Hold(spec) => {
                if holds.len() >= 2 {
                    continue;
                }
                step("hold");
                let gate = Gate::default();
                if st.send(&addr, spec, Some(Arc::clone(&gate)), !holds.is_empty()) {
                    holds.push(gate);
                }
            }
            Op::Release => {
                if let Some(gate) = holds.pop() {
                    actor::open(&gate);
                }
            }
            Op::Stop => {
                step("stop");
                if addr.stop().is_ok() {
                    st.may_close = true;
                }
            }
            Op::Kill => {
                step("kill");
                if addr.kill().is_ok() {
                    st.may_close = true;
                }
            }
            Op::Metrics => {
                let m = stage.metrics();
                // A snapshot is exact only when the stage is quiet: with
                // instances sending too, a letter sent after `sent` was
                // read may be settled before the other counters are. With
                // only this thread sending, every send came before it.
                if !st.echoed {
                    assert!(m.settled() <= m.offered, "{m:?}");
                }
                assert_eq!(m.offered, m.accepted + m.handed_back, "{m:?}");
            }
        }
    }

    for gate in holds.drain(..) {
        actor::open(&gate);
    }
    st.end(stage, addr, s.end, s.sinks, &dead, &faults);
}

fuzz_target!(|script: Script| {
    common::setup();
    let _running = common::Running::start();
    run(&script);
});

/// A refusal the script may see, given what it did.
pub fn check_refusal(e: &SendError<Letter>, blocking: bool, may_close: bool, refuse: bool) {
    match e {
        SendError::ShutDown { .. } => assert!(may_close, "refused as ShutDown while open"),
        SendError::Full { .. } => assert!(!blocking, "a blocking send said Full"),
        SendError::UnknownPriority { .. } => assert!(refuse, "UnknownPriority without Refuse"),
        _ => panic!("unexpected send error {e:?}"),
    }
}
