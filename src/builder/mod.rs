//! Building an executor: lanes, picker and thread settings, checked once.

mod build;

use crate::executor::Executor;
use crate::hooks::{DeadJob, ExpiredJob, Hooks, JobInfo, JobOutcome, ThreadSettings};
use crate::lane::config::LaneConfig;
use crate::lane::picker::Picker;
use crate::priority::{Capacity, Priority};
use std::sync::Arc;
use std::time::Duration;

/// The default keep-alive of threads above `core_threads`.
pub(crate) const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(60);

/// Settings for an [`Executor`], checked by [`build`](ExecutorBuilder::build).
///
/// Defaults: name `"priority-executor"`, `core_threads` = the number of
/// CPUs (lowered to `max_threads` when only that is set, so a program
/// builds the same on any machine), `max_threads` = `max(core_threads,
/// CPUs)`, keep-alive 60 s, core threads never time out,
/// [`Picker::Smooth`].
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, LaneConfig, Picker, Priority};
/// use std::time::Duration;
///
/// let exec = Executor::builder()
///     .name("visa")
///     .core_threads(2)
///     .max_threads(8)
///     .keep_alive(Duration::from_secs(5))
///     .lane(Priority(10), Capacity::Bounded(100))
///     .lane_config(LaneConfig::new(Priority(1)).weight(1))
///     .picker(Picker::Smooth)
///     .build()?;
/// assert_eq!(exec.name(), "visa");
/// # Ok::<(), priority_executor::BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until .build() is called"]
pub struct ExecutorBuilder {
    name: String,
    core_threads: Option<usize>,
    max_threads: Option<usize>,
    keep_alive: Duration,
    allow_core_timeout: bool,
    picker: Picker,
    lanes: Vec<LaneConfig>,
    hooks: Hooks,
    threads: ThreadSettings,
    record_waits: bool,
}

impl Executor {
    /// Starts configuring an executor.
    ///
    /// # Examples
    ///
    /// See [`ExecutorBuilder`].
    pub fn builder() -> ExecutorBuilder {
        ExecutorBuilder {
            name: "priority-executor".to_owned(),
            core_threads: None,
            max_threads: None,
            keep_alive: DEFAULT_KEEP_ALIVE,
            allow_core_timeout: false,
            picker: Picker::default(),
            lanes: Vec::new(),
            hooks: Hooks::default(),
            threads: ThreadSettings::default(),
            record_waits: false,
        }
    }
}

impl ExecutorBuilder {
    /// The executor's name; worker threads are named `"{name}-{n}"`.
    ///
    /// # Examples
    ///
    /// See [`ExecutorBuilder`].
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Threads kept alive while idle (unless
    /// [`allow_core_timeout`](Self::allow_core_timeout)). They start on
    /// demand, one per job while fewer are alive, or all at once with
    /// [`Executor::prestart_core_threads`](crate::Executor::prestart_core_threads). May be 0.
    ///
    /// # Examples
    ///
    /// See [`ExecutorBuilder`].
    pub fn core_threads(mut self, n: usize) -> Self {
        self.core_threads = Some(n);
        self
    }

    /// The most threads the pool grows to. A thread is added whenever a job
    /// is queued and no worker is idle, up to this limit.
    ///
    /// # Examples
    ///
    /// See [`ExecutorBuilder`].
    pub fn max_threads(mut self, n: usize) -> Self {
        self.max_threads = Some(n);
        self
    }

    /// How long a thread above `core_threads` may stay idle before it exits.
    ///
    /// # Examples
    ///
    /// See [`ExecutorBuilder`].
    pub fn keep_alive(mut self, keep_alive: Duration) -> Self {
        self.keep_alive = keep_alive;
        self
    }

    /// Let core threads exit after the keep-alive too (Java's
    /// `allowCoreThreadTimeOut`), so an idle executor holds no thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .allow_core_timeout(true)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// # drop(exec);
    /// ```
    pub fn allow_core_timeout(mut self, allow: bool) -> Self {
        self.allow_core_timeout = allow;
        self
    }

    /// Adds a lane whose weight is its priority (as in Synapse): short for
    /// `.lane_config(LaneConfig::new(priority).capacity(capacity))`.
    ///
    /// The weight is the lane's share, not a rank: lanes
    /// [`Priority::HIGH`] (300) and [`Priority::LOW`] (100) share the
    /// workers 3 : 1 while both have work. For "the higher lane first,
    /// always", use [`Picker::Strict`](crate::Picker::Strict); for another
    /// share, give the weights with [`lane_config`](Self::lane_config) and
    /// [`LaneConfig::weight`]. A `Priority(0)` lane gets weight 1 (a weight
    /// of 0 is refused, as it would starve the lane).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, LaneConfig, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .lane(Priority::HIGH, Capacity::Unbounded)
    ///     .lane_config(LaneConfig::new(Priority::LOW).weight(30)) // 300 : 30, so 10 : 1
    ///     .build()?;
    /// let weights: Vec<u32> = exec.config().lanes.iter().map(|l| l.weight).collect();
    /// assert_eq!(weights, [300, 30]);
    /// # Ok::<(), priority_executor::BuildError>(())
    /// ```
    pub fn lane(self, priority: Priority, capacity: Capacity) -> Self {
        self.lane_config(LaneConfig::new(priority).capacity(capacity))
    }

    /// Adds a lane with every setting: weight, capacity, reserved workers,
    /// aging, rejection policy.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, LaneConfig, Priority};
    ///
    /// // Priority 1000 and 1 would be served 1000:1; serve them 4:1 instead.
    /// let exec = Executor::builder()
    ///     .lane_config(LaneConfig::new(Priority(1000)).weight(4))
    ///     .lane_config(LaneConfig::new(Priority(1)).weight(1).capacity(Capacity::Bounded(100)))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(exec.metrics().lanes[0].weight, 4);
    /// ```
    ///
    /// See also [`LaneConfig`].
    pub fn lane_config(mut self, lane: LaneConfig) -> Self {
        self.lanes.push(lane);
        self
    }

    /// Runs `hook` on the worker thread before each attempt of a job, with
    /// its priority, how long it waited, the executor's name and the
    /// attempt's number ([`JobInfo`]; Java's `beforeExecute`). A panicking
    /// hook is caught and ignored. With the `tracing` feature the hooks run
    /// inside the attempt's span.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::mpsc;
    ///
    /// let (tx, rx) = mpsc::channel();
    /// let exec = Executor::builder()
    ///     .lane(Priority(10), Capacity::Unbounded)
    ///     .before_execute(move |info| tx.send(info.priority).unwrap())
    ///     .build()
    ///     .unwrap();
    /// exec.enqueue(Priority(10), || ()).unwrap().join().unwrap();
    /// assert_eq!(rx.recv().unwrap(), Priority(10));
    /// ```
    pub fn before_execute(mut self, hook: impl Fn(&JobInfo<'_>) + Send + Sync + 'static) -> Self {
        self.hooks.before = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on the worker thread after each attempt of a job with
    /// its outcome (Java's `afterExecute`), before the job's handle
    /// resolves.
    ///
    /// # Examples
    ///
    /// See [`JobInfo`].
    pub fn after_execute(
        mut self,
        hook: impl Fn(&JobInfo<'_>, JobOutcome) + Send + Sync + 'static,
    ) -> Self {
        self.hooks.after = Some(Arc::new(hook));
        self
    }

    /// Receives every retrying job whose last attempt failed.
    ///
    /// # Examples
    ///
    /// See [`DeadJob`].
    pub fn on_dead_letter(mut self, hook: impl Fn(DeadJob) + Send + Sync + 'static) -> Self {
        self.hooks.dead_letter = Some(Arc::new(hook));
        self
    }

    /// Receives every job dropped unrun because its deadline passed.
    ///
    /// # Examples
    ///
    /// See [`ExpiredJob`].
    pub fn on_expired(mut self, hook: impl Fn(ExpiredJob) + Send + Sync + 'static) -> Self {
        self.hooks.expired = Some(Arc::new(hook));
        self
    }

    /// The stack size of each worker thread, in bytes (as
    /// `std::thread::Builder::stack_size`; the platform may round it up).
    /// By default, Rust's default for spawned threads (2 MiB, or
    /// `RUST_MIN_STACK`). With `core_threads` above 0, `build` starts one
    /// thread of this size (and joins it) to check that the operating
    /// system allows it: if not, it fails with
    /// [`BuildError::CannotStartThread`](crate::BuildError::CannotStartThread).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .stack_size(16 << 20)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// // A job with a large frame on its stack.
    /// let sum = exec
    ///     .enqueue(Priority(1), || {
    ///         let buf = std::hint::black_box([1u8; 4 << 20]);
    ///         buf.iter().map(|&b| u64::from(b)).sum::<u64>()
    ///     })
    ///     .unwrap();
    /// assert_eq!(sum.join(), Ok(4 << 20));
    /// assert_eq!(exec.config().stack_size, Some(16 << 20));
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.threads.stack_size = Some(bytes);
        self
    }

    /// Names each worker thread `name(n)` instead of `"{executor}-{n}"`,
    /// where `n` counts the threads the executor has started, from 1 (a
    /// thread that exits does not give its number back). Called on the
    /// thread starting the worker (a producer, or the one calling
    /// [`prestart_core_threads`]).
    ///
    /// A thread name cannot hold a NUL byte. If `name` returns one that
    /// does, or panics, the thread gets the default name instead: a name is
    /// never a reason not to start a worker, nor to lose a job.
    ///
    /// [`prestart_core_threads`]: crate::Executor::prestart_core_threads
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .name("visa")
    ///     .thread_name(|n| format!("visa-worker-{n}"))
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// let name = exec
    ///     .enqueue(Priority(1), || std::thread::current().name().map(str::to_owned))
    ///     .unwrap();
    /// assert!(name.join().unwrap().unwrap().starts_with("visa-worker-"));
    /// ```
    pub fn thread_name(mut self, name: impl Fn(usize) -> String + Send + Sync + 'static) -> Self {
        self.threads.name = Some(Arc::new(name));
        self
    }

    /// Runs `hook` on each worker thread as it starts, before it takes a
    /// job: the place to set thread-locals, install a tracing subscriber or
    /// pin the thread. A panicking hook is caught and ignored; the worker
    /// starts anyway.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::cell::Cell;
    ///
    /// thread_local!(static WORKER: Cell<bool> = const { Cell::new(false) });
    ///
    /// let exec = Executor::builder()
    ///     .on_thread_start(|| WORKER.with(|w| w.set(true)))
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// let on_worker = exec.enqueue(Priority(1), || WORKER.with(Cell::get)).unwrap();
    /// assert_eq!(on_worker.join(), Ok(true));
    /// assert!(!WORKER.with(Cell::get)); // not this thread
    /// ```
    pub fn on_thread_start(mut self, hook: impl Fn() + Send + Sync + 'static) -> Self {
        self.threads.on_start = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on each worker thread just before it exits (keep-alive
    /// ran out, or shutdown). A panicking hook is caught and ignored. After
    /// a graceful [`shutdown`](crate::Executor::shutdown) has
    /// returned, every worker's stop hook has run.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let (started, stopped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    /// let (s, t) = (started.clone(), stopped.clone());
    /// let exec = Executor::builder()
    ///     .core_threads(2)
    ///     .max_threads(2)
    ///     .on_thread_start(move || {
    ///         s.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .on_thread_stop(move || {
    ///         t.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(exec.prestart_core_threads(), 2);
    /// exec.shutdown();
    /// assert_eq!(started.load(Ordering::SeqCst), 2);
    /// assert_eq!(stopped.load(Ordering::SeqCst), 2);
    /// ```
    pub fn on_thread_stop(mut self, hook: impl Fn() + Send + Sync + 'static) -> Self {
        self.threads.on_stop = Some(Arc::new(hook));
        self
    }

    /// How the next lane is chosen; [`Picker::Smooth`] by default.
    ///
    /// # Examples
    ///
    /// See [`ExecutorBuilder`].
    pub fn picker(mut self, picker: Picker) -> Self {
        self.picker = picker;
        self
    }

    /// Whether each lane keeps a histogram of its jobs' waits,
    /// [`LaneMetrics::waits`](crate::LaneMetrics::waits) (default: off;
    /// the histograms stay empty). On, it costs two clock reads and one
    /// count per job: a flood of jobs that do nothing runs at about half
    /// the rate (`cargo bench --bench throughput -- waits_on_vs_off`); for
    /// jobs of a few microseconds or more it is lost in the noise.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .record_waits(true)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()?;
    /// exec.enqueue(Priority(1), || ())?.join()?;
    /// assert_eq!(exec.metrics().lanes[0].waits.count(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn record_waits(mut self, record: bool) -> Self {
        self.record_waits = record;
        self
    }
}
