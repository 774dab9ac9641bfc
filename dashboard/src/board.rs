//! The dashboard: the executors (and pipelines, `pipelines.rs`) it
//! shows, whether actions are allowed, and the snapshot it takes of them.

use crate::log::{ActionLog, ActionRecord, now_ms};
use crate::names::unique_name;
use crate::sampler::{LaneCounts, Sampler, observe_shared};
use crate::snapshot::{ExecutorSnapshot, LaneSnapshot, SCHEMA_VERSION, Snapshot, ThreadSnapshot};
use crate::tokens::Actions;
use priority_executor::{Executor, Metrics, Picker};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The hook each action record is handed to.
pub(crate) type ActionHook = Arc<dyn Fn(&ActionRecord) + Send + Sync>;

/// A dashboard over some executors: build it, then mount its
/// [`router`](Dashboard::router) in an axum application or run it with
/// [`spawn`](Dashboard::spawn).
///
/// Read-only unless [`actions`](Dashboard::actions) is given: then, with
/// the bearer token, a lane can be paused and resumed.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
/// use priority_executor_dashboard::Dashboard;
///
/// let exec = Executor::builder()
///     .name("visa")
///     .lane(Priority(10), Capacity::Unbounded)
///     .lane(Priority(1), Capacity::Bounded(1000))
///     .build()
///     .unwrap();
/// let app = axum::Router::new().nest("/dashboard", Dashboard::new().executor(&exec).router());
/// # drop(app);
/// ```
#[derive(Clone)]
pub struct Dashboard {
    pub(crate) inner: Arc<Inner>,
    /// Set by [`close_streams`](Dashboard::close_streams), or when a
    /// server of [`spawn`](Dashboard::spawn) stops (each has its own), so
    /// that the event streams of the routers made from this value end.
    pub(crate) closing: Arc<watch::Sender<bool>>,
}

pub(crate) struct Inner {
    pub(crate) executors: Vec<Watched>,
    #[cfg(feature = "actor")]
    pub(crate) pipelines: Vec<crate::watched_pipeline::WatchedPipeline>,
    #[cfg(feature = "amqp")]
    pub(crate) bridges: Vec<crate::watched_bridge::WatchedBridge>,
    pub(crate) actions: Option<Actions>,
    pub(crate) log: Mutex<ActionLog>,
    pub(crate) on_action: ActionHook,
    pub(crate) period: Duration,
}

pub(crate) struct Watched {
    pub(crate) name: String,
    pub(crate) executor: Executor,
    /// Fixed at build: read once, not per snapshot.
    picker: Picker,
    sampler: Mutex<Sampler>,
}

impl std::fmt::Debug for Dashboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .inner
            .executors
            .iter()
            .map(|w| w.name.as_str())
            .collect();
        let mut f = f.debug_struct("Dashboard");
        f.field("executors", &names);
        #[cfg(feature = "actor")]
        {
            let pipelines: Vec<&str> = self
                .inner
                .pipelines
                .iter()
                .map(|p| p.name.as_str())
                .collect();
            f.field("pipelines", &pipelines);
        }
        #[cfg(feature = "amqp")]
        {
            let bridges: Vec<&str> = self.inner.bridges.iter().map(|b| b.name.as_str()).collect();
            f.field("bridges", &bridges);
        }
        f.field("actions", &self.inner.actions)
            .field("period", &self.inner.period)
            .finish_non_exhaustive()
    }
}

impl Default for Dashboard {
    fn default() -> Self {
        Dashboard::new()
    }
}

impl Dashboard {
    /// A dashboard showing no executor yet, read-only, sending an event
    /// about once a second.
    pub fn new() -> Dashboard {
        Dashboard {
            inner: Arc::new(Inner {
                executors: Vec::new(),
                #[cfg(feature = "actor")]
                pipelines: Vec::new(),
                #[cfg(feature = "amqp")]
                bridges: Vec::new(),
                actions: None,
                log: Mutex::new(ActionLog::default()),
                on_action: Arc::new(|record| eprintln!("{record}")),
                period: Duration::from_secs(1),
            }),
            closing: Arc::new(watch::channel(false).0),
        }
    }

    /// Ends the event streams (`GET /api/events`) of the routers made
    /// from this dashboard and its clones, now and for good: a stream
    /// opened later ends at once. An open page then polls the snapshot
    /// (`GET /api/snapshot`) once a [`period`](Dashboard::period) until
    /// an event stream delivers again.
    /// Call it when the application shuts down gracefully: an open page
    /// holds its event stream, and with it the connection the shutdown
    /// waits for, as long as the stream goes on. A server of
    /// [`spawn`](Dashboard::spawn) does this for its own streams when it
    /// stops.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use priority_executor_dashboard::Dashboard;
    ///
    /// # async fn run() -> std::io::Result<()> {
    /// let dashboard = Dashboard::new();
    /// let app = axum::Router::new().nest("/dashboard", dashboard.router());
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// axum::serve(listener, app)
    ///     .with_graceful_shutdown(async move {
    ///         let _ = tokio::signal::ctrl_c().await;
    ///         dashboard.close_streams();
    ///     })
    ///     .await
    /// # }
    /// ```
    pub fn close_streams(&self) {
        self.closing.send_replace(true);
    }

    pub(crate) fn with(mut self, change: impl FnOnce(&mut Inner)) -> Dashboard {
        let inner = Arc::get_mut(&mut self.inner)
            .expect("a dashboard is configured before its router or server is made");
        change(inner);
        self
    }

    /// Shows an executor, under its own name ([`Executor::name`]). The
    /// dashboard holds a clone, so the pool stays open while the dashboard
    /// lives (shut it down explicitly to stop it).
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    pub fn executor(self, executor: &Executor) -> Dashboard {
        let name = executor.name().to_owned();
        self.executor_named(name, executor)
    }

    /// Shows an executor under `name`. Names are how actions address an
    /// executor; a name already taken gets `#2`, `#3`… appended.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    pub fn executor_named(self, name: impl Into<String>, executor: &Executor) -> Dashboard {
        let executor = executor.clone();
        let wanted = name.into();
        self.with(move |inner| {
            let name = unique_name(&wanted, |n| inner.executors.iter().any(|w| w.name == n));
            inner.executors.push(Watched {
                name,
                picker: executor.config().picker,
                executor,
                sampler: Mutex::default(),
            });
        })
    }

    /// Allows actions, for holders of the given tokens. Without this,
    /// every action is refused with `403 Forbidden`.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    pub fn actions(self, actions: Actions) -> Dashboard {
        self.with(move |inner| inner.actions = Some(actions))
    }

    /// Hands every action record (granted or refused) to `hook` instead
    /// of printing it on stderr. A panic in the hook is caught: the
    /// action's answer does not depend on it.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    pub fn on_action(self, hook: impl Fn(&ActionRecord) + Send + Sync + 'static) -> Dashboard {
        self.with(move |inner| inner.on_action = Arc::new(hook))
    }

    /// How often the event stream sends a snapshot (default: a second;
    /// at least 50 ms).
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    pub fn period(self, period: Duration) -> Dashboard {
        self.with(move |inner| inner.period = period.max(Duration::from_millis(50)))
    }

    /// A snapshot of every executor, pipeline and bridge, now: each
    /// executor's [`Executor::metrics`], each stage's monitor and each
    /// bridge's counters, with rates over the last few seconds.
    ///
    /// # Examples
    ///
    /// See [`Snapshot`].
    pub fn snapshot(&self) -> Snapshot {
        let inner = &self.inner;
        let now = Instant::now();
        // The rates' window: the longest any sampler covers.
        let mut window = 0f64;
        let executors = inner
            .executors
            .iter()
            .map(|watched| widest(&mut window, watched.snapshot(now)))
            .collect();
        #[cfg(feature = "actor")]
        let pipelines = inner
            .pipelines
            .iter()
            .map(|watched| widest(&mut window, watched.snapshot(now)))
            .collect();
        #[cfg(not(feature = "actor"))]
        let pipelines = Vec::new();
        #[cfg(feature = "amqp")]
        let bridges = inner.bridges.iter().map(|b| b.snapshot()).collect();
        #[cfg(not(feature = "amqp"))]
        let bridges = Vec::new();
        Snapshot {
            version: SCHEMA_VERSION,
            taken_at_ms: now_ms(),
            window_secs: window,
            period_ms: u64::try_from(inner.period.as_millis()).unwrap_or(u64::MAX),
            actions_enabled: inner.actions.is_some(),
            executors,
            pipelines,
            bridges,
            actions: inner
                .log
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .latest(),
        }
    }
}

impl Watched {
    fn snapshot(&self, now: Instant) -> (ExecutorSnapshot, f64) {
        let metrics: Metrics = self.executor.metrics();
        let counts: Vec<LaneCounts> = metrics
            .lanes
            .iter()
            .map(|l| LaneCounts {
                dispatched: l.dispatched,
                completed: l.completed,
                waits: l.waits.clone(),
            })
            .collect();
        let (secs, rates) = observe_shared(&self.sampler, now, counts);
        let weights: Vec<u32> = metrics.lanes.iter().map(|l| l.weight).collect();
        let weight_shares = weight_shares(self.picker, &weights);
        let total_dispatched: u64 = rates.iter().map(|r| r.dispatched).sum();
        let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e3);
        let lanes = metrics
            .lanes
            .iter()
            .zip(rates)
            .zip(weight_shares)
            .map(|((lane, rate), weight_share)| LaneSnapshot {
                priority: lane.priority.0,
                weight: lane.weight,
                capacity: lane.capacity.limit(),
                paused: lane.paused,
                queued: lane.queued,
                running: lane.running,
                max_running: lane.max_running,
                submitted: lane.submitted,
                dispatched: lane.dispatched,
                completed: lane.completed,
                panicked: lane.panicked,
                rejected: lane.rejected,
                expired: lane.expired,
                discarded: lane.discarded,
                retried: lane.retried,
                dead_lettered: lane.dead_lettered,
                cancelled: lane.cancelled,
                handed_back: lane.handed_back,
                dispatched_per_sec: rate.dispatched_per_sec,
                completed_per_sec: rate.completed_per_sec,
                share: (total_dispatched > 0)
                    .then(|| rate.dispatched as f64 / total_dispatched as f64),
                weight_share,
                wait_p50_ms: ms(lane.waits.percentile(50.0)),
                wait_p99_ms: ms(lane.waits.percentile(99.0)),
                wait_p50_ms_window: ms(rate.waits.percentile(50.0)),
                wait_p99_ms_window: ms(rate.waits.percentile(99.0)),
            })
            .collect();
        let t = metrics.threads;
        let snapshot = ExecutorSnapshot {
            name: self.name.clone(),
            picker: self.picker.as_str().to_owned(),
            shut_down: self.executor.is_shut_down(),
            threads: ThreadSnapshot {
                live: t.live,
                busy: t.busy,
                idle: t.idle,
                sleeping: t.sleeping,
                peak: t.peak,
            },
            lanes,
        };
        (snapshot, secs)
    }
}

/// Each lane's part of the dispatches while every lane has jobs, lanes
/// of the given weights highest priority first: by weight for the
/// weighted pickers; everything to the highest lane for the strict one,
/// which ignores weights.
fn weight_shares(picker: Picker, weights: &[u32]) -> Vec<f64> {
    let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
    (0..weights.len())
        .map(|i| match picker {
            Picker::Strict if i == 0 => 1.0,
            Picker::Strict => 0.0,
            _ if total == 0 => 0.0,
            _ => f64::from(weights[i]) / total as f64,
        })
        .collect()
}

/// A snapshot with the span its rates cover: the snapshot, the span
/// counted into `window` (the longest of them).
fn widest<T>(window: &mut f64, (snapshot, secs): (T, f64)) -> T {
    *window = window.max(secs);
    snapshot
}
