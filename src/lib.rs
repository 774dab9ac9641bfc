//! A priority thread pool: one FIFO lane per priority, a weighted
//! round-robin picker between lanes, core/max threads with keep-alive,
//! result handles, backpressure, and a shutdown that hands back every job
//! that never ran.
//!
//! Lanes of priority 10 and 1 are served ten to one under load
//! ([`Picker::Smooth`] spreads the turns: `HHHHHLHHHHH`), so urgent jobs do
//! not wait behind a flood of ordinary ones and ordinary jobs are never
//! starved.
//!
//! # Quick start
//!
//! ```
//! use priority_executor::{Capacity, Executor, Priority};
//!
//! let exec = Executor::builder()
//!     .name("visa")
//!     .core_threads(2)
//!     .max_threads(4)
//!     .lane(Priority(10), Capacity::Bounded(1000))
//!     .lane(Priority(1), Capacity::Unbounded)
//!     .build()?;
//!
//! let handle = exec.enqueue(Priority(10), || 2 + 2).unwrap();
//! assert_eq!(handle.join(), Ok(4));
//!
//! // A priority with no lane hands the job back with a clear error.
//! let err = exec.enqueue(Priority(5), || 0).unwrap_err();
//! assert_eq!(err.to_string(), "no lane for priority 5 (lanes: 10, 1)");
//!
//! exec.shutdown(); // runs what is queued, joins the threads
//! # Ok::<(), priority_executor::BuildError>(())
//! ```
//!
//! # The guide
//!
//! The [`guide`] module holds the rest of the documentation, one chapter a
//! module: [the model](guide::model) (lanes, pickers, threads, handles,
//! shutdown), [policies](guide::policies), [metrics and
//! tracing](guide::observability), [`executors.toml` and the ESB
//! layer](guide::executors_toml), [actors and pipelines](guide::actors),
//! [RabbitMQ](guide::rabbitmq), [HTTP](guide::http), the rules of the
//! [sleep/wake protocol](guide::sleep_protocol) and of [the actor
//! layer](guide::actor_protocol), [performance](guide::performance) and the
//! [project's layout](guide::layout).
//!
//! # Guarantees
//!
//! - FIFO within a lane; every job goes through the lanes (no bypass while
//!   fewer than `core_threads` run).
//! - While every lane stays non-empty, each run of `sum(weights)`
//!   dispatches gives every lane exactly its weight, however many workers
//!   run.
//! - A panicking job is caught and reported in its handle; the worker lives.
//! - Nothing is lost: a refused job is returned in the error; after
//!   shutdown, `submitted` equals [`LaneMetrics::settled`] (completed,
//!   panicked, handed back, expired, discarded, dead-lettered or
//!   cancelled), for every lane whose retries stay in it and over all
//!   lanes together.
//!
//! # Policies
//!
//! Per lane ([`LaneConfig`]): reserved workers ([`MaxRunning`]), aging
//! (`promote_after`), and what to do when full ([`RejectionPolicy`]). Per
//! job: a deadline ([`JobOptions`], [`Executor::enqueue_with`]) and
//! retries with backoff and a dead-letter hook ([`RetryPolicy`],
//! [`Executor::enqueue_retrying`]). Hooks before and after each job
//! ([`ExecutorBuilder::before_execute`]) see the priority, the wait, the
//! executor's name, the attempt's number and the outcome ([`JobInfo`]).
//!
//! # Actors and pipelines
//!
//! With the `actor` feature, `priority_executor::actor`
//! adds typed actors with prioritized mailboxes (Akka's prioritized
//! mailbox: `stop` and `kill` at configurable priorities, FIFO among
//! equals) and pipelines of them (Kabuki: `init` / `perform` / `destroy`, N instances per stage, a
//! drain marker behind the payload). Each stage's instances run as jobs
//! of its own executor.
//!
//! # Beyond one job at a time
//!
//! An [`Executor`] is `Clone` (one reference count): each thread or job
//! enqueues and shuts down through its own clone, and the last clone
//! dropped shuts the pool down gracefully;
//! [`Executor::wait_idle`] waits for the queue to drain without
//! shutting down; [`Executor::enqueue_batch`] queues many jobs with
//! one wake-up; [`Executor::spawn_future`] runs a `Future` on the
//! workers; [`Executor::config`] reads the settings back and
//! [`Executor::set_threads`] and [`Executor::set_keep_alive`]
//! change a live pool.
//! Worker threads take a stack size, a name function and start and stop
//! hooks ([`ExecutorBuilder::on_thread_start`]).
//!
//! # Cargo features
//!
//! None is on by default: `cargo add priority-executor` compiles the pool
//! alone (its dependencies are crossbeam, num_cpus and thiserror). Each
//! layer is opt-in:
//!
//! - `esb`: executors declared in `executors.toml` and looked up
//!   by name (`Registry`), messages, rules that give them a priority,
//!   and named sequences.
//! - `actor`: `priority_executor::actor`, above (adds crossbeam-queue,
//!   a mailbox lane's queue).
//! - `metrics` (off): counters, gauges and histograms per executor and lane
//!   (labels `executor` and `priority`) through the
//!   [`metrics`](https://docs.rs/metrics) facade: jobs submitted,
//!   completed, panicked, rejected, expired, discarded, retried,
//!   dead-lettered, handed back and cancelled, each attempt's queue wait and
//!   run time, the jobs queued and whether paused per lane, and the threads
//!   live, idle and running a job.
//!   The handles are registered once, when the executor is built, so
//!   install the recorder first; recording a job then allocates and hashes
//!   nothing. The names are listed in [the observability
//!   chapter](guide::observability).
//! - `tracing` (off): each attempt of a job runs, hooks included, inside a
//!   span `job` (fields `executor`, `priority`, `attempt`, `wait_ns`, and
//!   `sequence` for an ESB sequence) whose parent is the span that was
//!   current when the job was enqueued, so a request's trace follows its
//!   job onto the worker. Each retry gets a span of its own. An actor
//!   stage's `perform` runs in a span `perform` (fields `stage`,
//!   `instance`, `priority`, `attempt`).
//!
//! Both optional features cost nothing when off: their fields and calls are
//! compiled out.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(docsrs, doc(auto_cfg(hide(loom))))]
#![deny(missing_docs, missing_debug_implementations, unreachable_pub)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod builder;
mod clock;
mod error;
mod executor;
mod hooks;
mod job;
mod lane;
mod metrics;
mod observe;
mod pool;
mod priority;
mod sleep;
mod sync;
mod util;
mod waits;

#[cfg(feature = "esb")]
mod esb;

#[cfg(feature = "actor")]
pub mod actor;

pub mod guide;

/// The README's Rust examples, compiled and run by `cargo test --doc`
/// (they use the features `esb` and `actor`).
#[cfg(all(doctest, feature = "esb", feature = "actor"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub use builder::ExecutorBuilder;
pub use error::{BatchError, BuildError, EnqueueError, InvalidSetting, TimedOut, UnknownName};
pub use executor::{Executor, ExecutorConfig, PauseError, Permit, Reserve};
pub use hooks::{DeadJob, ExpiredJob, JobInfo, JobOutcome};
#[cfg(any(feature = "actor", feature = "esb"))]
pub use job::SendOptions;
pub use job::{Attempt, JobError, JobHandle, JobOptions, PendingJob, RetryPolicy};
pub use lane::config::{LaneConfig, MaxRunning, RejectionPolicy};
pub use lane::picker::{Picker, UnknownPicker};
pub use metrics::{LaneMetrics, Metrics, ThreadMetrics};
pub use priority::{Capacity, Priority};
pub use waits::WaitTimes;

/// Frees the memory this thread and the shared cache keep for job cells.
///
/// A job's cell (its closure and the slot of its result) is allocated by
/// the thread that enqueues it and usually freed by a worker. Rather than
/// give it back to the allocator, each thread keeps the cells it frees and
/// passes them on in batches to the threads that enqueue: with the system
/// allocator this takes the allocator's cross-thread bookkeeping off every
/// job. What is kept is bounded (at most 256 cells of each size a thread,
/// and the shared cache's limit, 4 MiB unless [`set_spare_cell_limit`]
/// says otherwise), and a thread's cells are passed on when it exits. Call
/// this to give the memory back to the allocator now, for
/// instance before counting a process's allocations; jobs enqueued later
/// allocate again.
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
///
/// let executor = Executor::builder()
///     .lane(Priority::HIGH, Capacity::Unbounded)
///     .build()?;
/// executor.enqueue(Priority::HIGH, || ())?.join()?;
/// executor.shutdown();
/// priority_executor::release_spare_cells();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn release_spare_cells() {
    job::cell::release_spare();
}

/// Sets the most memory, in bytes, the shared cache of job cells keeps
/// for reuse (4 MiB unless set; `0` keeps none there), frees what it holds
/// over the new limit now, and returns the limit before.
///
/// After a burst, the cells of the jobs that ran are kept for the next
/// burst up to this limit (the cells and the cache's record of each), and
/// go back to the allocator beyond it. Each
/// thread also keeps a few cells of its own: at most 256 of each size, so
/// at most 32 KiB for each size of job a thread freed. So, whatever the
/// bursts before, a process keeps at most this limit plus that in cells.
///
/// ```
/// // A service that stays idle between rare bursts keeps less.
/// let before = priority_executor::set_spare_cell_limit(256 << 10);
/// assert_eq!(before, 4 << 20);
/// # priority_executor::set_spare_cell_limit(before);
/// ```
pub fn set_spare_cell_limit(bytes: usize) -> usize {
    job::cell::set_depot_limit(bytes)
}

#[cfg(feature = "esb")]
pub use esb::config_error::{ConfigError, ConfigErrorKind};
#[cfg(feature = "esb")]
pub use esb::message::Message;
#[cfg(feature = "esb")]
pub use esb::registry::{Registry, RegistryBuilder, Reload};
#[cfg(feature = "esb")]
pub use esb::rules::Rules;
#[cfg(feature = "esb")]
pub use esb::sequence::{SequenceError, SequenceFailure, SequenceHandle, SequenceMetrics};
