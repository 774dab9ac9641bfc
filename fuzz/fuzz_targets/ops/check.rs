//! What the `ops` script keeps of each job and future, the operations that
//! need it, and the checks at the end.

use crate::WakeHow;
use crate::batch::{self, Shape};
use crate::common::{Guard, Record, is_deliberate};
use crate::futures::{self, Pending};
use crate::helper::{Command, Helper};
use priority_executor::{
    Capacity, EnqueueError, Executor, JobError, JobHandle, JobOptions, Priority,
};
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub enum Fate {
    Accepted(JobHandle<()>),
    Joined(Result<(), JobError>),
    /// Refused, handed back to us and run by us.
    Refused,
    /// Made by a batch whose iterator panicked: its handle went with the
    /// unwinding batch.
    Lost,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Plain,
    Hold,
    /// Calls `shutdown()` through the executor's handle.
    Shutdown,
}

pub struct Job {
    pub record: Arc<Record>,
    pub fate: Fate,
    pub panics: bool,
    pub kind: Kind,
    /// `cancel()` said it cancelled the job.
    pub cancelled: bool,
}

impl Job {
    pub fn new(record: Arc<Record>, fate: Fate, panics: bool, kind: Kind) -> Job {
        Job {
            record,
            fate,
            panics,
            kind,
            cancelled: false,
        }
    }
}

pub struct Future {
    pub record: Arc<Record>,
    pub slot: futures::Shared,
    pub handle: Option<JobHandle<u8>>,
    pub lane: usize,
    pub panics: bool,
    /// The script dropped its only waker unwoken: it never finishes,
    /// unless the pool's end drops it (its handle then says `Cancelled`).
    pub waker_dropped: bool,
}

pub struct Run {
    pub exec: Option<Executor>,
    pub priorities: Vec<Priority>,
    capacities: Vec<Capacity>,
    pub jobs: Vec<Job>,
    pub futures: Vec<Future>,
    pub futures_in_lane: Vec<usize>,
    pub max_ever: Arc<AtomicUsize>,
    /// A job that shuts the executor down was accepted: refusals with
    /// `ShutDown` may come from now on.
    may_be_closed: bool,
    /// A waker was sent to the helper thread, whose wake may come at any
    /// time, even after the pool's end.
    pub helper_wakes: bool,
}

impl Run {
    pub fn new(exec: &Executor) -> Run {
        let config = exec.config();
        let priorities: Vec<_> = config.lanes.iter().map(|l| l.priority).collect();
        Run {
            exec: Some(exec.clone()),
            capacities: config.lanes.iter().map(|l| l.capacity).collect(),
            futures_in_lane: vec![0; priorities.len()],
            priorities,
            jobs: Vec::new(),
            futures: Vec::new(),
            max_ever: Arc::default(),
            may_be_closed: false,
            helper_wakes: false,
        }
    }

    fn exec(&self) -> &Executor {
        self.exec
            .as_ref()
            .expect("the script's clone of the executor")
    }

    pub fn lane_of(&self, p: u8) -> Priority {
        match self.priorities.get(usize::from(p)) {
            Some(&priority) => priority,
            // No lane has 1000: the lanes' priorities are u8.
            None => Priority(1000),
        }
    }

    fn index_of(&self, p: Priority) -> Option<usize> {
        self.priorities.iter().position(|&q| q == p)
    }

    pub fn is_bounded(&self, p: Priority) -> bool {
        self.index_of(p)
            .is_some_and(|i| matches!(self.capacities[i], Capacity::Bounded(_)))
    }

    pub fn check_refusal<F>(&self, e: &EnqueueError<F>, priority: Priority, blocking: bool) {
        match e {
            EnqueueError::UnknownPriority { .. } => assert!(!self.priorities.contains(&priority)),
            EnqueueError::Full { .. } => assert!(!blocking, "a blocking enqueue said Full"),
            EnqueueError::ShutDown { .. } => {
                assert!(
                    self.may_be_closed,
                    "refused as ShutDown before any shutdown"
                )
            }
            _ => panic!("unexpected error {e:?}"),
        }
    }

    pub fn join_one(&mut self, which: u8) {
        if self.jobs.is_empty() {
            return;
        }
        let i = usize::from(which) % self.jobs.len();
        if let Fate::Accepted(_) = self.jobs[i].fate {
            let Fate::Accepted(handle) = std::mem::replace(&mut self.jobs[i].fate, Fate::Refused)
            else {
                unreachable!()
            };
            self.jobs[i].fate = Fate::Joined(handle.join());
        }
    }

    pub fn cancel_one(&mut self, which: u8) {
        if self.jobs.is_empty() {
            return;
        }
        let i = usize::from(which) % self.jobs.len();
        let job = &mut self.jobs[i];
        // A held job is the script's way to keep a worker busy: it stays.
        if job.kind == Kind::Hold {
            return;
        }
        if let Fate::Accepted(handle) = &job.fate
            && handle.cancel()
        {
            job.cancelled = true;
            assert!(handle.is_finished(), "cancelled, yet not finished");
            assert!(!handle.cancel(), "cancelled twice");
        }
    }

    pub fn batch(&mut self, priority: Priority, len: usize, shape: Shape, panics_mask: u16) {
        let made = Rc::new(RefCell::new(Vec::new()));
        let jobs = batch::Jobs {
            len,
            shape,
            panics_mask,
            next: 0,
            paused: false,
            made: Rc::clone(&made),
        };
        let exec = self.exec().clone();
        let result = catch_unwind(AssertUnwindSafe(|| exec.enqueue_batch(priority, jobs)));
        let made = std::mem::take(&mut *made.borrow_mut());
        let push = |jobs: &mut Vec<Job>, m: batch::Made, fate| {
            jobs.push(Job::new(m.record, fate, m.panics, Kind::Plain))
        };
        match result {
            Ok(Ok(handles)) => {
                assert_eq!(handles.len(), made.len(), "a batch lost a job");
                for (m, handle) in made.into_iter().zip(handles) {
                    push(&mut self.jobs, m, Fate::Accepted(handle));
                }
            }
            Ok(Err(err)) => {
                self.check_refusal(&err.error, priority, true);
                let refused: Vec<_> = std::iter::once(err.error.into_inner())
                    .chain(err.rest)
                    .collect();
                assert_eq!(
                    err.accepted.len() + refused.len(),
                    made.len(),
                    "a refused batch lost a job"
                );
                let mut made = made.into_iter();
                for handle in err.accepted {
                    push(&mut self.jobs, made.next().unwrap(), Fate::Accepted(handle));
                }
                for job in refused {
                    let _ = catch_unwind(AssertUnwindSafe(job));
                    push(&mut self.jobs, made.next().unwrap(), Fate::Refused);
                }
            }
            Err(payload) => {
                let text = payload.downcast_ref::<String>().map(String::as_str);
                assert!(
                    text.is_some_and(is_deliberate),
                    "a batch panicked: {text:?}"
                );
                for m in made {
                    push(&mut self.jobs, m, Fate::Lost);
                }
            }
        }
    }

    pub fn spawn(&mut self, priority: Priority, pending: u8, self_wake: bool, panics: bool) {
        let (future, record, slot) = Pending::new(pending, self_wake, panics);
        match self.exec().spawn_future(priority, future) {
            Ok(handle) => {
                let lane = self
                    .index_of(priority)
                    .expect("accepted at a lane's priority");
                self.futures_in_lane[lane] += 1;
                self.futures.push(Future {
                    record,
                    slot,
                    handle: Some(handle),
                    lane,
                    panics,
                    waker_dropped: false,
                });
            }
            Err(e) => {
                self.check_refusal(&e, priority, true);
                drop(e.into_inner());
                assert_eq!((record.calls(), record.drops()), (0, 1), "a refused future");
            }
        }
    }

    pub fn wake_one(&mut self, which: u8, how: WakeHow, helper: &Helper) {
        if self.futures.is_empty() {
            return;
        }
        let i = usize::from(which) % self.futures.len();
        let Some(waker) = futures::lock(&self.futures[i].slot).waker.take() else {
            return;
        };
        match how {
            WakeHow::Wake => waker.wake(),
            WakeHow::ByRef => waker.wake_by_ref(),
            WakeHow::Twice => {
                waker.wake_by_ref();
                waker.wake();
            }
            WakeHow::FromHelper => {
                self.helper_wakes = true;
                helper.send(Command::Wake(waker));
            }
            WakeHow::Drop => {
                drop(waker);
                self.futures[i].waker_dropped = true;
            }
        }
    }

    pub fn shutdown_in_job(&mut self, priority: Priority) {
        // Known: two jobs calling `shutdown()` at once wait for each other
        // for ever (README, known findings).
        if self.may_be_closed && !crate::common::known_bugs() {
            return;
        }
        let (guard, record) = Guard::new();
        let exec = self.exec().clone();
        let job = move || {
            guard.called();
            exec.shutdown();
            assert!(exec.is_shut_down());
        };
        match self.exec().enqueue_with(
            priority,
            job,
            JobOptions::new().wait_at_most(Duration::ZERO),
        ) {
            Ok(handle) => {
                self.may_be_closed = true;
                self.jobs.push(Job::new(
                    record,
                    Fate::Accepted(handle),
                    false,
                    Kind::Shutdown,
                ));
            }
            Err(e) => {
                self.check_refusal(&e, priority, false);
                drop(e.into_inner());
                assert_eq!(record.drops(), 1);
            }
        }
    }

    pub fn check_metrics(&self) {
        let m = self.exec().metrics();
        // ORDERING: SeqCst, after the counts: a larger max set meanwhile
        // only loosens the bound.
        let max = self.max_ever.load(Ordering::SeqCst);
        assert!(m.threads.live <= max, "max ever {max}: {m:?}");
        assert!(m.threads.peak <= max, "max ever {max}: {m:?}");
        for (i, lane) in m.lanes.iter().enumerate() {
            // A future's later polls pass a full lane, as retries do.
            if let Capacity::Bounded(cap) = lane.capacity {
                assert!(lane.queued <= cap + self.futures_in_lane[i], "{lane:?}");
            }
        }
    }

    /// After `wait_idle` returned: every job this thread queued is done.
    pub fn check_idle(&self) {
        for (id, job) in self.jobs.iter().enumerate() {
            if let Fate::Accepted(handle) = &job.fate {
                assert!(handle.is_finished(), "idle, yet job {id} is not finished");
            }
        }
    }
}
