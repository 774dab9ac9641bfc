//! The multi-process demo: worker processes share one queue-fed flood;
//! priority messages are served first through broker priority and the
//! lanes, measured against a FIFO baseline through the same broker.
//!
//! ```text
//! cargo run --release -p priority-executor-amqp --bin amqp-demo -- [--messages N]
//!     [--processes N] [--threads N] [--prefetch N] [--work-us N] [--share PERCENT]
//!     [--uri URI] [--scaling]
//! ```
//!
//! Starts the repository's private broker (`scripts/rabbitmq start`) if
//! none answers at the URI.

#[path = "shared/broker.rs"]
mod broker;
#[path = "shared/worker.rs"]
mod worker;

use broker::publisher;
use worker::{now_us, number};

use priority_executor_amqp::{ConsumerConfig, Outgoing, Publisher};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Clone)]
struct Settings {
    uri: String,
    messages: usize,
    share: usize,
    processes: usize,
    threads: usize,
    prefetch: u16,
    work_us: u64,
    scaling: bool,
}

fn usage() -> &'static str {
    "usage: amqp-demo [--messages N] [--processes N] [--threads N] [--prefetch N] [--work-us N] [--share PERCENT] [--uri URI] [--scaling]"
}

fn parse(argv: Vec<String>) -> Result<Settings, String> {
    let mut s = Settings {
        uri: broker::default_uri(),
        messages: 20_000,
        share: 10,
        processes: 3,
        threads: 2,
        prefetch: 4,
        work_us: 1000,
        scaling: false,
    };
    let mut it = argv.into_iter();
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "--uri" => s.uri = value("--uri")?,
            "--messages" => s.messages = number(&value("--messages")?, "--messages")?,
            "--share" => s.share = number(&value("--share")?, "--share")?,
            "--processes" => s.processes = number(&value("--processes")?, "--processes")?,
            "--threads" => s.threads = number(&value("--threads")?, "--threads")?,
            "--prefetch" => s.prefetch = number(&value("--prefetch")?, "--prefetch")?,
            "--work-us" => s.work_us = number(&value("--work-us")?, "--work-us")?,
            "--scaling" => s.scaling = true,
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if s.processes == 0 || s.messages == 0 || s.share == 0 || s.share > 100 {
        return Err("--processes and --messages must be at least 1, --share 1 to 100".to_owned());
    }
    Ok(s)
}

/// One worker process and what it reported.
struct Worker {
    child: Child,
    done: usize,
}

/// A `done` line: which process, the message id, its wait.
struct Done {
    process: usize,
    id: String,
    wait_us: u64,
    start_us: u64,
}

struct Run {
    per_process: Vec<usize>,
    elapsed: Duration,
    high: Vec<u64>,
    low: Vec<u64>,
    /// (priority?, published, started), microseconds since the epoch.
    spans: Vec<(bool, u64, u64)>,
    redelivered: usize,
}

fn run(s: &Settings, publisher: &Publisher, fifo: bool, processes: usize) -> Result<Run, String> {
    let queue = format!(
        "pe-demo-{}-{}",
        if fifo { "fifo" } else { "priority" },
        std::process::id()
    );
    let mut config = ConsumerConfig::new(&queue);
    if !fifo {
        config = config.max_priority(10);
    }
    let _ = publisher.delete_queue(&queue);
    publisher.declare(&config).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let (tx, rx) = mpsc::channel::<Option<Done>>();
    let mut workers = Vec::new();
    for process in 0..processes {
        let mut cmd = Command::new(&exe);
        cmd.args(["worker", "--uri", &s.uri, "--queue", &queue])
            .args(["--threads", &s.threads.to_string()])
            .args(["--prefetch", &s.prefetch.to_string()])
            .args(["--work-us", &s.work_us.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if fifo {
            cmd.arg("--fifo");
        }
        let mut child = cmd.spawn().map_err(|e| format!("starting a worker: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let mut parts = line.split(' ');
                match parts.next() {
                    Some("ready") => {
                        let _ = tx.send(None);
                    }
                    Some("done") => {
                        let id = parts.next().unwrap_or("").to_owned();
                        let _redelivered = parts.next();
                        let _lane = parts.next();
                        let wait_us = parts.next().and_then(|w| w.parse().ok()).unwrap_or(0);
                        let start_us = parts.next().and_then(|w| w.parse().ok()).unwrap_or(0);
                        let _ = tx.send(Some(Done {
                            process,
                            id,
                            wait_us,
                            start_us,
                        }));
                    }
                    _ => {}
                }
            }
        });
        workers.push(Worker { child, done: 0 });
    }
    drop(tx);
    // Every worker consuming before the flood starts.
    for _ in 0..processes {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(None) => {}
            _ => return Err("a worker did not start".to_owned()),
        }
    }
    let start = Instant::now();
    let share = s.share;
    let publisher_thread = {
        let uri = s.uri.clone();
        let queue = queue.clone();
        let n = s.messages;
        std::thread::spawn(move || -> Result<(), String> {
            let publisher = Publisher::connect(uri).map_err(|e| e.to_string())?;
            for batch in (0..n).collect::<Vec<_>>().chunks(50) {
                let stamp = now_us();
                let messages = batch.iter().map(|i| {
                    let high = is_priority(*i, share);
                    Outgoing::to_queue(&queue, "visa application")
                        .message_id(format!("{}{i}", if high { 'h' } else { 'l' }))
                        .priority(if high { 9 } else { 0 })
                        .header("x-published-us", stamp)
                });
                publisher.publish_all(messages).map_err(|e| e.to_string())?;
            }
            Ok(())
        })
    };
    let mut seen = HashSet::new();
    let (mut high, mut low) = (Vec::new(), Vec::new());
    let mut spans = Vec::new();
    let mut redelivered = 0;
    while seen.len() < s.messages {
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(Some(done)) => {
                workers[done.process].done += 1;
                if !seen.insert(done.id.clone()) {
                    redelivered += 1;
                    continue;
                }
                let is_high = done.id.starts_with('h');
                spans.push((
                    is_high,
                    done.start_us.saturating_sub(done.wait_us),
                    done.start_us,
                ));
                if is_high {
                    high.push(done.wait_us);
                } else {
                    low.push(done.wait_us);
                }
            }
            Ok(None) => {}
            Err(_) => return Err(format!("stalled at {} of {}", seen.len(), s.messages)),
        }
    }
    let elapsed = start.elapsed();
    publisher_thread
        .join()
        .map_err(|_| "the publisher panicked".to_owned())??;
    for w in &mut workers {
        drop(w.child.stdin.take()); // graceful stop
    }
    for w in &mut workers {
        let status = w.child.wait().map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("a worker exited with {status}"));
        }
    }
    let _ = publisher.delete_queue(&queue);
    Ok(Run {
        per_process: workers.iter().map(|w| w.done).collect(),
        elapsed,
        high,
        low,
        spans,
        redelivered,
    })
}

/// Is message `i` (from 0) a priority one, for `share` percent of them?
/// Spread evenly: of the first n messages, exactly `n * share / 100`
/// (rounded down) are.
fn is_priority(i: usize, share: usize) -> bool {
    (i + 1) * share / 100 > i * share / 100
}

/// How many of `messages` are priority ones, for `share` percent of them.
fn priority_count(messages: usize, share: usize) -> usize {
    messages * share / 100
}

/// Of the jobs that started while both classes had messages waiting (in
/// the broker or in hand), how many were priority ones: (priority, all).
fn share_while_both_waited(spans: &[(bool, u64, u64)]) -> (usize, usize) {
    // Per class: sorted publish times and sorted start times; waiting at
    // t = published at or before t, minus started before t.
    let class = |high: bool| {
        let mut published: Vec<u64> = spans.iter().filter(|s| s.0 == high).map(|s| s.1).collect();
        let mut started: Vec<u64> = spans.iter().filter(|s| s.0 == high).map(|s| s.2).collect();
        published.sort_unstable();
        started.sort_unstable();
        (published, started)
    };
    let waiting = |(published, started): &(Vec<u64>, Vec<u64>), t: u64| {
        published.partition_point(|p| *p <= t) - started.partition_point(|s| *s < t)
    };
    let (high, low) = (class(true), class(false));
    let (mut priority, mut all) = (0, 0);
    for &(is_high, _, start) in spans {
        // The job itself was waiting until its start.
        if waiting(&high, start) > 0 && waiting(&low, start) > 0 {
            all += 1;
            priority += usize::from(is_high);
        }
    }
    (priority, all)
}

fn percentile(values: &mut [u64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_unstable();
    let rank = ((p / 100.0) * (values.len() - 1) as f64).round() as usize;
    values[rank.min(values.len() - 1)] as f64 / 1000.0
}

fn report(label: &str, s: &Settings, r: &mut Run) -> f64 {
    let rate = s.messages as f64 / r.elapsed.as_secs_f64();
    println!("{label}:");
    let per: Vec<String> = r
        .per_process
        .iter()
        .enumerate()
        .map(|(i, n)| format!("process {}: {n}", i + 1))
        .collect();
    println!(
        "  done  {}; overall {} in {:.2} s = {:.0} msg/s{}",
        per.join(", "),
        s.messages,
        r.elapsed.as_secs_f64(),
        rate,
        if r.redelivered > 0 {
            format!(" ({} ran twice)", r.redelivered)
        } else {
            String::new()
        }
    );
    let hp99 = percentile(&mut r.high, 99.0);
    println!(
        "  wait  priority p50 {:8.1} ms  p99 {:8.1} ms | standard p50 {:8.1} ms  p99 {:8.1} ms",
        percentile(&mut r.high, 50.0),
        hp99,
        percentile(&mut r.low, 50.0),
        percentile(&mut r.low, 99.0),
    );
    let (priority, all) = share_while_both_waited(&r.spans);
    if all > 0 {
        println!(
            "  share while both classes were waiting: priority {:.0}% of the {all} jobs started then ({} of the {} messages, {}%, are priority)",
            100.0 * priority as f64 / all as f64,
            priority_count(s.messages, s.share),
            s.messages,
            s.share
        );
    } else {
        println!("  share while both classes were waiting: they never were");
    }
    hp99
}

fn main() -> ExitCode {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("worker") {
        argv.remove(0);
        return worker::main(argv);
    }
    let s = match parse(argv) {
        Ok(s) => s,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("amqp-demo: {e}");
            }
            eprintln!("{}", usage());
            return ExitCode::from(2);
        }
    };
    let publisher = match publisher(&s.uri) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("amqp-demo: {e}");
            return ExitCode::from(1);
        }
    };
    let result = if s.scaling {
        scaling(&s, &publisher)
    } else {
        demo(&s, &publisher)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("amqp-demo: {e}");
            ExitCode::from(1)
        }
    }
}

fn demo(s: &Settings, publisher: &Publisher) -> Result<(), String> {
    println!(
        "{} messages ({} of them, {}%, priority) into {} worker processes x {} threads, prefetch {}, {} us of work each",
        s.messages,
        priority_count(s.messages, s.share),
        s.share,
        s.processes,
        s.threads,
        s.prefetch,
        s.work_us
    );
    let mut prio = run(s, publisher, false, s.processes)?;
    let p = report(
        "broker priority (x-max-priority 10) into lanes 10:1",
        s,
        &mut prio,
    );
    let mut fifo = run(s, publisher, true, s.processes)?;
    let f = report(
        "FIFO baseline (same broker, no priority, one lane)",
        s,
        &mut fifo,
    );
    println!(
        "priority p99 wait: {p:.1} ms against {f:.1} ms FIFO ({:.0}x lower)",
        f / p.max(0.001)
    );
    let _ = std::io::stdout().flush();
    Ok(())
}

fn scaling(s: &Settings, publisher: &Publisher) -> Result<(), String> {
    println!(
        "messages/s through the broker: {} messages, {} threads and prefetch {} per process, {} us of work",
        s.messages, s.threads, s.prefetch, s.work_us
    );
    let mut one = 0.0;
    for processes in 1..=s.processes {
        let r = run(s, publisher, false, processes)?;
        let rate = s.messages as f64 / r.elapsed.as_secs_f64();
        if processes == 1 {
            one = rate;
        }
        println!(
            "  {processes} process{}: {rate:7.0} msg/s ({:.2}x one process)",
            if processes == 1 { " " } else { "es" },
            rate / one
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{is_priority, priority_count};

    #[test]
    fn the_priority_share_is_the_one_asked_for_and_spread_evenly() {
        for share in [1, 10, 33, 40, 50, 51, 60, 99, 100] {
            let n = (0..1000).filter(|&i| is_priority(i, share)).count();
            assert_eq!(n, share * 10, "share {share}% of 1000");
            assert_eq!(priority_count(1000, share), n);
            // Every prefix has its share, rounded down.
            for prefix in [1, 7, 100, 333] {
                let k = (0..prefix).filter(|&i| is_priority(i, share)).count();
                assert_eq!(
                    k,
                    priority_count(prefix, share),
                    "share {share}%, first {prefix}"
                );
            }
        }
        assert_eq!(priority_count(7, 50), 3);
    }
}
