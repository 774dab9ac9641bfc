//! Feature `metrics`: the executor's figures through the `metrics` facade,
//! for whatever recorder the application installs (Prometheus, StatsD,
//! OpenTelemetry...).
//!
//! Every handle is registered once, when the executor is built, with the
//! labels `executor` (its name) and, per lane, `priority`; recording is
//! then a call on a handle: no lookup, hashing or label allocation per job.
//! A handle registered while no recorder is installed is a no-op for good,
//! so the recorder must be installed before the executor is built.
//!
//! | name | kind | labels | what |
//! |---|---|---|---|
//! | `priority_executor_jobs_submitted_total` | counter | executor, priority | jobs accepted into the lane |
//! | `priority_executor_jobs_completed_total` | counter | executor, priority | attempts that returned a value |
//! | `priority_executor_jobs_panicked_total` | counter | executor, priority | jobs that panicked |
//! | `priority_executor_jobs_rejected_total` | counter | executor, priority | refused because the lane was full |
//! | `priority_executor_jobs_expired_total` | counter | executor, priority | not started: deadline passed |
//! | `priority_executor_jobs_discarded_total` | counter | executor, priority | pushed out of a full lane (discard-oldest) |
//! | `priority_executor_jobs_retried_total` | counter | executor, priority | failed attempts queued again |
//! | `priority_executor_jobs_dead_lettered_total` | counter | executor, priority | retrying jobs whose last attempt failed |
//! | `priority_executor_jobs_handed_back_total` | counter | executor, priority | handed back unrun by `shutdown_now` |
//! | `priority_executor_jobs_cancelled_total` | counter | executor, priority | cancelled through their handles (and futures woken after `shutdown_now`) |
//! | `priority_executor_job_wait_seconds` | histogram | executor, priority | queue wait of each attempt |
//! | `priority_executor_job_run_seconds` | histogram | executor, priority | run time of each attempt |
//! | `priority_executor_jobs_queued` | gauge | executor, priority | jobs waiting in the lane |
//! | `priority_executor_jobs_running` | gauge | executor | workers running a job |
//! | `priority_executor_threads_live` | gauge | executor | worker threads alive |
//! | `priority_executor_threads_idle` | gauge | executor | worker threads not running a job |
//! | `priority_executor_lane_paused` | gauge | executor, priority | 1 while the lane is paused, else 0 |
//!
//! The counters count what the lane counters of
//! [`Executor::metrics`](crate::Executor::metrics) count, at the same
//! places. The thread gauges move as a worker starts, exits, or turns from
//! idle to busy or back (not per job), so they are exact whenever the pool
//! is quiet. `queued` is read from the lanes by each busy worker at most
//! once a millisecond (as a job starts), as a worker turns idle or exits,
//! as a lane is paused or resumed, and after `shutdown_now`: while jobs
//! start it trails by about a millisecond; jobs queued behind workers
//! all busy with long jobs show once one of them starts its next job or
//! turns idle, and jobs queued into a paused lane at its resume; once the
//! workers have exited it is exact.
//!
//! The recorder is application code: a call into it that panics is
//! caught, that one record is lost, and the job, its handle and the
//! thread that recorded go on. A recorder that blocks holds up the
//! thread that recorded (a producer after its job is queued and a worker
//! woken for it, or a worker between jobs). The `lane_paused` gauge is
//! set under the lock of the lane's pause: a recorder must not pause,
//! resume or shut down the executor from that gauge's update.
//!
//! Executors with the same name share their series, as one replaced by a
//! reload of `executors.toml` does with its successor while it drains: the
//! counters and histograms add up, the thread gauges count both pools'
//! threads, and `queued` shows whichever set it last.

#[cfg(feature = "metrics")]
pub(crate) use on::Instruments;

#[cfg(not(feature = "metrics"))]
pub(crate) use off::Instruments;

/// The metric names, for the docs, the tests and the example.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) mod names {
    pub(crate) const SUBMITTED: &str = "priority_executor_jobs_submitted_total";
    pub(crate) const COMPLETED: &str = "priority_executor_jobs_completed_total";
    pub(crate) const PANICKED: &str = "priority_executor_jobs_panicked_total";
    pub(crate) const REJECTED: &str = "priority_executor_jobs_rejected_total";
    pub(crate) const EXPIRED: &str = "priority_executor_jobs_expired_total";
    pub(crate) const DISCARDED: &str = "priority_executor_jobs_discarded_total";
    pub(crate) const RETRIED: &str = "priority_executor_jobs_retried_total";
    pub(crate) const DEAD_LETTERED: &str = "priority_executor_jobs_dead_lettered_total";
    pub(crate) const HANDED_BACK: &str = "priority_executor_jobs_handed_back_total";
    pub(crate) const CANCELLED: &str = "priority_executor_jobs_cancelled_total";
    pub(crate) const WAIT: &str = "priority_executor_job_wait_seconds";
    pub(crate) const RUN: &str = "priority_executor_job_run_seconds";
    pub(crate) const QUEUED: &str = "priority_executor_jobs_queued";
    pub(crate) const PAUSED: &str = "priority_executor_lane_paused";
    pub(crate) const RUNNING: &str = "priority_executor_jobs_running";
    pub(crate) const LIVE: &str = "priority_executor_threads_live";
    pub(crate) const IDLE: &str = "priority_executor_threads_idle";
}

#[cfg(feature = "metrics")]
mod on {
    use super::names::*;
    use crate::clock::now_ns;
    use crate::hooks::JobOutcome;
    use crate::lane::Lane;
    use crate::priority::Priority;
    use ::metrics::{
        Counter, Gauge, Histogram, Label, Unit, counter, describe_counter, describe_gauge,
        describe_histogram, gauge, histogram,
    };
    use std::time::Duration;

    /// Runs one call into the recorder. The recorder is the application's
    /// code and may panic: the panic is caught here, so it never unwinds
    /// through the pool's bookkeeping (a worker holding a job it took, a
    /// producer between publishing a job and waking a worker). That one
    /// record is lost; the job, its handle and the thread go on.
    #[inline]
    fn guarded(record: impl FnOnce()) {
        crate::util::call_quietly(record);
    }

    /// Every job needs its enqueue time (for the wait histogram).
    pub(crate) const STAMPS_JOBS: bool = true;

    /// How often a busy worker reads the lanes' counts into the `queued`
    /// gauges: they are shared with every producer, so not per job.
    const QUEUED_EVERY_NS: u64 = 1_000_000;

    /// What a worker keeps from one job to the next while it takes them
    /// straight away: the time the previous job ended (crate clock),
    /// reused as the dispatch time of the next, so one clock read per job
    /// rather than two (the wait it gives leaves out the pick, which the
    /// previous job's run time does not include either); and when it last
    /// set the `queued` gauges.
    pub(crate) struct Recent {
        ended: std::cell::Cell<u64>,
        gauged: std::cell::Cell<u64>,
    }

    impl Recent {
        #[inline]
        pub(crate) const fn new() -> Recent {
            Recent {
                ended: std::cell::Cell::new(0),
                gauged: std::cell::Cell::new(0),
            }
        }

        #[inline]
        pub(crate) fn set(&self, ns: u64) {
            self.ended.set(ns);
        }

        /// The time stored, or 0; either way none is stored after.
        #[inline]
        pub(crate) fn take(&self) -> u64 {
            self.ended.take()
        }
    }

    /// The executor's handles, registered once.
    pub(crate) struct Instruments {
        lanes: Box<[LaneInstruments]>,
        running: Gauge,
        live: Gauge,
        idle: Gauge,
    }

    /// One lane's handles.
    struct LaneInstruments {
        submitted: Counter,
        completed: Counter,
        panicked: Counter,
        rejected: Counter,
        expired: Counter,
        discarded: Counter,
        retried: Counter,
        dead_lettered: Counter,
        handed_back: Counter,
        cancelled: Counter,
        wait: Histogram,
        run: Histogram,
        queued: Gauge,
        paused: Gauge,
    }

    impl Instruments {
        /// Registers the handles of an executor and its lanes with the
        /// recorder installed now (no-ops if there is none).
        pub(crate) fn register(
            executor: &str,
            priorities: impl Iterator<Item = Priority>,
        ) -> Instruments {
            describe();
            let pool = vec![Label::new("executor", executor.to_owned())];
            let lanes = priorities
                .map(|priority| {
                    let mut labels = pool.clone();
                    labels.push(Label::new("priority", priority.0.to_string()));
                    LaneInstruments {
                        submitted: counter!(SUBMITTED, labels.iter()),
                        completed: counter!(COMPLETED, labels.iter()),
                        panicked: counter!(PANICKED, labels.iter()),
                        rejected: counter!(REJECTED, labels.iter()),
                        expired: counter!(EXPIRED, labels.iter()),
                        discarded: counter!(DISCARDED, labels.iter()),
                        retried: counter!(RETRIED, labels.iter()),
                        dead_lettered: counter!(DEAD_LETTERED, labels.iter()),
                        handed_back: counter!(HANDED_BACK, labels.iter()),
                        cancelled: counter!(CANCELLED, labels.iter()),
                        wait: histogram!(WAIT, labels.iter()),
                        run: histogram!(RUN, labels.iter()),
                        queued: gauge!(QUEUED, labels.iter()),
                        paused: gauge!(PAUSED, labels.iter()),
                    }
                })
                .collect();
            Instruments {
                lanes,
                running: gauge!(RUNNING, pool.iter()),
                live: gauge!(LIVE, pool.iter()),
                idle: gauge!(IDLE, pool.iter()),
            }
        }

        #[inline]
        pub(crate) fn submitted(&self, lane: usize) {
            guarded(|| self.lanes[lane].submitted.increment(1));
        }

        pub(crate) fn rejected(&self, lane: usize) {
            guarded(|| self.lanes[lane].rejected.increment(1));
        }

        pub(crate) fn expired(&self, lane: usize) {
            guarded(|| self.lanes[lane].expired.increment(1));
        }

        pub(crate) fn discarded(&self, lane: usize) {
            guarded(|| self.lanes[lane].discarded.increment(1));
        }

        pub(crate) fn handed_back(&self, lane: usize) {
            guarded(|| self.lanes[lane].handed_back.increment(1));
        }

        pub(crate) fn cancelled(&self, lane: usize) {
            guarded(|| self.lanes[lane].cancelled.increment(1));
        }

        /// The lane was paused (1) or resumed (0).
        pub(crate) fn paused(&self, lane: usize, paused: bool) {
            guarded(|| self.lanes[lane].paused.set(f64::from(u8::from(paused))));
        }

        /// An attempt of a job of lane `index` starts at `now` after
        /// waiting `waited`. At most once a millisecond per worker, the
        /// `queued` gauges are set too.
        #[inline]
        pub(crate) fn started(
            &self,
            lanes: &[Lane],
            index: usize,
            waited: Duration,
            now: u64,
            recent: &Recent,
        ) {
            guarded(|| self.lanes[index].wait.record(waited));
            if now.saturating_sub(recent.gauged.get()) >= QUEUED_EVERY_NS {
                recent.gauged.set(now);
                self.refresh_queued(lanes);
            }
        }

        /// An attempt ended with `outcome` (`started_ns`: when it started,
        /// or 0 if it did not run, as for a retry given up at shutdown).
        /// Returns the time it ended, if it read the clock, or 0.
        #[inline]
        pub(crate) fn finished(&self, index: usize, outcome: JobOutcome, started_ns: u64) -> u64 {
            let m = &self.lanes[index];
            let counter = match outcome {
                JobOutcome::Completed => Some(&m.completed),
                JobOutcome::Panicked => Some(&m.panicked),
                JobOutcome::Retrying => Some(&m.retried),
                JobOutcome::DeadLettered => Some(&m.dead_lettered),
                // A future's poll that returned `Pending`: not an outcome
                // of the job, which runs again when woken.
                JobOutcome::Suspended => None,
            };
            if let Some(counter) = counter {
                guarded(|| counter.increment(1));
            }
            if started_ns == 0 {
                return 0;
            }
            let now = now_ns();
            guarded(|| {
                m.run
                    .record(Duration::from_nanos(now.saturating_sub(started_ns)));
            });
            now
        }

        /// A worker thread started (idle, about to look for work).
        pub(crate) fn worker_started(&self) {
            // Each record guarded on its own: a panic loses that one only,
            // not its pair's other half too.
            guarded(|| self.live.increment(1.0));
            guarded(|| self.idle.increment(1.0));
        }

        /// A worker took a job after being idle.
        #[inline]
        pub(crate) fn worker_busy(&self) {
            guarded(|| self.idle.decrement(1.0));
            guarded(|| self.running.increment(1.0));
        }

        /// A worker found no more work: the queue gauges are read again too.
        #[inline]
        pub(crate) fn worker_idle(&self, lanes: &[Lane]) {
            guarded(|| self.running.decrement(1.0));
            guarded(|| self.idle.increment(1.0));
            self.refresh_queued(lanes);
        }

        /// An idle worker exited.
        pub(crate) fn worker_exited(&self, lanes: &[Lane]) {
            guarded(|| self.idle.decrement(1.0));
            guarded(|| self.live.decrement(1.0));
            self.refresh_queued(lanes);
        }

        /// The lanes' `queued` gauges read again (a change no worker's
        /// turn follows: `shutdown_now` emptied them, a lane paused or
        /// resumed).
        pub(crate) fn refresh_queued(&self, lanes: &[Lane]) {
            guarded(|| {
                for (m, lane) in self.lanes.iter().zip(lanes) {
                    m.queued.set(lane.queued() as f64);
                }
            });
        }
    }

    /// Help texts and units, given to the recorder with each executor
    /// built (a recorder installed later still gets them).
    fn describe() {
        let per_lane = [
            (SUBMITTED, "Jobs accepted into the lane."),
            (COMPLETED, "Jobs whose attempt returned a value."),
            (
                PANICKED,
                "Jobs that panicked (caught; the worker lives on).",
            ),
            (REJECTED, "Jobs refused because the lane was full."),
            (
                EXPIRED,
                "Jobs not started because their deadline had passed.",
            ),
            (DISCARDED, "Jobs pushed out of the full lane by newer ones."),
            (RETRIED, "Failed attempts that were queued again."),
            (DEAD_LETTERED, "Retrying jobs whose last attempt failed."),
            (HANDED_BACK, "Jobs handed back unrun by shutdown_now."),
            (
                CANCELLED,
                "Jobs cancelled through their handles, dropped unrun.",
            ),
        ];
        for (name, help) in per_lane {
            describe_counter!(name, Unit::Count, help);
        }
        describe_histogram!(
            WAIT,
            Unit::Seconds,
            "How long each attempt waited in its lane before it started."
        );
        describe_histogram!(RUN, Unit::Seconds, "How long each attempt ran.");
        describe_gauge!(QUEUED, Unit::Count, "Jobs waiting in the lane.");
        describe_gauge!(PAUSED, Unit::Count, "1 while the lane is paused, else 0.");
        describe_gauge!(RUNNING, Unit::Count, "Worker threads running a job.");
        describe_gauge!(LIVE, Unit::Count, "Worker threads alive.");
        describe_gauge!(IDLE, Unit::Count, "Worker threads not running a job.");
    }
}

/// The stand-in without the feature: nothing stored, nothing recorded.
#[cfg(not(feature = "metrics"))]
mod off {
    use crate::hooks::JobOutcome;
    use crate::lane::Lane;
    use crate::priority::Priority;
    use std::time::Duration;

    pub(crate) const STAMPS_JOBS: bool = false;

    /// Nothing to remember: without the feature the end of a job is not
    /// read.
    pub(crate) struct Recent;

    impl Recent {
        #[inline(always)]
        pub(crate) const fn new() -> Recent {
            Recent
        }
        #[inline(always)]
        pub(crate) fn set(&self, _: u64) {}
        #[inline(always)]
        pub(crate) fn take(&self) -> u64 {
            0
        }
    }

    pub(crate) struct Instruments;

    impl Instruments {
        #[inline(always)]
        pub(crate) fn register(_: &str, _: impl Iterator<Item = Priority>) -> Instruments {
            Instruments
        }
        #[inline(always)]
        pub(crate) fn submitted(&self, _: usize) {}
        #[inline(always)]
        pub(crate) fn rejected(&self, _: usize) {}
        #[inline(always)]
        pub(crate) fn expired(&self, _: usize) {}
        #[inline(always)]
        pub(crate) fn discarded(&self, _: usize) {}
        #[inline(always)]
        pub(crate) fn handed_back(&self, _: usize) {}
        #[inline(always)]
        pub(crate) fn cancelled(&self, _: usize) {}

        pub(crate) fn paused(&self, _: usize, _: bool) {}
        #[inline(always)]
        pub(crate) fn refresh_queued(&self, _: &[Lane]) {}
        #[inline(always)]
        pub(crate) fn started(&self, _: &[Lane], _: usize, _: Duration, _: u64, _: &Recent) {}
        #[inline(always)]
        pub(crate) fn finished(&self, _: usize, _: JobOutcome, _: u64) -> u64 {
            0
        }
        #[inline(always)]
        pub(crate) fn worker_started(&self) {}
        #[inline(always)]
        pub(crate) fn worker_busy(&self) {}
        #[inline(always)]
        pub(crate) fn worker_idle(&self, _: &[Lane]) {}
        #[inline(always)]
        pub(crate) fn worker_exited(&self, _: &[Lane]) {}
    }
}

#[cfg(feature = "metrics")]
pub(crate) use on::{Recent, STAMPS_JOBS};

#[cfg(not(feature = "metrics"))]
pub(crate) use off::{Recent, STAMPS_JOBS};
