//! What a stage's instances and its handle share: the mailbox, the fault
//! and dead-letter sinks, the latch every `init` reports to, and the count
//! of instances gone, whose last one ends the stage and passes the drain
//! marker on.

use super::head::Head;
use super::letters::{DeadLetter, DeadReason, Fault};
use super::mailbox::Mailbox;
use super::metrics::{MailboxLaneMetrics, StageMetrics};
use super::reason::Reason;
use crate::executor::Executor;
use crate::sync::owned::OwnedCount;
use crate::sync::{Condvar, Mutex, lock};
use crate::util::call_quietly;
use crossbeam_utils::CachePadded;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A user callback (a sink).
pub(crate) type Callback<T> = Arc<dyn Fn(T) + Send + Sync>;

/// Where faults or dead letters go: a callback, or kept for `take_*`.
pub(crate) enum Sink<T> {
    Call(Callback<T>),
    Keep(Mutex<Vec<T>>),
}

impl<T> Sink<T> {
    pub(crate) fn new(callback: Option<Callback<T>>) -> Sink<T> {
        match callback {
            Some(f) => Sink::Call(f),
            None => Sink::Keep(Mutex::new(Vec::new())),
        }
    }

    pub(crate) fn put(&self, item: T) {
        match self {
            Sink::Call(f) => call_quietly(|| f(item)),
            Sink::Keep(v) => lock(v).push(item),
        }
    }

    pub(crate) fn take(&self) -> Vec<T> {
        match self {
            Sink::Call(_) => Vec::new(),
            Sink::Keep(v) => std::mem::take(&mut *lock(v)),
        }
    }

    /// The last `n` items kept, oldest first, each read through `read`,
    /// without taking them (none with a callback).
    pub(crate) fn latest<U>(&self, n: usize, read: impl Fn(&T) -> U) -> Vec<U> {
        match self {
            Sink::Call(_) => Vec::new(),
            Sink::Keep(v) => {
                let kept = lock(v);
                kept[kept.len().saturating_sub(n)..]
                    .iter()
                    .map(read)
                    .collect()
            }
        }
    }
}

/// One count per instance, each on its own cache line and written only by
/// its instance's thread ([`OwnedCount`]), summed when read: a count that
/// moves with every letter costs its instance no read-modify-write, and N
/// instances do not pass one line between them. A reader after the stage
/// ended is ordered after each instance's last add by the `life` lock its
/// exit took; a reader before gets a figure of the moment.
pub(crate) struct PerInstance(Box<[CachePadded<OwnedCount>]>);

impl PerInstance {
    pub(crate) fn new(instances: usize) -> PerInstance {
        PerInstance((0..instances).map(|_| CachePadded::default()).collect())
    }

    /// Adds one to instance `index`'s count. Only that instance's thread
    /// calls this.
    #[inline]
    pub(crate) fn add_one(&self, index: usize) {
        self.0[index].add_one();
    }

    pub(crate) fn sum(&self) -> u64 {
        self.0.iter().map(|c| c.get()).sum()
    }
}

pub(crate) struct Life {
    /// Instances started: all of them, or fewer if the factory panicked
    /// (`spawn_failed`).
    started: usize,
    spawn_failed: bool,
    /// Instances that finished `init`, and of those, that failed it.
    inited: usize,
    failed: usize,
    exited: usize,
    /// How the instances that served ended.
    served: Option<Reason>,
    reason: Option<Reason>,
    /// The stage's executor, handed over by a handle dropped on one of
    /// the instances' threads (rule 19): the last instance to exit drops
    /// it.
    orphan: Option<Executor>,
}

impl Life {
    pub(crate) fn new(instances: usize) -> Life {
        Life {
            started: instances,
            spawn_failed: false,
            inited: 0,
            failed: 0,
            exited: 0,
            served: None,
            reason: None,
            orphan: None,
        }
    }
}

/// What a stage's instances and its handle share; type-erased for
/// pipelines as [`Link`].
pub(crate) struct Core<I> {
    pub(crate) mb: Arc<Mailbox<I>>,
    pub(crate) faults: Sink<Fault<I>>,
    pub(crate) dead: Sink<DeadLetter<I>>,
    pub(crate) instances: usize,
    /// Letters performed, per instance.
    pub(crate) performed: PerInstance,
    pub(crate) life: Mutex<Life>,
    pub(crate) changed: Condvar,
    /// The next stage of a pipeline: it gets the drain marker when this
    /// stage ends.
    pub(crate) next: Option<Arc<dyn Link>>,
    /// Where a drain an instance asks for begins (`Outbox::drain_pipeline`).
    pub(crate) head: Arc<Head>,
}

impl<I> Core<I> {
    /// An instance finished `init` (rule 13).
    pub(crate) fn init_done(&self, ok: bool) {
        let mut life = lock(&self.life);
        life.inited += 1;
        if !ok {
            life.failed += 1;
        }
        if life.inited == life.started {
            self.changed.notify_all();
        }
    }

    /// The factory panicked making instance `made`: only the instances
    /// before it were started. They end once their `init` is done.
    pub(crate) fn abort_spawn(&self, made: usize) {
        let mut life = lock(&self.life);
        life.started = made;
        life.spawn_failed = true;
        self.changed.notify_all();
    }

    /// Waits until every instance started has finished `init`; returns
    /// whether the stage is to serve (`false`: its spawn failed).
    pub(crate) fn wait_inits(&self) -> bool {
        let mut life = lock(&self.life);
        while life.inited < life.started {
            life = match self.changed.wait(life) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
        !life.spawn_failed
    }

    /// Hands out dead letters, in order, and counts them.
    /// Counted after they are handed out, so a caller that sees the count
    /// finds them in the sink.
    pub(crate) fn deliver_dead(&self, dead: &mut Vec<DeadLetter<I>>) {
        let n = dead.len() as u64;
        for letter in dead.drain(..) {
            self.dead.put(letter);
        }
        self.mb
            .counters
            .dead_lettered
            .fetch_add(n, Ordering::Relaxed);
    }

    /// An instance is done (destroyed). The last one ends the stage:
    /// whatever is left in a lane becomes a dead letter, the joiners are
    /// told, and the next stage gets the drain marker.
    pub(crate) fn exited(&self, reason: Reason) {
        let mut life = lock(&self.life);
        life.exited += 1;
        if reason != Reason::FailedInit {
            life.served = Some(reason);
        }
        if life.exited < life.started {
            return;
        }
        let reason = life.served.unwrap_or(Reason::FailedInit);
        drop(life);
        let mut dead = Vec::new();
        if reason == Reason::FailedInit {
            self.mb.close_failed(&mut dead);
        }
        let why = DeadReason::after(reason);
        self.mb.sweep_rest(why, &mut dead);
        self.deliver_dead(&mut dead);
        if let Some(next) = &self.next {
            next.begin_drain();
        }
        let mut life = lock(&self.life);
        life.reason = Some(reason);
        self.changed.notify_all();
        let orphan = life.orphan.take();
        drop(life);
        // The executor of a handle dropped on an instance's thread: its
        // shutdown, from this worker, waits for every other worker only.
        drop(orphan);
    }

    /// Takes the executor of a handle dropped on one of the instances'
    /// threads, which cannot wait for itself (rule 19): the last instance
    /// to exit drops it; if the stage has ended already, it is dropped
    /// here.
    pub(crate) fn hand_over(&self, exec: Executor) {
        let mut life = lock(&self.life);
        if life.reason.is_none() {
            life.orphan = Some(exec);
            return;
        }
        drop(life);
        drop(exec);
    }

    pub(crate) fn wait_done(&self) -> Reason {
        let mut life = lock(&self.life);
        loop {
            if let Some(reason) = life.reason {
                return reason;
            }
            life = match self.changed.wait(life) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
    }

    pub(crate) fn finished(&self) -> Option<Reason> {
        lock(&self.life).reason
    }

    pub(crate) fn metrics(&self) -> StageMetrics {
        let mb = &self.mb;
        let mut lanes: Vec<MailboxLaneMetrics> = mb
            .lanes()
            .map(|l| MailboxLaneMetrics {
                priority: l.priority,
                weight: l.weight,
                capacity: l.capacity,
                queued: l.queued(),
                accepted: l.accepted(),
                dispatched: l.dispatched(),
            })
            .collect();
        lanes.sort_by_key(|l| std::cmp::Reverse(l.priority));
        let c = &mb.counters;
        let accepted = mb.accepted();
        let handed_back = mb.handed_back();
        StageMetrics {
            name: mb.name.clone(),
            instances: self.instances,
            offered: accepted + handed_back,
            accepted,
            handed_back,
            performed: self.performed.sum(),
            faulted: c.faulted.load(Ordering::Relaxed),
            dead_lettered: c.dead_lettered.load(Ordering::Relaxed),
            sent_back: c.sent_back.load(Ordering::Relaxed),
            retried: c.retried.load(Ordering::Relaxed),
            queued: lanes.iter().map(|l| l.queued).sum(),
            running: mb.in_flight(),
            lanes,
        }
    }
}

/// A stage as a pipeline sees it, whatever its message types.
pub(crate) trait Link: Send + Sync {
    fn begin_drain(&self);
    fn wait_done(&self) -> Reason;
    fn metrics(&self) -> StageMetrics;
    /// Is the calling thread one of the stage's instances?
    fn is_own_thread(&self) -> bool;
    fn hand_over(&self, exec: Executor);
    /// Has the stage ended, and why?
    fn finished(&self) -> Option<Reason>;
    /// Begins the drain at the first stage of the stage's pipeline (this
    /// stage outside one), as `Outbox::drain_pipeline`.
    fn drain_pipeline(&self);
    /// The last `n` faults kept, without their messages.
    fn latest_faults(&self, n: usize) -> Vec<Fault<()>>;
    /// The last `n` dead letters kept, without their messages.
    fn latest_dead_letters(&self, n: usize) -> Vec<DeadLetter<()>>;
}

impl<I: Send + 'static> Link for Core<I> {
    fn begin_drain(&self) {
        self.mb.begin_drain();
    }

    fn is_own_thread(&self) -> bool {
        self.mb.is_own_thread()
    }

    fn hand_over(&self, exec: Executor) {
        Core::hand_over(self, exec);
    }

    fn wait_done(&self) -> Reason {
        Core::wait_done(self)
    }

    fn metrics(&self) -> StageMetrics {
        Core::metrics(self)
    }

    fn finished(&self) -> Option<Reason> {
        Core::finished(self)
    }

    fn drain_pipeline(&self) {
        self.head.drain();
    }

    fn latest_faults(&self, n: usize) -> Vec<Fault<()>> {
        self.faults.latest(n, Fault::without_message)
    }

    fn latest_dead_letters(&self, n: usize) -> Vec<DeadLetter<()>> {
        self.dead.latest(n, DeadLetter::without_message)
    }
}

/// How a stage ended, and its counters at the end.
///
/// # Examples
///
/// See [`Stage::drain`](super::Stage::drain).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Exit {
    /// Why the instances were destroyed.
    pub reason: Reason,
    /// The counters once every instance was destroyed.
    pub metrics: StageMetrics,
}
