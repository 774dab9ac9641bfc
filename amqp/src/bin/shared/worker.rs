//! A consumer process: one queue into an executor with lanes 10 and 1
//! (the `amqp-worker` binary, and `amqp-demo worker`).
//!
//! Prints `done <message-id> <redelivered 0|1> <lane> <wait-us> <start-us>`
//! for every message it finished (before its ack), where the wait is from
//! the `x-published-us` header (microseconds since the epoch) to the start
//! of the job, and the start is in microseconds since the epoch. Stops gracefully when its standard input closes, printing
//! `stopped <acked> <delivered>`. Used by the multi-process tests and the
//! demo.
//!
//! ```text
//! amqp-worker --queue NAME [--uri URI] [--prefetch N] [--threads N]
//!             [--work-us N] [--max-priority N] [--fifo]
//! ```

use priority_executor::{Capacity, Executor, Priority};
use priority_executor_amqp::{Bridge, ConsumerConfig, Event, PriorityTable};
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

struct Args {
    uri: String,
    queue: String,
    prefetch: u16,
    threads: usize,
    work: Duration,
    max_priority: Option<u8>,
    fifo: bool,
}

fn parse(argv: Vec<String>) -> Result<Args, String> {
    let mut args = Args {
        uri: std::env::var("AMQP_ADDR")
            .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned()),
        queue: String::new(),
        prefetch: 4,
        threads: 2,
        work: Duration::ZERO,
        max_priority: Some(10),
        fifo: false,
    };
    let mut it = argv.into_iter();
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "--uri" => args.uri = value("--uri")?,
            "--queue" => args.queue = value("--queue")?,
            "--prefetch" => args.prefetch = number(&value("--prefetch")?, "--prefetch")?,
            "--threads" => args.threads = number(&value("--threads")?, "--threads")?,
            "--work-us" => {
                args.work = Duration::from_micros(number(&value("--work-us")?, "--work-us")?)
            }
            "--max-priority" => {
                args.max_priority = Some(number(&value("--max-priority")?, "--max-priority")?)
            }
            "--fifo" => {
                args.fifo = true;
                args.max_priority = None;
            }
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.queue.is_empty() {
        return Err("--queue is required".to_owned());
    }
    Ok(args)
}

pub fn number<T: std::str::FromStr>(text: &str, name: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{name} = {text:?} is not a whole number"))
}

pub fn now_us() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0)
}

/// Runs a worker with these arguments (without the program name).
pub fn main(argv: Vec<String>) -> ExitCode {
    let args = match parse(argv) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("amqp-worker: {e}");
            }
            eprintln!(
                "usage: amqp-worker --queue NAME [--uri URI] [--prefetch N] [--threads N] [--work-us N] [--max-priority N] [--fifo]"
            );
            return ExitCode::from(2);
        }
    };
    let mut builder = Executor::builder()
        .name("amqp-worker")
        .core_threads(args.threads)
        .max_threads(args.threads);
    builder = if args.fifo {
        builder.lane(Priority(1), Capacity::Bounded(1024))
    } else {
        builder
            .lane(Priority(10), Capacity::Bounded(1024))
            .lane(Priority(1), Capacity::Bounded(1024))
    };
    let exec = match builder.build() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("amqp-worker: {e}");
            return ExitCode::from(2);
        }
    };
    let table = if args.fifo {
        PriorityTable::new().map(0..=255, Priority(1))
    } else {
        PriorityTable::new()
            .map(0..=4, Priority(1))
            .map(5..=255, Priority(10))
    };
    let mut config = ConsumerConfig::new(&args.queue)
        .priorities(table)
        .prefetch(args.prefetch);
    if let Some(n) = args.max_priority {
        config = config.max_priority(n);
    }
    let work = args.work;
    let bridge = Bridge::builder(args.uri.as_str(), exec.clone())
        .consume(config, move |msg| {
            let start = now_us();
            let wait = msg
                .header("x-published-us")
                .and_then(|t| t.parse::<u128>().ok())
                .map(|t| start.saturating_sub(t))
                .unwrap_or(0);
            if !work.is_zero() {
                std::thread::sleep(work);
            }
            let line = format!(
                "done {} {} {} {} {}\n",
                msg.message_id().unwrap_or("-"),
                u8::from(msg.redelivered()),
                msg.lane(),
                wait,
                start
            );
            // One write per line, so lines of two threads never mix.
            std::io::stdout().lock().write_all(line.as_bytes())?;
            Ok(())
        })
        .on_event(|e| {
            // Losses and failures; not the routine connected / stopped.
            if !matches!(e, Event::Connected { .. } | Event::Stopped { .. }) {
                eprintln!("amqp-worker: {e:?}");
            }
        })
        .start();
    let bridge = match bridge {
        Ok(b) => b,
        Err(e) => {
            eprintln!("amqp-worker: {e}");
            return ExitCode::from(1);
        }
    };
    println!("ready");
    // Run until standard input closes.
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
    }
    let metrics = bridge.stop();
    let m = &metrics[0];
    println!("stopped {} {}", m.acked, m.delivered);
    ExitCode::SUCCESS
}
