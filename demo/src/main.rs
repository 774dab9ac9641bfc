//! The floodgate: after a holiday, a backlog of standard visa applications
//! and a smaller number of priority ones arrive at once. A priority executor
//! with lanes 10 and 1 serves them ten to one, so priority applications are
//! not kept waiting behind the flood; a plain FIFO pool serves them in
//! arrival order. Both runs are timed from inside the jobs, printed as a
//! table per lane and drawn as an SVG chart.
//!
//! ```text
//! cargo run --release -p priority-executor-demo
//! cargo run --release -p priority-executor-demo -- --jobs 2000 --picker classic --svg /tmp/f.svg
//! ```
//!
//! The executor is `visa_priority_exec` from `executors.toml` (its lanes,
//! weights, capacities and picker), run on one thread per core (`--threads`)
//! so the flood meets a busy pool; the FIFO pool gets as many threads. Each
//! application is a call to an external service, simulated by blocking the
//! worker for `--work-us` microseconds, so the figures depend on the thread
//! count, not on what else the machine is doing.

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use plotters::prelude::*;
use priority_executor::{Capacity, Executor, Executors, LaneConfig, MaxRunning, Picker, Priority};

const USAGE: &str = "\
usage: floodgate [OPTIONS]

Floods a priority executor with standard and priority visa applications,
then runs the same flood on a plain FIFO pool for contrast.

options:
  --jobs N           applications in the flood (default 4000)
  --ratio N          standard applications per priority one (default 4)
  --work-us N        microseconds each application takes (default 2000)
  --picker NAME      smooth | classic | strict (default: the executor's own)
  --threads N        worker threads, for the executor (its core and max) and
                     for the FIFO pool (default: one per core)
  --reserve N        reserved workers: keep N threads for the higher lanes by
                     capping the lowest lane at threads - N running jobs
                     (max_running); default: no cap
  --config PATH      executors file (default: executors.toml at the repository
                     root if present, else a built-in visa_priority_exec:
                     lanes 10 and 1, unbounded)
  --executor NAME    executor to use from the file (default visa_priority_exec);
                     its lanes and picker are the file's, its threads --threads
  --svg PATH         where to write the chart (default floodgate.svg)
  --no-progress      no progress bars (also off when stdout is not a terminal)
  -h, --help         this text";

const DEFAULT_EXECUTOR: &str = "visa_priority_exec";

// ===== command line =====

#[derive(Debug)]
struct Options {
    jobs: usize,
    ratio: usize,
    work: Duration,
    picker: Option<Picker>,
    threads: usize,
    reserve: Option<usize>,
    config: Option<PathBuf>,
    executor: String,
    svg: PathBuf,
    progress: bool,
}

/// A command line that could not be understood: the message names the flag.
#[derive(Debug)]
struct UsageError(String);

enum Parsed {
    Run(Options),
    Help,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Parsed, UsageError> {
    let mut options = Options {
        jobs: 4000,
        ratio: 4,
        work: Duration::from_micros(2000),
        picker: None,
        threads: cores(),
        reserve: None,
        config: None,
        executor: DEFAULT_EXECUTOR.to_string(),
        svg: PathBuf::from("floodgate.svg"),
        progress: true,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // Both `--flag value` and `--flag=value`.
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_string(), Some(value.to_string()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<String, UsageError> {
            match inline.clone().or_else(|| args.next()) {
                Some(v) => Ok(v),
                None => Err(UsageError(format!("{flag} needs a value ({what})"))),
            }
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--jobs" => options.jobs = positive(&flag, &value("a whole number of applications")?)?,
            "--ratio" => {
                options.ratio = positive(&flag, &value("standard applications per priority one")?)?
            }
            "--work-us" => {
                let raw = value("microseconds")?;
                let us: u64 = raw.parse().map_err(|_| {
                    UsageError(format!(
                        "{flag}: '{raw}' is not a whole number of microseconds"
                    ))
                })?;
                options.work = Duration::from_micros(us);
            }
            "--picker" => {
                let raw = value("smooth, classic or strict")?;
                let picker = raw
                    .parse::<Picker>()
                    .map_err(|e| UsageError(format!("{flag}: {e}")))?;
                options.picker = Some(picker);
            }
            "--threads" => options.threads = positive(&flag, &value("a thread count")?)?,
            "--reserve" => options.reserve = Some(positive(&flag, &value("a thread count")?)?),
            "--config" => options.config = Some(PathBuf::from(value("a file path")?)),
            "--executor" => options.executor = value("an executor name")?,
            "--svg" => options.svg = PathBuf::from(value("a file path")?),
            "--no-progress" if inline.is_none() => options.progress = false,
            "--no-progress" => {
                return Err(UsageError(format!("{flag} takes no value")));
            }
            _ => return Err(UsageError(format!("unknown argument '{arg}'"))),
        }
    }
    if let Some(reserve) = options.reserve
        && reserve >= options.threads
    {
        return Err(UsageError(format!(
            "--reserve: {reserve} must be fewer than the {} threads, or the lowest lane could never run",
            options.threads
        )));
    }
    Ok(Parsed::Run(options))
}

fn positive(flag: &str, raw: &str) -> Result<usize, UsageError> {
    match raw.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(UsageError(format!(
            "{flag}: '{raw}' is not a whole number greater than zero"
        ))),
    }
}

// ===== the executor under test =====

/// The built-in `visa_priority_exec`: the seed's two lanes, priority 10 and
/// 1, on `threads` threads. The lanes are unbounded
/// so the whole backlog is queued at once, as it is in the seed.
fn default_executor(
    picker: Option<Picker>,
    threads: usize,
    reserve: Option<usize>,
) -> Result<Executor, String> {
    let mut low = LaneConfig::new(Priority(1));
    if let Some(reserve) = reserve {
        low = low.max_running(MaxRunning::Threads(threads - reserve));
    }
    Executor::builder()
        .name(DEFAULT_EXECUTOR)
        .core_threads(threads)
        .max_threads(threads)
        .keep_alive(Duration::from_secs(5))
        .picker(picker.unwrap_or_default())
        .lane(Priority(10), Capacity::Unbounded)
        .lane_config(low)
        .build()
        .map_err(|e| format!("built-in executor {DEFAULT_EXECUTOR}: {e}"))
}

/// The executor the flood goes to, and what owns it.
enum Source {
    BuiltIn(Executor),
    File { executors: Executors, name: String },
}

impl Source {
    fn executor(&self) -> &Executor {
        match self {
            Source::BuiltIn(executor) => executor,
            Source::File { executors, name } => executors
                .get(name)
                .expect("the name was looked up when the file was loaded"),
        }
    }

    fn shutdown(self) {
        match self {
            Source::BuiltIn(executor) => executor.shutdown(),
            Source::File { executors, .. } => executors.shutdown(),
        }
    }
}

/// `--config PATH`, else `executors.toml` at the repository root if there is
/// one, else the built-in executor. Returns the executor and where it came
/// from.
fn executor_for(options: &Options) -> Result<(Source, String), String> {
    let file = match &options.config {
        Some(path) => Some(path.clone()),
        None => Some(repository_config()).filter(|path| path.is_file()),
    };
    let Some(path) = file else {
        if options.executor != DEFAULT_EXECUTOR {
            return Err(format!(
                "--executor: no executor named '{}' (no executors file; built-in: {DEFAULT_EXECUTOR})",
                options.executor
            ));
        }
        return Ok((
            Source::BuiltIn(default_executor(
                options.picker,
                options.threads,
                options.reserve,
            )?),
            "built-in".to_string(),
        ));
    };
    let executors = Executors::from_path(&path).map_err(|e| e.to_string())?;
    if executors.get(&options.executor).is_none() {
        let names: Vec<&str> = executors.names().collect();
        let message = format!(
            "--executor: {} has no executor named '{}' (it has: {})",
            path.display(),
            options.executor,
            names.join(", ")
        );
        executors.shutdown();
        return Err(message);
    }
    // The file is valid as it stands; run its executor with the thread
    // count (and picker) of the command line, so the flood meets a pool
    // that is busy, as after a holiday, and the FIFO pool gets as many.
    executors.shutdown();
    let executors = with_overrides(
        &path,
        &options.executor,
        options.picker,
        options.threads,
        options.reserve,
    )?;
    Ok((
        Source::File {
            executors,
            name: options.executor.clone(),
        },
        path.display().to_string(),
    ))
}

/// `executors.toml` at the repository root: the demo's package is the
/// folder `demo/` in it.
fn repository_config() -> PathBuf {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR"));
    demo.parent().unwrap_or(demo).join("executors.toml")
}

/// The executors file at `path` with executor `name` set to `threads`
/// threads (core and max) and, if given, `picker`.
fn with_overrides(
    path: &Path,
    name: &str,
    picker: Option<Picker>,
    threads: usize,
    reserve: Option<usize>,
) -> Result<Executors, String> {
    let at = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{at}: {e}"))?;
    let mut doc: toml::Table = text.parse().map_err(|e| format!("{at}: {e}"))?;
    let table = doc
        .get_mut("executors")
        .and_then(|e| e.get_mut(name))
        .and_then(toml::Value::as_table_mut)
        .ok_or_else(|| format!("{at}: no table [executors.{name}]"))?;
    let threads =
        i64::try_from(threads).map_err(|_| format!("--threads: {threads} is too many"))?;
    table.insert("core_threads".into(), toml::Value::Integer(threads));
    table.insert("max_threads".into(), toml::Value::Integer(threads));
    if let Some(picker) = picker {
        table.insert("picker".into(), toml::Value::String(picker.as_str().into()));
    }
    if let Some(reserve) = reserve {
        // Cap the lowest lane so `reserve` threads stay for the others.
        let cap = threads - i64::try_from(reserve).unwrap_or(threads);
        let lowest = table
            .get_mut("lanes")
            .and_then(toml::Value::as_array_mut)
            .and_then(|lanes| {
                lanes.iter_mut().min_by_key(|lane| {
                    lane.get("priority")
                        .and_then(toml::Value::as_integer)
                        .unwrap_or(i64::MAX)
                })
            })
            .and_then(toml::Value::as_table_mut)
            .ok_or_else(|| format!("{at}: executor {name} has no lanes to cap"))?;
        lowest.insert("max_running".into(), toml::Value::Integer(cap));
    }
    Executors::from_toml_str(&doc.to_string())
        .map_err(|e| format!("{at} with the command line's threads and picker: {e}"))
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

// ===== recording =====

/// When each application was submitted, started and finished, in
/// nanoseconds since the flood began. Written once per slot.
struct Timeline {
    epoch: Instant,
    submitted: Vec<AtomicU64>,
    started: Vec<AtomicU64>,
    finished: Vec<AtomicU64>,
}

impl Timeline {
    fn new(jobs: usize) -> Timeline {
        let zeros = || (0..jobs).map(|_| AtomicU64::new(0)).collect();
        Timeline {
            epoch: Instant::now(),
            submitted: zeros(),
            started: zeros(),
            finished: zeros(),
        }
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
}

/// The two classes of the flood.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Priority,
    Standard,
}

impl Class {
    fn label(self) -> &'static str {
        match self {
            Class::Priority => "priority",
            Class::Standard => "standard",
        }
    }
}

/// Which application is which: one priority application after every
/// `ratio` standard ones.
fn classes(jobs: usize, ratio: usize) -> Vec<Class> {
    (0..jobs)
        .map(|i| {
            if i % (ratio + 1) == ratio {
                Class::Priority
            } else {
                Class::Standard
            }
        })
        .collect()
}

type Job = Box<dyn FnOnce() + Send>;

/// What became of an application offered to a target.
enum Offer {
    Taken,
    /// Its lane is full: the application comes back, to be offered again.
    Full(Job),
}

/// Anything that can take the flood: the executor or the FIFO pool.
trait Target: Sync {
    /// Offers a job without waiting for room.
    fn offer(&self, class: Class, job: Job) -> Result<Offer, String>;
    /// Submits a job, waiting for room in its lane if need be.
    fn submit(&self, class: Class, job: Job) -> Result<(), String>;
    /// Returns once every submitted job has run; an error if one did not
    /// complete.
    fn finish(&self) -> Result<(), String>;
}

struct PriorityTarget<'a> {
    executor: &'a Executor,
    high: Priority,
    low: Priority,
    handles: std::sync::Mutex<Vec<priority_executor::JobHandle<()>>>,
}

impl PriorityTarget<'_> {
    fn priority(&self, class: Class) -> Priority {
        match class {
            Class::Priority => self.high,
            Class::Standard => self.low,
        }
    }

    fn keep(&self, handle: priority_executor::JobHandle<()>) {
        self.handles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(handle);
    }
}

impl Target for PriorityTarget<'_> {
    fn offer(&self, class: Class, job: Job) -> Result<Offer, String> {
        match self.executor.try_enqueue(self.priority(class), job) {
            Ok(handle) => {
                self.keep(handle);
                Ok(Offer::Taken)
            }
            Err(e) if e.is_full() => Ok(Offer::Full(e.into_inner())),
            Err(e) => Err(format!("enqueue: {e}")),
        }
    }

    fn submit(&self, class: Class, job: Job) -> Result<(), String> {
        let handle = self
            .executor
            .enqueue(self.priority(class), job)
            .map_err(|e| format!("enqueue: {e}"))?;
        self.keep(handle);
        Ok(())
    }

    fn finish(&self) -> Result<(), String> {
        let handles = std::mem::take(&mut *self.handles.lock().unwrap_or_else(|e| e.into_inner()));
        let failed = handles
            .into_iter()
            .map(|handle| handle.join())
            .filter(Result::is_err)
            .count();
        match failed {
            0 => Ok(()),
            n => Err(format!(
                "{n} applications did not complete on the priority executor"
            )),
        }
    }
}

struct FifoTarget(threadpool::ThreadPool);

impl Target for FifoTarget {
    fn offer(&self, class: Class, job: Job) -> Result<Offer, String> {
        self.submit(class, job).map(|()| Offer::Taken)
    }

    fn submit(&self, _class: Class, job: Job) -> Result<(), String> {
        self.0.execute(job);
        Ok(())
    }

    fn finish(&self) -> Result<(), String> {
        self.0.join();
        match self.0.panic_count() {
            0 => Ok(()),
            n => Err(format!("{n} applications panicked on the FIFO pool")),
        }
    }
}

/// Floods `target` with `classes`, in that order, from one inbox, then waits
/// until every job has run. Each application's wait counts from the moment
/// it arrived. When a class's lane is full (a bounded lane, as in
/// `executors.toml`), that class's applications are held back in arrival
/// order and offered again as the lane drains, while the other class keeps
/// flowing: a full standard lane must not hold up priority applications.
fn flood(
    target: &dyn Target,
    classes: &[Class],
    work: Duration,
    bars: &[ProgressBar; 2],
) -> Result<Timeline, String> {
    let timeline = Arc::new(Timeline::new(classes.len()));
    let mut held: [VecDeque<Job>; 2] = [VecDeque::new(), VecDeque::new()];
    for (i, &class) in classes.iter().enumerate() {
        let record = Arc::clone(&timeline);
        let bar = bars[class as usize].clone();
        record.submitted[i].store(record.now(), Ordering::Relaxed);
        let job: Job = Box::new(move || {
            record.started[i].store(record.now(), Ordering::Relaxed);
            std::thread::sleep(work);
            record.finished[i].store(record.now(), Ordering::Relaxed);
            bar.inc(1);
        });
        let queue = &mut held[class as usize];
        queue.push_back(job);
        // Offer this class's held applications, oldest first, until its
        // lane is full again.
        while let Some(job) = queue.pop_front() {
            if let Offer::Full(job) = target.offer(class, job)? {
                queue.push_front(job);
                break;
            }
        }
    }
    // The flood has arrived; what is still held waits for room.
    for (class, queue) in [Class::Priority, Class::Standard].into_iter().zip(held) {
        for job in queue {
            target.submit(class, job)?;
        }
    }
    target.finish()?;
    for bar in bars {
        bar.finish();
    }
    Arc::into_inner(timeline).ok_or_else(|| "jobs still hold the timeline".to_string())
}

// ===== statistics =====

struct LaneStats {
    jobs: usize,
    /// Share of the dispatches made while both classes had applications
    /// waiting.
    contended_share: f64,
    p50: Duration,
    p95: Duration,
    p99: Duration,
    /// When the class's last application finished, since the flood began.
    done_at: Duration,
    /// Cumulative completions: (seconds since the flood began, % of class).
    curve: Vec<(f64, f64)>,
}

fn quantile(sorted: &[u64], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Duration::from_nanos(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn stats(timeline: &Timeline, classes: &[Class]) -> [LaneStats; 2] {
    let load = |v: &Vec<AtomicU64>, i: usize| v[i].load(Ordering::Relaxed);
    let of = |class: Class| -> Vec<usize> {
        (0..classes.len())
            .filter(|&i| classes[i] == class)
            .collect()
    };

    // Dispatches in start order; a dispatch counts as contended when, at its
    // start, the other class also had an application submitted and not yet
    // started.
    let mut dispatches: Vec<usize> = (0..classes.len()).collect();
    dispatches.sort_by_key(|&i| load(&timeline.started, i));
    let sorted_times = |class: Class, v: &Vec<AtomicU64>| -> Vec<u64> {
        let mut t: Vec<u64> = of(class).into_iter().map(|i| load(v, i)).collect();
        t.sort_unstable();
        t
    };
    let submits = [
        sorted_times(Class::Priority, &timeline.submitted),
        sorted_times(Class::Standard, &timeline.submitted),
    ];
    let starts = [
        sorted_times(Class::Priority, &timeline.started),
        sorted_times(Class::Standard, &timeline.started),
    ];
    let waiting = |lane: usize, t: u64| {
        let submitted = submits[lane].partition_point(|&s| s <= t);
        let started = starts[lane].partition_point(|&s| s < t);
        submitted.saturating_sub(started)
    };
    let mut contended = [0usize; 2];
    for &i in &dispatches {
        let lane = classes[i] as usize;
        if waiting(1 - lane, load(&timeline.started, i)) > 0 {
            contended[lane] += 1;
        }
    }
    let contended_total = (contended[0] + contended[1]).max(1) as f64;

    [Class::Priority, Class::Standard].map(|class| {
        let ids = of(class);
        let mut waits: Vec<u64> = ids
            .iter()
            .map(|&i| load(&timeline.started, i).saturating_sub(load(&timeline.submitted, i)))
            .collect();
        waits.sort_unstable();
        let mut finishes: Vec<u64> = ids.iter().map(|&i| load(&timeline.finished, i)).collect();
        finishes.sort_unstable();
        // A few hundred points draw the same curve as thousands.
        let step = (finishes.len() / 400).max(1);
        let mut curve: Vec<(f64, f64)> = vec![(0.0, 0.0)];
        for (n, &t) in finishes.iter().enumerate() {
            if n % step == step - 1 || n + 1 == finishes.len() {
                curve.push((
                    t as f64 / 1e9,
                    100.0 * (n + 1) as f64 / finishes.len() as f64,
                ));
            }
        }
        LaneStats {
            jobs: ids.len(),
            contended_share: contended[class as usize] as f64 / contended_total,
            p50: quantile(&waits, 0.50),
            p95: quantile(&waits, 0.95),
            p99: quantile(&waits, 0.99),
            done_at: Duration::from_nanos(finishes.last().copied().unwrap_or(0)),
            curve,
        }
    })
}

fn fmt_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1e3)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

fn print_table(title: &str, lanes: &[(&str, String); 2], stats: &[LaneStats; 2]) {
    println!("{title}");
    println!(
        "  {:<10} {:>8} {:>6} {:>9} {:>10} {:>10} {:>10} {:>10}",
        "class", "priority", "jobs", "share*", "p50 wait", "p95 wait", "p99 wait", "done at"
    );
    for ((label, priority), s) in lanes.iter().zip(stats) {
        println!(
            "  {:<10} {:>8} {:>6} {:>8.1}% {:>10} {:>10} {:>10} {:>10}",
            label,
            priority,
            s.jobs,
            100.0 * s.contended_share,
            fmt_duration(s.p50),
            fmt_duration(s.p95),
            fmt_duration(s.p99),
            fmt_duration(s.done_at)
        );
    }
}

// ===== chart =====

fn chart(path: &Path, runs: &[(&str, &[LaneStats; 2])]) -> Result<(), String> {
    let x_max = runs
        .iter()
        .flat_map(|(_, s)| s.iter().map(|l| l.done_at.as_secs_f64()))
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.02;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create the chart's folder: {e}", dir.display()))?;
    }
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Floodgate: applications completed over time",
                ("sans-serif", 22),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..x_max, 0.0..100.0)?;
        chart
            .configure_mesh()
            .x_desc("seconds since the flood arrived")
            .y_desc("% of the class completed")
            .y_label_formatter(&|v| format!("{v:.0}%"))
            .draw()?;
        // The executor's classes solid, the FIFO pool's dashed in other
        // colours (on a FIFO pool the two classes' curves lie on top of
        // each other).
        let colours = [
            [RED, BLUE],
            [RGBColor(230, 140, 0), RGBColor(100, 100, 100)],
        ];
        for (run, (name, stats)) in runs.iter().enumerate() {
            for (lane, s) in stats.iter().enumerate() {
                let style = colours[run.min(1)][lane].stroke_width(if run == 0 { 3 } else { 2 });
                let label = format!(
                    "{} ({name})",
                    [Class::Priority, Class::Standard][lane].label()
                );
                let points = s.curve.iter().copied();
                let drawn = if run == 0 {
                    chart.draw_series(LineSeries::new(points, style))?
                } else {
                    chart.draw_series(DashedLineSeries::new(points, 8, 6, style))?
                };
                drawn
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| format!("{}: cannot write the chart: {e}", path.display()))
}

// ===== main =====

fn progress_bars(multi: &MultiProgress, title: &str, counts: [usize; 2]) -> [ProgressBar; 2] {
    let style = ProgressStyle::with_template(
        "{prefix:<28} [{bar:36.cyan/blue}] {pos:>6}/{len:<6} {elapsed_precise}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    [Class::Priority, Class::Standard].map(|class| {
        let bar = multi.add(ProgressBar::new(counts[class as usize] as u64));
        bar.set_style(style.clone());
        bar.set_prefix(format!("{title}: {}", class.label()));
        bar
    })
}

fn run(options: &Options) -> Result<(), String> {
    let (owner, source) = executor_for(options)?;
    let executor = owner.executor();
    let priorities = executor.priorities();
    let (high, low) = match (priorities.first(), priorities.last()) {
        (Some(&h), Some(&l)) if h != l => (h, l),
        _ => {
            return Err(format!(
                "executor '{}' needs at least two lanes, it has {}",
                executor.name(),
                priorities.len()
            ));
        }
    };
    let classes = classes(options.jobs, options.ratio);
    let counts =
        [Class::Priority, Class::Standard].map(|c| classes.iter().filter(|&&x| x == c).count());
    let weights: Vec<u32> = executor
        .metrics()
        .lanes
        .iter()
        .filter(|l| l.priority == high || l.priority == low)
        .map(|l| l.weight)
        .collect();
    let configured = match weights.as_slice() {
        [h, l] => 100.0 * f64::from(*h) / f64::from(h + l),
        _ => f64::NAN,
    };

    let multi =
        MultiProgress::with_draw_target(if options.progress && std::io::stdout().is_terminal() {
            ProgressDrawTarget::stdout()
        } else {
            ProgressDrawTarget::hidden()
        });

    println!(
        "After the holiday, {} visa applications arrive at once: {} priority, {} standard, \
         {} us of processing each.",
        options.jobs,
        counts[0],
        counts[1],
        options.work.as_micros()
    );
    println!(
        "Executor {} ({source}): lanes {}, picker {}, {} threads.",
        executor.name(),
        priorities
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" and "),
        executor.picker(),
        options.threads
    );
    for lane in &executor.metrics().lanes {
        if let Some(cap) = lane.max_running {
            println!(
                "Reserved workers: lane {} runs at most {cap} of the {} threads at once.",
                lane.priority, options.threads
            );
        }
    }

    let name = executor.name().to_string();
    let target = PriorityTarget {
        executor,
        high,
        low,
        handles: std::sync::Mutex::new(Vec::with_capacity(classes.len())),
    };
    let bars = progress_bars(&multi, "priority executor", counts);
    let timeline = flood(&target, &classes, options.work, &bars)?;
    let threads = options.threads;
    let picker = executor.picker().as_str();
    drop(target);
    owner.shutdown();
    let executor_stats = stats(&timeline, &classes);

    let fifo = FifoTarget(threadpool::ThreadPool::new(threads));
    let bars = progress_bars(&multi, "FIFO pool", counts);
    let timeline = flood(&fifo, &classes, options.work, &bars)?;
    let fifo_stats = stats(&timeline, &classes);
    multi.clear().ok();

    println!();
    print_table(
        &format!("{name}, picker {picker}, {threads} threads"),
        &[
            ("priority", high.to_string()),
            ("standard", low.to_string()),
        ],
        &executor_stats,
    );
    println!();
    print_table(
        &format!("plain FIFO pool (threadpool crate), {threads} threads"),
        &[("priority", "-".to_string()), ("standard", "-".to_string())],
        &fifo_stats,
    );
    println!();
    println!(
        "* share of the dispatches made while both classes had applications waiting \
         (configured: {configured:.1}% priority)"
    );
    let (ours, theirs) = (executor_stats[0].done_at, fifo_stats[0].done_at);
    println!(
        "last priority application done after {} on the priority executor, {} on the FIFO pool",
        fmt_duration(ours),
        fmt_duration(theirs)
    );
    let (ours, theirs) = (executor_stats[0].p99, fifo_stats[0].p99);
    if ours > Duration::ZERO {
        println!(
            "priority p99 wait: {} on the priority executor, {} on the FIFO pool ({:.1}x shorter)",
            fmt_duration(ours),
            fmt_duration(theirs),
            theirs.as_secs_f64() / ours.as_secs_f64()
        );
    }

    chart(
        &options.svg,
        &[
            ("priority executor", &executor_stats),
            ("FIFO pool", &fifo_stats),
        ],
    )?;
    println!("chart: {}", options.svg.display());
    Ok(())
}

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1)) {
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Parsed::Run(options)) => match run(&options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("floodgate: {e}");
                ExitCode::FAILURE
            }
        },
        Err(UsageError(e)) => {
            eprintln!("floodgate: {e}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Parsed, UsageError> {
        parse_args(args.iter().map(|a| a.to_string()))
    }

    fn error(args: &[&str]) -> String {
        match parse(args) {
            Err(UsageError(e)) => e,
            Ok(_) => panic!("{args:?} should be refused"),
        }
    }

    #[test]
    fn flags_and_defaults() {
        let Ok(Parsed::Run(o)) = parse(&[
            "--jobs",
            "10",
            "--ratio=3",
            "--picker",
            "strict",
            "--no-progress",
        ]) else {
            panic!("valid flags refused");
        };
        assert_eq!(
            (o.jobs, o.ratio, o.picker, o.progress),
            (10, 3, Some(Picker::Strict), false)
        );
        assert_eq!(o.work, Duration::from_micros(2000));
        assert_eq!(o.executor, DEFAULT_EXECUTOR);
        assert!(matches!(parse(&["-h"]), Ok(Parsed::Help)));
    }

    #[test]
    fn usage_errors_name_the_flag_and_value() {
        assert!(error(&["--jobs"]).starts_with("--jobs needs a value"));
        assert!(error(&["--jobs", "0"]).contains("--jobs: '0'"));
        assert!(error(&["--ratio", "x"]).contains("--ratio: 'x'"));
        assert!(error(&["--work-us", "-5"]).contains("--work-us: '-5'"));
        assert!(error(&["--picker", "fair"]).contains("--picker"));
        assert!(error(&["--no-progress=yes"]).contains("--no-progress takes no value"));
        assert!(error(&["--frobnicate"]).contains("'--frobnicate'"));
    }

    #[test]
    fn reserve_must_leave_the_lowest_lane_a_thread() {
        assert!(error(&["--threads", "2", "--reserve", "2"]).contains("--reserve"));
        assert!(error(&["--reserve", "0"]).contains("--reserve"));
        match parse(&["--threads", "4", "--reserve", "1"]) {
            Ok(Parsed::Run(o)) => assert_eq!(o.reserve, Some(1)),
            Ok(Parsed::Help) => panic!("parsed as --help"),
            Err(UsageError(e)) => panic!("{e}"),
        }
    }

    #[test]
    fn the_command_line_sets_the_files_picker_and_threads() {
        let path = repository_config();
        let executors =
            match with_overrides(&path, DEFAULT_EXECUTOR, Some(Picker::Classic), 3, Some(1)) {
                Ok(executors) => executors,
                Err(e) => panic!("{e}"),
            };
        let executor = executors.get(DEFAULT_EXECUTOR).expect("the visa executor");
        assert_eq!(executor.picker(), Picker::Classic);
        assert_eq!(executor.priorities(), [Priority(10), Priority(1)]);
        // --reserve 1 on 3 threads caps the lowest lane at 2 running jobs.
        let metrics = executor.metrics();
        assert_eq!(
            metrics.lane(Priority(1)).and_then(|l| l.max_running),
            Some(2)
        );
        assert_eq!(metrics.lane(Priority(10)).and_then(|l| l.max_running), None);
        executors.shutdown();
        let err = with_overrides(&path, "nope", None, 2, None)
            .err()
            .unwrap_or_default();
        assert!(err.contains("no table [executors.nope]"), "{err}");
    }

    #[test]
    fn one_priority_application_per_ratio_standard_ones() {
        let c = classes(10, 4);
        assert_eq!(c.iter().filter(|&&x| x == Class::Priority).count(), 2);
        assert_eq!(c[4], Class::Priority);
        assert_eq!(c[9], Class::Priority);
    }

    #[test]
    fn shares_count_only_dispatches_while_both_classes_wait() {
        // Four applications offered at t=0; the priority ones start first,
        // so the last standard start (t=4) has no priority one waiting.
        let classes = [
            Class::Priority,
            Class::Standard,
            Class::Priority,
            Class::Standard,
        ];
        let timeline = Timeline::new(4);
        for (i, start) in [1u64, 3, 2, 4].into_iter().enumerate() {
            timeline.started[i].store(start, Ordering::Relaxed);
            timeline.finished[i].store(start + 1, Ordering::Relaxed);
        }
        let [priority, standard] = stats(&timeline, &classes);
        // Dispatches at t=1, 2 (priority, standard waiting) and t=3
        // (standard, nothing of priority waiting any more).
        assert_eq!(priority.contended_share, 1.0);
        assert_eq!(standard.contended_share, 0.0);
        assert_eq!(priority.p99, Duration::from_nanos(2));
        assert_eq!(standard.done_at, Duration::from_nanos(5));
    }
}
