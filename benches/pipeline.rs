//! The actor layer against its peers, interleaved (each round runs every
//! peer once, in a rotating order, so load from elsewhere on the machine
//! hits them alike). Printed as the markdown tables of benches/README.md.
//!
//! - **pipeline**: 200 000 trivial messages (`u64`) through 3 stages of one
//!   instance each, from the bench thread; timed from the first send until
//!   the last stage has seen the last message. Peers: one thread per stage
//!   joined by `crossbeam_channel::bounded(1024)` (written here), and
//!   ractor 0.16 (three actors on a 2-thread tokio runtime, `cast` from the
//!   bench thread, unbounded mailboxes). This crate's stages have lanes of
//!   1024.
//! - **flood**: one stage doing ~50 us of CPU per message; 4 000 low
//!   messages queued at once, then 200 high ones sent every 250 us. The
//!   wait of a high message is from its send to the start of its perform.
//!   Peer: one consumer thread over two `crossbeam_channel::unbounded`
//!   channels that always tries the high channel first.
//!
//! `cargo bench --features actor --bench pipeline` (`-- ROUNDS`, `-- pipeline` or `-- flood`
//! to run one part, `-- profile` to run only this crate's pipeline, for
//! `perf record` or `perf stat`, and `-- profile channels` only the
//! channel pipeline; `-- count N` to run [`counted`] once with N messages,
//! for `valgrind --tool=callgrind`)

use crossbeam_channel::{Receiver, Sender, bounded, select, unbounded};
use priority_executor::Capacity;
use priority_executor::Priority;
use priority_executor::SendOptions;
use priority_executor::actor::{Actor, ActorError, MailboxConfig, Outbox, Pipeline, Stage};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const MESSAGES: u64 = 200_000;
const ROUNDS: usize = 15;
const FLOOD_ROUNDS: usize = 5;

// ===== pipeline: this crate =====

struct Forward;

impl Actor for Forward {
    type In = u64;
    type Out = u64;
    #[inline]
    fn perform(&mut self, n: u64, out: &mut Outbox<'_, u64>) -> Result<(), ActorError> {
        out.send(n)?;
        Ok(())
    }
}

fn stage(name: &str) -> priority_executor::actor::StageBuilder<Forward> {
    Stage::builder(name, |_| Forward)
        .mailbox(MailboxConfig::new().default_capacity(Capacity::Bounded(1024)))
}

fn this_crate(n: u64) -> Duration {
    let seen = Arc::new(AtomicU64::new(0));
    let (done_tx, done) = bounded::<()>(1);
    let counter = seen.clone();
    let pipeline = Pipeline::builder(stage("s1"))
        .then(stage("s2"))
        .then(stage("s3"))
        .on_output(move |_, _| {
            if counter.fetch_add(1, Ordering::Relaxed) + 1 == n {
                let _ = done_tx.send(());
            }
        })
        .spawn()
        .expect("spawn the pipeline");
    let addr = pipeline.addr();
    let start = Instant::now();
    for i in 0..n {
        addr.send(i).expect("accepted");
    }
    done.recv().expect("the last stage saw every message");
    let took = start.elapsed();
    pipeline.drain();
    took
}

// ===== count: instructions per message, for callgrind =====

/// Holds on its gate at `u64::MAX` (then passes it on); reports reaching
/// message `last`.
struct Gated {
    gate: Arc<Mutex<Receiver<()>>>,
    last: u64,
    reached: Sender<()>,
}

impl Actor for Gated {
    type In = u64;
    type Out = u64;
    #[inline]
    fn perform(&mut self, n: u64, out: &mut Outbox<'_, u64>) -> Result<(), ActorError> {
        if n == u64::MAX {
            self.gate.lock().map_err(|_| "gate lock")?.recv()?;
        } else if n == self.last {
            self.reached.send(())?;
        }
        out.send(n)?;
        Ok(())
    }
}

/// `n` messages through 2 stages with no thread spinning while they move:
/// both stages are held on a gate while the `n` are sent into the first;
/// the first then performs them all (forwarding into the second, still
/// held) while this thread blocks; then the second performs them all. Run
/// under callgrind with two values of `n`: the difference of the counts
/// over the difference of `n` is the cost of one message's sends,
/// dispatches and performs in 2 stages, free of spinning and of load.
fn counted(n: u64) {
    let (gate_tx, gate_rx) = unbounded::<()>();
    let gate = Arc::new(Mutex::new(gate_rx));
    let (reached_tx, reached) = unbounded::<()>();
    let gated = |name: &str| {
        let (gate, reached) = (gate.clone(), reached_tx.clone());
        Stage::builder(name, move |_| Gated {
            gate: gate.clone(),
            last: n - 1,
            reached: reached.clone(),
        })
        .mailbox(MailboxConfig::new().default_capacity(Capacity::Bounded(n as usize + 2)))
    };
    let pipeline = Pipeline::builder(gated("c1"))
        .then(gated("c2"))
        .on_output(|_, _| {})
        .spawn()
        .expect("spawn the pipeline");
    let addr = pipeline.addr();
    addr.send(u64::MAX).expect("accepted");
    for i in 0..n {
        addr.send(i).expect("accepted");
    }
    gate_tx.send(()).expect("the first stage holds"); // c1 runs the n
    reached.recv().expect("c1 performed the last");
    gate_tx.send(()).expect("the second stage holds"); // c2 runs the n
    reached.recv().expect("c2 performed the last");
    pipeline.drain();
}

// ===== pipeline: threads and bounded channels =====

fn channels(n: u64) -> Duration {
    let (tx1, rx1) = bounded::<u64>(1024);
    let (tx2, rx2) = bounded::<u64>(1024);
    let (tx3, rx3) = bounded::<u64>(1024);
    let (done_tx, done) = bounded::<()>(1);
    let relay = |rx: Receiver<u64>, tx: Sender<u64>| {
        thread::spawn(move || {
            for m in rx {
                if tx.send(m).is_err() {
                    break;
                }
            }
        })
    };
    let t1 = relay(rx1, tx2);
    let t2 = relay(rx2, tx3);
    let t3 = thread::spawn(move || {
        let mut seen = 0;
        for _ in rx3 {
            seen += 1;
            if seen == n {
                let _ = done_tx.send(());
            }
        }
    });
    let start = Instant::now();
    for i in 0..n {
        tx1.send(i).expect("stage 1 alive");
    }
    done.recv().expect("the last stage saw every message");
    let took = start.elapsed();
    drop(tx1);
    for t in [t1, t2, t3] {
        let _ = t.join();
    }
    took
}

// ===== pipeline: ractor =====

mod ractor_peer {
    use ractor::{Actor, ActorProcessingErr, ActorRef};
    use std::sync::mpsc;

    pub enum Next {
        Forward(ActorRef<u64>),
        Count {
            target: u64,
            seen: u64,
            done: mpsc::Sender<()>,
        },
    }

    pub struct Stage;

    impl Actor for Stage {
        type Msg = u64;
        type State = Next;
        type Arguments = Next;

        async fn pre_start(
            &self,
            _: ActorRef<u64>,
            next: Next,
        ) -> Result<Next, ActorProcessingErr> {
            Ok(next)
        }

        async fn handle(
            &self,
            _: ActorRef<u64>,
            n: u64,
            next: &mut Next,
        ) -> Result<(), ActorProcessingErr> {
            match next {
                Next::Forward(to) => to.cast(n)?,
                Next::Count { target, seen, done } => {
                    *seen += 1;
                    if seen == target {
                        let _ = done.send(());
                    }
                }
            }
            Ok(())
        }
    }
}

fn ractor(rt: &tokio::runtime::Runtime, n: u64) -> Duration {
    use ractor::Actor as _;
    let (done_tx, done) = std::sync::mpsc::channel();
    let (first, handles, refs) = rt.block_on(async move {
        let count = ractor_peer::Next::Count {
            target: n,
            seen: 0,
            done: done_tx,
        };
        let (s3, h3) = ractor_peer::Stage::spawn(None, ractor_peer::Stage, count)
            .await
            .expect("spawn s3");
        let (s2, h2) = ractor_peer::Stage::spawn(
            None,
            ractor_peer::Stage,
            ractor_peer::Next::Forward(s3.clone()),
        )
        .await
        .expect("spawn s2");
        let (s1, h1) = ractor_peer::Stage::spawn(
            None,
            ractor_peer::Stage,
            ractor_peer::Next::Forward(s2.clone()),
        )
        .await
        .expect("spawn s1");
        (s1.clone(), vec![h1, h2, h3], vec![s1, s2, s3])
    });
    let start = Instant::now();
    for i in 0..n {
        first.cast(i).expect("s1 alive");
    }
    done.recv().expect("the last actor saw every message");
    let took = start.elapsed();
    for r in &refs {
        r.stop(None);
    }
    rt.block_on(async move {
        for h in handles {
            let _ = h.await;
        }
    });
    took
}

// ===== flood =====

struct Flood {
    low: usize,
    high: usize,
    every: Duration,
    work: Duration,
}

const FLOOD: Flood = Flood {
    low: 4000,
    high: 200,
    every: Duration::from_micros(250),
    work: Duration::from_micros(50),
};

fn spin(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// Sends the high messages on schedule with `send(sent_at)`.
fn pace(mut send: impl FnMut(Instant)) {
    let start = Instant::now();
    for k in 1..=FLOOD.high as u32 {
        let due = start + FLOOD.every * k;
        let now = Instant::now();
        if due > now {
            thread::sleep(due - now);
        }
        send(Instant::now());
    }
}

struct Busy {
    waits: Arc<Mutex<Vec<Duration>>>,
}

impl Actor for Busy {
    type In = (bool, Instant);
    type Out = ();
    fn perform(
        &mut self,
        (high, sent): (bool, Instant),
        _: &mut Outbox<'_, ()>,
    ) -> Result<(), ActorError> {
        if high {
            let waited = sent.elapsed();
            self.waits.lock().map_err(|_| "poisoned")?.push(waited);
        }
        spin(FLOOD.work);
        Ok(())
    }
}

/// (high waits, time to drain everything)
fn flood_this_crate() -> (Vec<Duration>, Duration) {
    let waits = Arc::new(Mutex::new(Vec::new()));
    let w = waits.clone();
    let stage = Stage::builder("busy", move |_| Busy { waits: w.clone() })
        .spawn()
        .expect("spawn");
    let addr = stage.addr();
    let start = Instant::now();
    for _ in 0..FLOOD.low {
        addr.send_with(
            (false, Instant::now()),
            SendOptions::new().priority(Priority::LOW),
        )
        .expect("low accepted");
    }
    pace(|at| {
        addr.send_with((true, at), SendOptions::new().priority(Priority::HIGH))
            .expect("high accepted")
    });
    stage.drain();
    let took = start.elapsed();
    let waits = waits.lock().expect("waits").clone();
    (waits, took)
}

fn flood_two_channels() -> (Vec<Duration>, Duration) {
    let (high_tx, high) = unbounded::<Instant>();
    let (low_tx, low) = unbounded::<Instant>();
    let consumer = thread::spawn(move || {
        let mut waits = Vec::new();
        let mut high_open = true;
        let mut low_open = true;
        while high_open || low_open {
            if let Ok(sent) = high.try_recv() {
                waits.push(sent.elapsed());
                spin(FLOOD.work);
                continue;
            }
            if low.try_recv().is_ok() {
                spin(FLOOD.work);
                continue;
            }
            select! {
                recv(high) -> m => match m {
                    Ok(sent) => { waits.push(sent.elapsed()); spin(FLOOD.work); }
                    Err(_) => high_open = false,
                },
                recv(low) -> m => match m {
                    Ok(_) => spin(FLOOD.work),
                    Err(_) => low_open = false,
                },
            }
        }
        waits
    });
    let start = Instant::now();
    for _ in 0..FLOOD.low {
        low_tx.send(Instant::now()).expect("consumer alive");
    }
    pace(|at| high_tx.send(at).expect("consumer alive"));
    drop((high_tx, low_tx));
    let waits = consumer.join().expect("consumer");
    (waits, start.elapsed())
}

// ===== report =====

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn percentile(waits: &mut [Duration], q: f64) -> f64 {
    waits.sort();
    let i = ((waits.len() - 1) as f64 * q).round() as usize;
    waits[i].as_secs_f64() * 1e3
}

/// The median and the 10th and 90th percentiles of `a[r] / b[r]`.
fn paired(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let mut r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    r.sort_by(f64::total_cmp);
    let at = |q: f64| r[((r.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

fn pipeline_part(rounds: usize) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime");
    let names = ["this_crate_pipeline", "crossbeam_threads", "ractor"];
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    // One unmeasured warm-up of each.
    this_crate(MESSAGES / 10);
    channels(MESSAGES / 10);
    ractor(&rt, MESSAGES / 10);
    for round in 0..rounds {
        for k in 0..names.len() {
            let i = (k + round) % names.len();
            let took = match i {
                0 => this_crate(MESSAGES),
                1 => channels(MESSAGES),
                _ => ractor(&rt, MESSAGES),
            };
            rates[i].push(MESSAGES as f64 / took.as_secs_f64());
        }
    }
    println!(
        "\npipeline: {MESSAGES} messages through 3 stages, {rounds} interleaved rounds: \
         median M msg/s, and the median paired ratio (p10-p90)\n"
    );
    println!("| peer | M msg/s | vs crossbeam_threads | vs ractor |");
    println!("|---|---:|---:|---:|");
    for (i, name) in names.iter().enumerate() {
        let rate = median(&mut rates[i].clone()) / 1e6;
        let (a, al, ah) = paired(&rates[i], &rates[1]);
        let (b, bl, bh) = paired(&rates[i], &rates[2]);
        println!("| {name} | {rate:.2} | {a:.2} ({al:.2}-{ah:.2}) | {b:.2} ({bl:.2}-{bh:.2}) |");
    }
}

fn flood_part(rounds: usize) {
    let names = ["this_crate_stage", "two_channel_consumer"];
    let mut p50: Vec<Vec<f64>> = vec![Vec::new(); 2];
    let mut p99: Vec<Vec<f64>> = vec![Vec::new(); 2];
    let mut drained: Vec<Vec<f64>> = vec![Vec::new(); 2];
    for round in 0..rounds {
        for k in 0..2 {
            let i = (k + round) % 2;
            let (mut waits, took) = if i == 0 {
                flood_this_crate()
            } else {
                flood_two_channels()
            };
            assert_eq!(waits.len(), FLOOD.high, "every high message was performed");
            p50[i].push(percentile(&mut waits, 0.5));
            p99[i].push(percentile(&mut waits, 0.99));
            drained[i].push(took.as_secs_f64() * 1e3);
        }
    }
    println!(
        "\nflood: {} low queued, {} high every {:?}, {:?} of work each, {rounds} interleaved \
         rounds: medians, milliseconds\n",
        FLOOD.low, FLOOD.high, FLOOD.every, FLOOD.work
    );
    println!("| consumer | high p50 | high p99 | backlog drained |");
    println!("|---|---:|---:|---:|");
    for (i, name) in names.iter().enumerate() {
        println!(
            "| {name} | {:.3} | {:.3} | {:.0} |",
            median(&mut p50[i]),
            median(&mut p99[i]),
            median(&mut drained[i])
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = args.iter().find_map(|a| a.parse::<usize>().ok());
    let only: Vec<&String> = args
        .iter()
        .filter(|a| !a.starts_with('-') && a.parse::<usize>().is_err())
        .collect();
    let wants = |part: &str| only.is_empty() || only.iter().any(|o| part.contains(o.as_str()));
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average at start: {}", load.trim());
    }
    if only.iter().any(|o| o.as_str() == "count") {
        counted(rounds.unwrap_or(10_000).max(1) as u64);
        return;
    }
    if only.iter().any(|o| o.as_str() == "profile") {
        // One pipeline alone, for `perf record` or `perf stat`.
        let run: fn(u64) -> Duration = if only.iter().any(|o| o.as_str() == "channels") {
            channels
        } else {
            this_crate
        };
        for _ in 0..rounds.unwrap_or(20) {
            let took = run(MESSAGES);
            println!("{:.2} M msg/s", MESSAGES as f64 / took.as_secs_f64() / 1e6);
        }
        return;
    }
    if wants("pipeline") {
        pipeline_part(rounds.unwrap_or(ROUNDS).max(1));
    }
    if wants("flood") {
        flood_part(rounds.unwrap_or(FLOOD_ROUNDS).max(1));
    }
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("\nload average at end: {}", load.trim());
    }
}
