//! Shared by the `loom_*` models: the model runner with the crate's
//! preemption bounds, and a small job factory that records each run.

use loom::model::Builder;
use priority_executor::{Capacity, Executor, ExecutorBuilder, Priority};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The preemption bound used when `LOOM_MAX_PREEMPTIONS` is not set.
///
/// Each rule of the protocol is a race between two threads with one or two
/// steps on each side; three preemptions cover every interleaving of such a
/// race with the steps around it. The models with more threads or steps
/// use a lower bound (`model_with_bound`, each says why), which keeps the
/// whole loom suite to a few minutes on 2 cores. `LOOM_MAX_PREEMPTIONS=N` overrides the
/// bound of every model, for a deeper (much slower) search.
pub const DEFAULT_PREEMPTION_BOUND: usize = 3;

/// Runs `f` under loom with the default bound (see above).
#[allow(dead_code)]
pub fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    model_with_bound(DEFAULT_PREEMPTION_BOUND, f);
}

/// Runs `f` under loom with `bound` preemptions, unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise.
pub fn model_with_bound<F>(bound: usize, f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    let mut builder = Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(bound);
    }
    let iterations = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&iterations);
    builder.check(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        f();
    });
    // Shown with `--nocapture`: how much of the state space was explored.
    println!(
        "explored {} interleavings (preemption bound {:?})",
        iterations.load(Ordering::Relaxed),
        builder.preemption_bound
    );
}

/// Per-job run counts. The counters are plain std atomics: the models read
/// them only after a join (a loom happens-before edge), so loom does not
/// need to explore their interleavings.
pub struct Runs(Vec<AtomicUsize>);

impl Runs {
    pub fn new(jobs: usize) -> Arc<Runs> {
        Arc::new(Runs((0..jobs).map(|_| AtomicUsize::new(0)).collect()))
    }

    /// A job that records that job `id` ran.
    pub fn job(self: &Arc<Self>, id: usize) -> impl FnOnce() + Send + 'static {
        let runs = Arc::clone(self);
        move || {
            runs.0[id].fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn get(&self, id: usize) -> usize {
        self.0[id].load(Ordering::Relaxed)
    }
}

/// The higher of the models' two lanes.
pub const HIGH: Priority = Priority(2);
/// The lower of the models' two lanes.
pub const LOW: Priority = Priority(1);

/// An executor builder with the models' two unbounded lanes.
pub fn two_lanes() -> ExecutorBuilder {
    Executor::builder()
        .name("loom")
        .lane(HIGH, Capacity::Unbounded)
        .lane(LOW, Capacity::Unbounded)
}
