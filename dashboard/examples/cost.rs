//! What the dashboard costs: the time of one snapshot of 10 executors of
//! 10 lanes each, and a pool's throughput with a viewer connected to the
//! dashboard's event stream against none, in pairs.
//!
//! ```text
//! cargo run --release -p priority-executor-dashboard --example cost
//! cargo run --release -p priority-executor-dashboard --example cost -- 10 20000000
//! ```
//!
//! The arguments are the pairs of throughput runs (default 8) and the jobs
//! per run (default 20 000 000, a few seconds: several events per run). Each pair runs the same flood of empty jobs
//! twice, once with a viewer reading `api/events` (a snapshot a second)
//! and once without, in alternating order; the overhead is the median of
//! the pairs' ratios, so a machine busy with other work for a while
//! weighs on both runs of a pair alike.

use priority_executor::{Capacity, Executor, LaneConfig, Priority};
use priority_executor_dashboard::Dashboard;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let pairs: usize = args.next().map_or(8, |a| a.parse().expect("pairs"));
    let jobs: usize = args.next().map_or(20_000_000, |a| a.parse().expect("jobs"));
    snapshot_time();
    throughput(pairs, jobs);
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// 10 executors of 10 lanes, each lane with jobs queued behind held
/// workers and some run, so every figure has something to read.
fn snapshot_time() {
    let mut executors = Vec::new();
    let mut releases = Vec::new();
    for e in 0..10 {
        let mut builder = Executor::builder()
            .name(format!("executor-{e}"))
            .core_threads(2)
            .max_threads(2)
            .record_waits(true);
        for p in 1..=10 {
            builder = builder
                .lane_config(LaneConfig::new(Priority(p)).capacity(Capacity::Bounded(10_000)));
        }
        let exec = builder.build().unwrap();
        for p in 1..=10 {
            for _ in 0..100 {
                exec.enqueue(Priority(p), || ()).unwrap().join().unwrap();
            }
        }
        for _ in 0..2 {
            let (release, gate) = std::sync::mpsc::channel::<()>();
            let (started_tx, started) = std::sync::mpsc::channel();
            let _held = exec.enqueue(Priority(10), move || {
                started_tx.send(()).ok();
                gate.recv().ok();
            });
            started.recv().unwrap();
            releases.push(release);
        }
        for p in 1..=10 {
            for _ in 0..50 {
                let _queued = exec.enqueue(Priority(p), || ());
            }
        }
        executors.push(exec);
    }
    let dashboard = executors
        .iter()
        .fold(Dashboard::new(), |d, exec| d.executor(exec));
    let mut snap = Vec::new();
    let mut json = Vec::new();
    for round in 0..2_000 {
        let t0 = Instant::now();
        let snapshot = dashboard.snapshot();
        let t1 = Instant::now();
        let text = serde_json::to_string(&snapshot).unwrap();
        let t2 = Instant::now();
        assert!(text.len() > 1000);
        if round >= 100 {
            snap.push((t1 - t0).as_secs_f64() * 1e6);
            json.push((t2 - t1).as_secs_f64() * 1e6);
        }
    }
    let len = serde_json::to_string(&dashboard.snapshot()).unwrap().len();
    println!(
        "snapshot of 10 executors x 10 lanes: median {:.1} us, p99 {:.1} us; \
         to JSON {:.1} us more ({len} bytes)",
        median(snap.clone()),
        {
            snap.sort_by(f64::total_cmp);
            snap[snap.len() * 99 / 100]
        },
        median(json),
    );
    drop(releases);
    for exec in executors {
        exec.shutdown();
    }
}

/// One flood of `jobs` empty jobs into two lanes from one producer, timed
/// from the first enqueue to idle; jobs per second.
fn flood(exec: &Executor, jobs: usize) -> f64 {
    let t0 = Instant::now();
    for i in 0..jobs {
        let lane = if i % 5 == 0 {
            Priority(10)
        } else {
            Priority(1)
        };
        let _detached = exec.enqueue(lane, || ());
    }
    exec.wait_idle();
    jobs as f64 / t0.elapsed().as_secs_f64()
}

/// A viewer of the dashboard's event stream: reads and drops every byte
/// until told to stop.
fn viewer(addr: std::net::SocketAddr, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<usize> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(
            b"GET /api/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
        )
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        let mut events = 0;
        // ORDERING: Relaxed: a flag that only ends the loop; the join
        // that follows orders everything else.
        while !stop.load(Ordering::Relaxed) {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => events += buf[..n].windows(6).filter(|w| w == b"event:").count(),
                Err(_) => {}
            }
        }
        events
    })
}

fn throughput(pairs: usize, jobs: usize) {
    let exec = Executor::builder()
        .name("throughput")
        .core_threads(2)
        .max_threads(2)
        // Bounded (a full lane blocks the producer), so a long flood holds
        // a few thousand jobs in memory, not millions.
        .lane(Priority(10), Capacity::Bounded(4096))
        .lane(Priority(1), Capacity::Bounded(4096))
        .build()
        .unwrap();
    exec.prestart_core_threads();
    let server = Dashboard::new()
        .executor(&exec)
        .spawn("127.0.0.1:0")
        .unwrap();
    // Warm up: allocator, caches, threads.
    flood(&exec, jobs / 4);
    let mut ratios = Vec::new();
    let (mut with_all, mut without_all) = (Vec::new(), Vec::new());
    let mut events = 0;
    for pair in 0..pairs {
        let mut run = |connected: bool| {
            if !connected {
                return flood(&exec, jobs);
            }
            let stop = Arc::new(AtomicBool::new(false));
            let reader = viewer(server.local_addr(), stop.clone());
            let rate = flood(&exec, jobs);
            // ORDERING: Relaxed: see the viewer's loop.
            stop.store(true, Ordering::Relaxed);
            events += reader.join().unwrap();
            rate
        };
        // Alternate which goes first, so neither always meets a warmer
        // or colder machine.
        let (with, without) = if pair % 2 == 0 {
            let w = run(true);
            (w, run(false))
        } else {
            let wo = run(false);
            (run(true), wo)
        };
        println!(
            "pair {pair}: {:.0} jobs/s with a viewer, {:.0} without ({:+.2}%)",
            with,
            without,
            100.0 * (with / without - 1.0)
        );
        ratios.push(with / without);
        with_all.push(with);
        without_all.push(without);
    }
    println!(
        "throughput, {pairs} pairs of {jobs} jobs: median {:.0} jobs/s with a viewer, {:.0} without; \
         median paired change {:+.2}% ({events} events received)",
        median(with_all),
        median(without_all),
        100.0 * (median(ratios) - 1.0)
    );
    server.stop();
    exec.shutdown();
}
