//! The flood: which applications are priority ones, the two targets it is
//! sent to (the priority executor and a plain FIFO pool), and the timeline
//! recorded from inside the jobs.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use priority_executor::{EnqueueError, Executor, JobHandle, JobOptions, Priority};

use crate::progress::Bars;
use crate::timeline::{Class, Live, Timeline};

pub type Job = Box<dyn FnOnce() + Send>;

/// What became of an application offered to a target.
pub enum Offer {
    Taken,
    /// Its lane is full: the application comes back, to be offered again.
    Full(Job),
}

/// Anything that can take the flood: the executor or the FIFO pool.
pub trait Target: Sync {
    /// Offers a job without waiting for room.
    fn offer(&self, class: Class, job: Job) -> Result<Offer, String>;
    /// Submits a job, waiting for room in its lane if need be.
    fn submit(&self, class: Class, job: Job) -> Result<(), String>;
    /// Returns once every submitted job has run; an error if one did not
    /// complete.
    fn finish(&self) -> Result<(), String>;
    /// Its figures now, for the progress bars.
    fn live(&self, timeline: &Timeline, classes: &[Class]) -> Live;
}

pub struct PriorityTarget<'a> {
    executor: &'a Executor,
    high: Priority,
    low: Priority,
    handles: std::sync::Mutex<Vec<JobHandle<()>>>,
}

impl<'a> PriorityTarget<'a> {
    /// Sends priority applications to lane `high`, standard ones to `low`.
    pub fn new(executor: &'a Executor, high: Priority, low: Priority, jobs: usize) -> Self {
        PriorityTarget {
            executor,
            high,
            low,
            handles: std::sync::Mutex::new(Vec::with_capacity(jobs)),
        }
    }

    fn priority(&self, class: Class) -> Priority {
        match class {
            Class::Priority => self.high,
            Class::Standard => self.low,
        }
    }

    fn keep(&self, handle: JobHandle<()>) {
        self.handles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(handle);
    }
}

impl Target for PriorityTarget<'_> {
    fn offer(&self, class: Class, job: Job) -> Result<Offer, String> {
        match self.executor.enqueue_with(
            self.priority(class),
            job,
            JobOptions::new().wait_at_most(Duration::ZERO),
        ) {
            Ok(handle) => {
                self.keep(handle);
                Ok(Offer::Taken)
            }
            Err(e) if matches!(e, EnqueueError::Full { .. }) => Ok(Offer::Full(e.into_inner())),
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

    /// From the executor's own `metrics()`: each lane's queue and the jobs
    /// it has finished, and the threads.
    fn live(&self, _: &Timeline, _: &[Class]) -> Live {
        let m = self.executor.metrics();
        let lane = |class: Class| m.lane(self.priority(class));
        let queued = [Class::Priority, Class::Standard].map(|c| lane(c).map_or(0, |l| l.queued));
        let done = [Class::Priority, Class::Standard]
            .map(|c| lane(c).map_or(0, |l| l.completed + l.panicked));
        Live {
            queued,
            done,
            threads: m.threads.live,
            busy: m.threads.busy,
        }
    }
}

pub struct FifoTarget(threadpool::ThreadPool);

impl FifoTarget {
    /// A `threadpool` pool of `threads` threads: one queue, arrival order.
    pub fn new(threads: usize) -> Self {
        FifoTarget(threadpool::ThreadPool::new(threads))
    }
}

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

    /// The pool counts only its whole queue: the classes come from the
    /// timeline.
    fn live(&self, timeline: &Timeline, classes: &[Class]) -> Live {
        let (queued, done) = timeline.counts(classes);
        Live {
            queued,
            done,
            threads: self.0.max_count(),
            busy: self.0.active_count(),
        }
    }
}

/// Floods `target` with `classes`, in that order, from one inbox, then waits
/// until every job has run: all at once, or evenly spread over
/// `arrive_over`. Each application's wait counts from the moment it
/// arrived. When a class's lane is full (a bounded lane, as in
/// `executors.toml`), that class's applications are held back in arrival
/// order and offered again as the lane drains, while the other class keeps
/// flowing: a full standard lane must not hold up priority applications.
///
/// Meanwhile, if the bars are shown, they are refreshed ten times a second
/// from the target's figures.
pub fn flood(
    target: &dyn Target,
    classes: &[Class],
    work: Duration,
    arrive_over: Duration,
    bars: &Bars,
) -> Result<Timeline, String> {
    let timeline = Arc::new(Timeline::new(classes.len()));
    let running = AtomicBool::new(true);
    let result = std::thread::scope(|scope| {
        if bars.shown() {
            scope.spawn(|| {
                while running.load(Ordering::Relaxed) {
                    bars.show(&target.live(&timeline, classes), &timeline, classes);
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
        }
        let sent = send(target, classes, work, arrive_over, &timeline);
        running.store(false, Ordering::Relaxed);
        sent
    });
    result?;
    bars.finish(&target.live(&timeline, classes), &timeline, classes);
    Arc::into_inner(timeline).ok_or_else(|| "jobs still hold the timeline".to_string())
}

fn send(
    target: &dyn Target,
    classes: &[Class],
    work: Duration,
    arrive_over: Duration,
    timeline: &Arc<Timeline>,
) -> Result<(), String> {
    let mut held: [VecDeque<Job>; 2] = [VecDeque::new(), VecDeque::new()];
    let start = std::time::Instant::now();
    let gap = arrive_over / u32::try_from(classes.len()).unwrap_or(u32::MAX);
    for (i, &class) in classes.iter().enumerate() {
        // Spread arrivals: application i arrives at `i * gap`.
        let arrival = start + gap * u32::try_from(i).unwrap_or(u32::MAX);
        if let Some(early) = arrival.checked_duration_since(std::time::Instant::now()) {
            std::thread::sleep(early);
        }
        let record = Arc::clone(timeline);
        record.submitted[i].store(record.now().max(1), Ordering::Relaxed);
        let job: Job = Box::new(move || {
            record.started[i].store(record.now().max(1), Ordering::Relaxed);
            std::thread::sleep(work);
            record.finished[i].store(record.now().max(1), Ordering::Relaxed);
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
    target.finish()
}
