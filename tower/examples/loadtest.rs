//! The visa server under a flood, in one process: with the handler on the
//! priority executor (this package's layer, executors.toml), and with the
//! same handler on tokio's `spawn_blocking` pool (FIFO), with as many
//! threads and as many requests in hand. A real HTTP client on loopback
//! sends both the same open-loop flood, above what their threads can
//! serve, a share of it with `PRIORITYID: ABC`; the run prints, per server
//! and class, the p50/p99 latency of the answered requests, the
//! throughput, and how many were shed (503).
//!
//! ```text
//! cargo run --release -p priority-executor-tower --example loadtest
//! cargo run --release -p priority-executor-tower --example loadtest -- \
//!     --seconds 8 --warmup 2 --work-ms 2 --overload 1.5 --priority-share 0.1 --repeat 1
//! ```
//!
//! Both servers run at once, each on a runtime of its own, and get the
//! same requests at the same instants, so that a load on the machine that
//! comes and goes weighs on both alike. Each has about half the cores;
//! `--overload` is relative to what that half serves. How the system
//! shares the cores between the two servers' threads still varies from
//! run to run on a busy machine, so (on Linux) the run also prints the
//! requests answered per CPU-second of each server's threads, which that
//! does not skew.
//!
//! `--seconds` is the length of a run, `--warmup` its first part, left out
//! of the figures (the queues fill meanwhile); throughput counts the 200s
//! answered within the measured window. `--repeat N` pools N runs.

#[path = "shared/visa.rs"]
mod visa;

use axum::Router;
use axum::routing::{post, post_service};
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use priority_executor_tower::PriorityLayer;
use std::error::Error;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tower::Layer;

struct Args {
    seconds: f64,
    warmup: f64,
    work_ms: f64,
    overload: f64,
    share: f64,
    repeat: u32,
}

impl Args {
    fn parse() -> Result<Args, String> {
        let mut args = Args {
            seconds: 8.0,
            warmup: 2.0,
            work_ms: 2.0,
            overload: 1.5,
            share: 0.1,
            repeat: 1,
        };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            if flag == "--repeat" {
                let value = it.next().ok_or("--repeat needs a value")?;
                args.repeat = value
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or(format!("--repeat: {value:?} is not a whole number above 0"))?;
                continue;
            }
            let slot = match flag.as_str() {
                "--seconds" => &mut args.seconds,
                "--warmup" => &mut args.warmup,
                "--work-ms" => &mut args.work_ms,
                "--overload" => &mut args.overload,
                "--priority-share" => &mut args.share,
                other => {
                    return Err(format!(
                        "unknown flag {other:?} (flags: --seconds, --warmup, --work-ms, --overload, --priority-share, --repeat)"
                    ));
                }
            };
            let value = it.next().ok_or(format!("{flag} needs a value"))?;
            *slot = value
                .parse()
                .map_err(|_| format!("{flag}: {value:?} is not a number"))?;
        }
        if !(args.seconds > args.warmup && args.warmup >= 0.0) {
            return Err(format!(
                "--seconds ({}) must be longer than --warmup ({}), which must not be negative",
                args.seconds, args.warmup
            ));
        }
        if !(args.work_ms > 0.0 && args.overload > 0.0 && (0.0..=1.0).contains(&args.share)) {
            return Err(
                "--work-ms and --overload must be positive, --priority-share between 0 and 1"
                    .into(),
            );
        }
        Ok(args)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Priority,
    Standard,
}

/// One request: when it was sent and answered (since the start of its
/// run), and its status (`None`: no answer, a client error).
struct Sample {
    class: Class,
    sent: Duration,
    done: Duration,
    status: Option<StatusCode>,
}

/// What one server did in the measured window.
struct Report {
    name: &'static str,
    classes: Vec<(Class, ClassReport)>,
    throughput: f64,
}

struct ClassReport {
    sent: usize,
    ok: usize,
    shed: usize,
    other: usize,
    p50_ms: f64,
    p99_ms: f64,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = Args::parse()?;
    let executors = visa::registry()?;
    let threads = executors.get(visa::EXECUTOR)?.config();
    let in_hand: usize = threads
        .lanes
        .iter()
        .map(|lane| lane.capacity.limit().unwrap_or(usize::MAX))
        .fold(0, usize::saturating_add);
    let threads = threads.max_threads;
    drop(executors);

    let rounds = visa::rounds_for(args.work_ms, visa::FORM);
    // Both servers run at once: each has about half the cores.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let share = (cores as f64 / 2.0).min(threads as f64);
    let rate = args.overload * share * 1000.0 / args.work_ms;
    println!(
        "visa load test: both servers at once, each with {threads} worker threads on {cores} cores; \
         {} ms of CPU per request ({rounds} rounds); each server offered {rate:.0} req/s \
         ({}x what half the cores serve), {:.0}% with PRIORITYID: ABC; {} run(s) of {} s, \
         the first {} s left out; at most {in_hand} requests in hand per server",
        args.work_ms,
        args.overload,
        args.share * 100.0,
        args.repeat,
        args.seconds,
        args.warmup,
    );

    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("client")
        .enable_all()
        .build()?;
    let (mut fifo_runs, mut lanes_runs) = (Vec::new(), Vec::new());
    // Each server's CPU time in the measured windows, if the system says.
    let mut cpu_ticks = Some([0u64; 2]);
    for _ in 0..args.repeat {
        let fifo = Running::start(|rt| {
            rt.max_blocking_threads(threads).thread_name("fifo-server");
            let busy = Arc::new(AtomicUsize::new(0));
            let app = Router::new().route(
                "/visa",
                post(move |body: Bytes| fifo_visa(body, rounds, Arc::clone(&busy), in_hand)),
            );
            Ok((app, None))
        })?;
        let lanes = Running::start(|rt| {
            rt.thread_name("lanes-server");
            let executors = visa::registry()?;
            let layer = PriorityLayer::from_registry(Arc::clone(&executors), visa::EXECUTOR)?;
            let app =
                Router::new().route("/visa", post_service(layer.layer(visa::handler(rounds))));
            Ok((app, Some(executors)))
        })?;
        let ([f, l], cpu) = client_rt.block_on(flood([fifo.addr, lanes.addr], &args, rate));
        fifo.stop()?;
        lanes.stop()?;
        for (name, samples) in [(FIFO, &f), (LANES, &l)] {
            let run = report(name, std::slice::from_ref(samples), &args);
            eprintln!("{name}: {:.0} req/s answered 200", run.throughput);
        }
        fifo_runs.push(f);
        lanes_runs.push(l);
        match (cpu, &mut cpu_ticks) {
            (Some([f, l]), Some([tf, tl])) => {
                *tf += f;
                *tl += l;
            }
            _ => cpu_ticks = None,
        }
    }
    let fifo = report(FIFO, &fifo_runs, &args);
    let lanes = report(LANES, &lanes_runs, &args);

    println!();
    println!(
        "{:<26} {:<9} {:>7} {:>7} {:>7} {:>6} {:>9} {:>9}",
        "server", "class", "sent", "200", "503", "other", "p50 ms", "p99 ms"
    );
    for report in [&fifo, &lanes] {
        for (class, c) in &report.classes {
            let class = match class {
                Class::Priority => "priority",
                Class::Standard => "standard",
            };
            println!(
                "{:<26} {class:<9} {:>7} {:>7} {:>7} {:>6} {:>9.1} {:>9.1}",
                report.name, c.sent, c.ok, c.shed, c.other, c.p50_ms, c.p99_ms
            );
        }
        println!(
            "{:<26} throughput {:.0} req/s answered 200",
            report.name, report.throughput
        );
    }
    let p99 = |r: &Report| {
        r.classes
            .iter()
            .find(|(class, _)| *class == Class::Priority)
            .map_or(f64::NAN, |(_, c)| c.p99_ms)
    };
    println!();
    println!(
        "priority p99: lanes {:.1} ms, FIFO {:.1} ms: ratio {:.3} (target <= 0.10)",
        p99(&lanes),
        p99(&fifo),
        p99(&lanes) / p99(&fifo)
    );
    println!(
        "throughput: lanes {:.0} req/s, FIFO {:.0} req/s: ratio {:.3} (target 0.95 to 1.05)",
        lanes.throughput,
        fifo.throughput,
        lanes.throughput / fifo.throughput
    );
    if let Some([f, l]) = cpu_ticks.filter(|t| t[0] > 0 && t[1] > 0) {
        // Per CPU-second of each server's threads: what a busy machine
        // that shares its cores unevenly between them does not skew.
        let window = args.repeat as f64 * (args.seconds - args.warmup);
        let (f, l) = (f as f64 / TICKS_PER_SEC, l as f64 / TICKS_PER_SEC);
        let (fe, le) = (fifo.throughput * window / f, lanes.throughput * window / l);
        println!(
            "answered 200 per CPU-second of the server's threads: lanes {le:.0} ({l:.1} CPU-s), \
             FIFO {fe:.0} ({f:.1} CPU-s): ratio {:.3}",
            le / fe
        );
    }
    if lanes.throughput == 0.0 || fifo.throughput == 0.0 {
        return Err("a server answered no request with 200".into());
    }
    Ok(())
}

/// The FIFO server's handler: the same work on tokio's blocking pool, with
/// at most `in_hand` requests accepted (the rest answered 503), as the
/// lanes hold at most their capacities.
async fn fifo_visa(
    body: Bytes,
    rounds: u64,
    busy: Arc<AtomicUsize>,
    in_hand: usize,
) -> (StatusCode, Bytes) {
    if busy.fetch_add(1, Ordering::AcqRel) >= in_hand {
        busy.fetch_sub(1, Ordering::AcqRel);
        return (StatusCode::SERVICE_UNAVAILABLE, Bytes::from_static(b"busy"));
    }
    let checked = tokio::task::spawn_blocking(move || visa::check_visa(&body, rounds)).await;
    busy.fetch_sub(1, Ordering::AcqRel);
    match checked {
        Ok(digest) => (
            StatusCode::OK,
            Bytes::from(format!("visa checked: {digest:016x}\n")),
        ),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Bytes::from_static(b"the check panicked"),
        ),
    }
}

type Setup = Box<dyn Error>;

const FIFO: &str = "spawn_blocking (FIFO)";
const LANES: &str = "priority-executor lanes";

/// A server on a runtime of its own, with what must live as long as it.
struct Running {
    addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    runtime: tokio::runtime::Runtime,
    keep: Option<Arc<priority_executor::Registry>>,
}

impl Running {
    /// Starts the server `make` builds (it may set up the runtime).
    fn start(
        make: impl FnOnce(
            &mut tokio::runtime::Builder,
        ) -> Result<(Router, Option<Arc<priority_executor::Registry>>), Setup>,
    ) -> Result<Running, Setup> {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(2).enable_all();
        let (app, keep) = make(&mut builder)?;
        let runtime = builder.build()?;
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = runtime.spawn(
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .into_future(),
        );
        Ok(Running {
            addr,
            stop,
            server,
            runtime,
            keep,
        })
    }

    /// Stops gracefully (every request answered), then the executor.
    fn stop(self) -> Result<(), Setup> {
        let _ = self.stop.send(());
        self.runtime.block_on(self.server)??;
        drop(self.keep);
        Ok(())
    }
}

/// Clock ticks of `/proc/*/stat` (USER_HZ, 100 on Linux).
const TICKS_PER_SEC: f64 = 100.0;

/// CPU time (user and system, in clock ticks) of each server's threads:
/// `fifo-server` (its runtime and blocking pool), and `lanes-server` with
/// the executor's workers. Linux only; `None` elsewhere.
fn cpu_ticks() -> Option<[u64; 2]> {
    // A thread's name as the system keeps it: at most 15 bytes.
    let executor = &visa::EXECUTOR[..visa::EXECUTOR.len().min(15)];
    let mut ticks = [0, 0];
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        let Ok(name) = std::fs::read_to_string(path.join("comm")) else {
            continue; // the thread has exited
        };
        let server = if name.starts_with("fifo-server") {
            0
        } else if name.starts_with("lanes-server") || name.starts_with(executor) {
            1
        } else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
            continue;
        };
        // After the name in parentheses: state is field 3; utime and stime
        // are fields 14 and 15.
        let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        ticks[server] += utime + stime;
    }
    Some(ticks)
}

/// Sends `rate` requests a second to each server for `args.seconds`, the
/// same requests to both, open loop: each on its own task at its time,
/// whatever the answers to earlier ones. Also returns each server's CPU
/// time in the measured window (after the warm-up, until the last send).
async fn flood(
    addrs: [SocketAddr; 2],
    args: &Args,
    rate: f64,
) -> ([Vec<Sample>; 2], Option<[u64; 2]>) {
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let total = (rate * args.seconds) as u64;
    let start = Instant::now();
    let mut requests = [
        Vec::with_capacity(total as usize),
        Vec::with_capacity(total as usize),
    ];
    let warmup = start + Duration::from_secs_f64(args.warmup);
    let mut cpu_at_warmup = None;
    for i in 0..total {
        if cpu_at_warmup.is_none() && Instant::now() >= warmup {
            cpu_at_warmup = Some(cpu_ticks());
        }
        tokio::time::sleep_until((start + Duration::from_secs_f64(i as f64 / rate)).into()).await;
        // Exactly `share` of the requests, spread evenly.
        let class = if ((i + 1) as f64 * args.share).floor() > (i as f64 * args.share).floor() {
            Class::Priority
        } else {
            Class::Standard
        };
        // Each server first in turn.
        for k in [i as usize % 2, (i as usize + 1) % 2] {
            let (client, addr) = (client.clone(), addrs[k]);
            requests[k].push(tokio::spawn(async move {
                let sent = start.elapsed();
                let status = send(&client, addr, class).await;
                Sample {
                    class,
                    sent,
                    done: start.elapsed(),
                    status,
                }
            }));
        }
    }
    let cpu = match (cpu_at_warmup.flatten(), cpu_ticks()) {
        (Some([f0, l0]), Some([f1, l1])) => Some([f1 - f0, l1 - l0]),
        _ => None,
    };
    let mut samples = [Vec::new(), Vec::new()];
    for (k, requests) in requests.into_iter().enumerate() {
        for request in requests {
            if let Ok(sample) = request.await {
                samples[k].push(sample);
            }
        }
    }
    (samples, cpu)
}

async fn send(
    client: &Client<HttpConnector, Full<Bytes>>,
    addr: SocketAddr,
    class: Class,
) -> Option<StatusCode> {
    let mut request = Request::post(format!("http://{addr}/visa"));
    if class == Class::Priority {
        request = request.header("PRIORITYID", "ABC");
    }
    let request = request
        .body(Full::new(Bytes::from_static(visa::FORM)))
        .ok()?;
    let response = client.request(request).await.ok()?;
    let status = response.status();
    response.into_body().collect().await.ok()?;
    Some(status)
}

/// Pools the measured windows of a server's runs.
fn report(name: &'static str, runs: &[Vec<Sample>], args: &Args) -> Report {
    let warmup = Duration::from_secs_f64(args.warmup);
    let end = Duration::from_secs_f64(args.seconds);
    let samples = || runs.iter().flatten();
    let measured: Vec<&Sample> = samples().filter(|s| s.sent >= warmup).collect();
    let classes = [Class::Priority, Class::Standard]
        .into_iter()
        .map(|class| {
            let of: Vec<&&Sample> = measured.iter().filter(|s| s.class == class).collect();
            let mut ok: Vec<f64> = of
                .iter()
                .filter(|s| s.status == Some(StatusCode::OK))
                .map(|s| (s.done - s.sent).as_secs_f64() * 1000.0)
                .collect();
            ok.sort_by(f64::total_cmp);
            let shed = of
                .iter()
                .filter(|s| s.status == Some(StatusCode::SERVICE_UNAVAILABLE))
                .count();
            let c = ClassReport {
                sent: of.len(),
                ok: ok.len(),
                shed,
                other: of.len() - ok.len() - shed,
                p50_ms: percentile(&ok, 0.50),
                p99_ms: percentile(&ok, 0.99),
            };
            (class, c)
        })
        .collect();
    let answered = samples()
        .filter(|s| s.status == Some(StatusCode::OK) && s.done >= warmup && s.done < end)
        .count();
    Report {
        name,
        classes,
        throughput: answered as f64 / (runs.len() as f64 * (args.seconds - args.warmup)),
    }
}

/// The `q` quantile of sorted values (nearest rank); NaN if there are none.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
