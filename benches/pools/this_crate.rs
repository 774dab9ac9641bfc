//! This crate's executor behind the bench trait.

use priority_executor::{Capacity, Executor, Picker, Priority};

use super::PickerKind;

pub struct CratePool {
    executor: Executor,
    /// The priority of each lane, lane 0 (the most important) first.
    priorities: Vec<Priority>,
}

impl CratePool {
    /// One unbounded lane per weight, the weight doubling as the priority
    /// (10:1 means priorities 10 and 1), and `threads` fixed workers.
    pub fn new(threads: usize, weights: &[u32], picker: PickerKind) -> CratePool {
        CratePool::recording_waits(threads, weights, picker, false)
    }

    /// As `new`, with the lanes' wait histograms on or off.
    pub fn recording_waits(
        threads: usize,
        weights: &[u32],
        picker: PickerKind,
        record_waits: bool,
    ) -> CratePool {
        let picker = match picker {
            PickerKind::Smooth => Picker::Smooth,
            PickerKind::Classic => Picker::Classic,
            PickerKind::Strict => Picker::Strict,
        };
        let mut builder = Executor::builder()
            .name("bench")
            .core_threads(threads)
            .max_threads(threads)
            .record_waits(record_waits)
            .picker(picker);
        for &weight in weights {
            builder = builder.lane(Priority(weight), Capacity::Unbounded);
        }
        let executor = builder.build().expect("bench executor settings are valid");
        executor.prestart_core_threads();
        CratePool {
            executor,
            priorities: weights.iter().map(|&w| Priority(w)).collect(),
        }
    }

    pub fn executor(&self) -> &Executor {
        &self.executor
    }
}

impl super::Pool for CratePool {
    #[inline]
    fn spawn<F>(&self, lane: usize, job: F)
    where
        F: FnOnce() + Send + 'static,
    {
        // The handle is dropped at once (detached), as a fire-and-forget
        // `spawn` would; the job still runs.
        let _detached = self
            .executor
            .enqueue(self.priorities[lane], job)
            .expect("unbounded lane accepts the job");
    }
}
