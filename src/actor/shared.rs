//! What a stage's instances and its handle share: the mailbox, the fault
//! and dead-letter sinks, the latch every `init` reports to, the count of
//! instances gone, whose last one ends the stage and passes the drain
//! marker on, and the removals asked for (rule 26 of `README.md`).

use super::counts::PerInstance;
use super::head::Head;
use super::letters::{DeadLetter, DeadReason, Fault};
use super::mailbox::Mailbox;
use super::metrics::{MailboxLaneMetrics, StageMetrics};
use super::reason::Reason;
use crate::executor::Executor;
use crate::sync::{Condvar, Mutex, lock};
use crate::util::{call_quietly, drop_quietly};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A user callback (a sink).
pub(crate) type Callback<T> = Arc<dyn Fn(T) + Send + Sync>;

/// Where faults or dead letters go: a callback, or kept for `take_*`.
pub(crate) enum Sink<T> {
    Call(Callback<T>),
    Keep(Mutex<Vec<T>>),
}

impl<T> Drop for Sink<T> {
    /// Kept faults and dead letters nobody took hold user messages, whose
    /// drop is user code: each is dropped quietly, so a panic there fails
    /// neither the `join` or `drain` that drops the stage nor aborts the
    /// process on a second one.
    fn drop(&mut self) {
        if let Sink::Keep(kept) = self {
            for item in std::mem::take(&mut *lock(kept)) {
                drop_quietly(item);
            }
        }
    }
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

pub(crate) struct Life {
    /// Instances started, by `spawn` and by every `resize` since: fewer
    /// than `spawn` asked for if the factory panicked (`spawn_failed`).
    started: usize,
    spawn_failed: bool,
    /// Instances that finished `init`.
    inited: usize,
    exited: usize,
    /// The stage's size: instances whose `init` succeeded, less those a
    /// resize asked to leave.
    size: usize,
    /// Indices of instances that exited, taken again by instances added
    /// later (lowest first); then `next_index`.
    free: BTreeSet<usize>,
    next_index: usize,
    /// How the instances that served ended.
    served: Option<Reason>,
    reason: Option<Reason>,
    /// The stage's executor, handed over by a handle dropped on one of
    /// the instances' threads (rule 19): the last instance to exit drops
    /// it.
    orphan: Option<Executor>,
}

impl Life {
    /// Has the stage ended?
    pub(crate) fn ended(&self) -> bool {
        self.reason.is_some()
    }

    pub(crate) fn new(instances: usize) -> Life {
        Life {
            started: instances,
            spawn_failed: false,
            inited: 0,
            exited: 0,
            size: 0,
            free: BTreeSet::new(),
            next_index: instances,
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
    /// Letters performed, per instance index.
    pub(crate) performed: PerInstance,
    /// Instances asked to leave by a resize and not yet gone: each
    /// serving instance takes one at most, after its letter.
    pub(crate) leaving: AtomicUsize,
    pub(crate) life: Mutex<Life>,
    pub(crate) changed: Condvar,
    /// The next stage of a pipeline: it gets the drain marker when this
    /// stage ends.
    pub(crate) next: Option<Arc<dyn Link>>,
    /// Where a drain an instance asks for begins (`Outbox::drain_pipeline`).
    pub(crate) head: Arc<Head>,
}

impl<I> Core<I> {
    /// A stage's (or broker's) core around its mailbox, with `instances`
    /// to start, its sinks, and where its drain goes and begins.
    pub(crate) fn new(
        mb: Arc<Mailbox<I>>,
        instances: usize,
        on_fault: Option<Callback<Fault<I>>>,
        on_dead_letter: Option<Callback<DeadLetter<I>>>,
        next: Option<Arc<dyn Link>>,
        head: Arc<Head>,
    ) -> Core<I> {
        Core {
            mb,
            faults: Sink::new(on_fault),
            dead: Sink::new(on_dead_letter),
            performed: PerInstance::new(instances),
            leaving: AtomicUsize::new(0),
            life: Mutex::new(Life::new(instances)),
            changed: Condvar::new(),
            next,
            head,
        }
    }

    /// An instance finished `init` (rule 13).
    pub(crate) fn init_done(&self, ok: bool) {
        let mut life = lock(&self.life);
        life.inited += 1;
        if ok {
            life.size += 1;
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

    /// Instance `index` is done (destroyed); its index is free again.
    /// The last one ends the stage: whatever is left in a lane becomes a
    /// dead letter, the joiners are told, and the next stage gets the
    /// drain marker. An instance that failed `init` or was removed does
    /// not give the stage its reason.
    pub(crate) fn exited(&self, index: usize, reason: Reason) {
        let mut life = lock(&self.life);
        life.exited += 1;
        life.free.insert(index);
        if !matches!(reason, Reason::FailedInit | Reason::Removed) {
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

    /// The stage's size (rule 26): instances serving or about to, less
    /// those asked to leave.
    pub(crate) fn size(&self) -> usize {
        lock(&self.life).size
    }

    /// Instances whose job runs: started and not yet exited (those asked
    /// to leave included, until they are gone).
    pub(crate) fn running(&self) -> usize {
        let life = lock(&self.life);
        life.started - life.exited
    }

    /// Counts one more instance started, and gives it the lowest free
    /// index; `None` once the stage has ended or its last instance is
    /// exiting (nothing may start then).
    pub(crate) fn add_instance(&self) -> Option<usize> {
        let mut life = lock(&self.life);
        if life.reason.is_some() || life.exited >= life.started {
            return None;
        }
        life.started += 1;
        let index = match life.free.pop_first() {
            Some(index) => index,
            None => {
                life.next_index += 1;
                life.next_index - 1
            }
        };
        Some(index)
    }

    /// Asks `n` serving instances to leave (fewer than the size): the
    /// size drops at once; each of `n` instances leaves after its letter.
    /// The caller then wakes the waiting instances.
    pub(crate) fn remove(&self, n: usize) {
        let mut life = lock(&self.life);
        life.size -= n;
        // ORDERING: SeqCst, read by `take_leave` after the instance read
        // the generation the caller bumps next (instance.rs).
        self.leaving.fetch_add(n, Ordering::SeqCst);
    }

    /// Takes back up to `most` removals asked for and not yet taken (the
    /// instances asked to leave stay): the size grows by as many. Returns
    /// how many.
    pub(crate) fn take_back(&self, most: usize) -> usize {
        let mut life = lock(&self.life);
        // ORDERING: SeqCst, as in `remove`; an instance may take one at
        // the same time, so the count is updated as one step.
        let before = self
            .leaving
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                Some(n - n.min(most))
            })
            .unwrap_or(0);
        let taken = before.min(most);
        life.size += taken;
        taken
    }

    /// No instance serves nor will: every instance started has finished
    /// `init`, and none is counted in the size (every `init` failed).
    pub(crate) fn serves_none(&self) -> bool {
        let life = lock(&self.life);
        life.size == 0 && life.inited == life.started
    }

    /// Takes one removal asked for, if any: the caller leaves.
    pub(crate) fn take_leave(&self) -> bool {
        // ORDERING: SeqCst, as in `remove`.
        self.leaving
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
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
            instances: self.size(),
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
