//! What a broker's handle, its cycle thread and its consumers share, and
//! the cycle itself (rule 23 of `src/actor/README.md`): hand out batches
//! round robin over the consumers registered, count the cycles that found
//! nothing to do, and end the broker.

use super::consumer::{self, Ties, Work};
use crate::actor::actor::Actor;
use crate::actor::addr::Downstream;
use crate::actor::lane::Lane;
use crate::actor::letter::Letter;
use crate::actor::letters::{DeadLetter, DeadReason};
use crate::actor::metrics::StageMetrics;
use crate::actor::reason::Reason;
use crate::actor::shared::Core;
use crate::actor::strategy::Strategy;
use crate::priority::Priority;
use crate::sync::{Condvar, Mutex, lock, wait_until};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::mpsc;
use std::thread::{self, JoinHandle, ThreadId};
use std::time::Instant;

/// A registered consumer, as the ring holds it.
struct Slot<M> {
    id: usize,
    tx: mpsc::Sender<Work<M>>,
    /// Its strategy's hop limit.
    hops: u32,
    /// Batches handed to it and not yet settled (performed, sent back or
    /// given back): the consumer lowers it as each batch ends.
    busy: Arc<AtomicUsize>,
}

/// Shown each batch a cycle hands out: the consumer and the letters.
pub(crate) type Note<'a, M> = dyn FnMut(usize, &[Letter<M>]) + 'a;

/// What one cycle did, for its caller: a tick's answer, the driver's
/// next wait.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cycled {
    /// Batches handed out.
    pub(crate) handed: usize,
    /// Letters may be left queued because every consumer it came to was
    /// still busy with a batch (`skip_busy` only): the next batch to end
    /// is the change to wait for.
    pub(crate) blocked: bool,
}

/// Wakes the threads waiting for a batch to settle (`wait_quiet`, a
/// driver whose consumers are all busy). Notifying costs a fence and a
/// load while nobody waits.
#[derive(Default)]
pub(crate) struct Settle {
    lock: Mutex<()>,
    cv: Condvar,
    waiters: AtomicUsize,
}

impl Settle {
    /// Called after a change a waiter may be waiting for (a batch ended,
    /// a cycle ran, the broker ended).
    pub(crate) fn notify(&self) {
        // Pairs with the waiter's SeqCst increment: either it sees the
        // change, or this sees it waiting (then its check and its wait are
        // one step under the lock, which this takes before notifying).
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) != 0 {
            drop(lock(&self.lock));
            self.cv.notify_all();
        }
    }

    /// Waits until `done` holds (`true`) or `deadline` passes (`false`).
    pub(crate) fn wait(&self, deadline: Option<Instant>, mut done: impl FnMut() -> bool) -> bool {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let mut guard = lock(&self.lock);
        let met = loop {
            if done() {
                break true;
            }
            guard = match wait_until(&self.cv, guard, deadline) {
                Ok(g) => g,
                Err(_) => break done(),
            };
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        met
    }
}

/// The consumers, in registration order, and the cycle's counts. Its lock
/// serialises cycles, registrations and unregistrations.
pub(crate) struct Ring<M> {
    consumers: Vec<Slot<M>>,
    /// Index of the consumer the next batch goes to.
    cursor: usize,
    next_id: usize,
    /// Cycles in a row that found the mailbox quiet.
    empty: u32,
    /// Cycles in a row with no consumer registered.
    lonely: u32,
    /// Set once a cycle ended the broker.
    ending: Option<Reason>,
    /// The thread running that end, until it is over: a sink the end
    /// calls runs there, and a tick it calls must not wait for the end.
    ender: Option<ThreadId>,
    /// Consumer threads not yet joined.
    threads: Vec<(usize, JoinHandle<()>)>,
}

impl<M> Default for Ring<M> {
    fn default() -> Self {
        Ring {
            consumers: Vec::new(),
            cursor: 0,
            next_id: 0,
            empty: 0,
            lonely: 0,
            ending: None,
            ender: None,
            threads: Vec::new(),
        }
    }
}

impl<M> Ring<M> {
    /// The hop limit every consumer registered has, if they agree on one:
    /// the letters the broker itself turns away are counted under it (no
    /// consumer's strategy decides for them; with none, or with different
    /// limits, the default one counts).
    fn hop_limit(&self) -> Option<u32> {
        let first = self.consumers.first()?.hops;
        self.consumers
            .iter()
            .all(|s| s.hops == first)
            .then_some(first)
    }
}

pub(crate) struct Shared<A: Actor> {
    /// The mailbox and the sinks (a `Core` whose instances are unused).
    pub(crate) core: Core<A::In>,
    /// Letters performed, by every consumer.
    pub(crate) performed: AtomicU64,
    pub(crate) down: Downstream<A::Out>,
    pub(crate) batch: usize,
    pub(crate) end_after: Option<u32>,
    /// Round robin over the consumers not busy with a batch.
    pub(crate) skip_busy: bool,
    pub(crate) ring: Mutex<Ring<A::In>>,
    /// Why it ended, once every consumer was destroyed.
    pub(crate) end: Mutex<Option<Reason>>,
    pub(crate) ended: Condvar,
    /// Batches settling, cycles, the end: what `wait_quiet` waits for.
    pub(crate) settle: Settle,
}

impl<A: Actor> Shared<A> {
    /// Runs one cycle: `Ok` with the batches handed out (consumer, size),
    /// in order; `Err` with the reason once the broker has ended (this
    /// cycle ended it, or one before; then every consumer was destroyed).
    pub(crate) fn cycle(&self) -> Result<Vec<(usize, usize)>, Reason> {
        let mut handed = Vec::new();
        self.cycle_with(&mut |id, letters| handed.push((id, letters.len())))?;
        Ok(handed)
    }

    /// As [`cycle`](Self::cycle), with the priorities of each batch's
    /// letters, in the order the consumer takes them.
    pub(crate) fn cycle_report(&self) -> Result<Vec<(usize, Vec<Priority>)>, Reason> {
        let mut handed = Vec::new();
        self.cycle_with(&mut |id, letters| {
            handed.push((id, letters.iter().map(|l| l.priority).collect()));
        })?;
        Ok(handed)
    }

    /// Runs one cycle, showing `note` each batch before it is handed
    /// over (under the ring's lock: `note` is the crate's, never user
    /// code).
    ///
    /// Called back by a sink of the end, on the thread running it, it
    /// returns the reason at once: that end goes on once the sink returns.
    pub(crate) fn cycle_with(&self, note: &mut Note<'_, A::In>) -> Result<Cycled, Reason> {
        let outcome = self.cycle_inner(note);
        // Letters a cycle turned away (expired) may have left the
        // mailbox quiet.
        self.settle.notify();
        outcome
    }

    fn cycle_inner(&self, note: &mut Note<'_, A::In>) -> Result<Cycled, Reason> {
        let mut ring = lock(&self.ring);
        if let Some(reason) = ring.ending {
            let here = ring.ender == Some(thread::current().id());
            drop(ring);
            return Err(if here { reason } else { self.wait_end(reason) });
        }
        let hops = ring.hop_limit();
        let mb = &self.core.mb;
        let mut dead = Vec::new();
        let mut cycled = Cycled::default();
        let mut end = None;
        if ring.consumers.is_empty() {
            ring.lonely += 1;
            ring.empty = 0;
            // Asked to end (drain, stop, kill) with nobody to hand the
            // letters to: it ends now, as after N cycles alone.
            if mb.interrupts() != 0 || self.end_after.is_some_and(|n| ring.lonely >= n) {
                end = Some(Reason::NoConsumers);
            }
        } else {
            ring.lonely = 0;
            let k = ring.consumers.len();
            let start = ring.cursor;
            // Each consumer is come to once a cycle, from the cursor on:
            // strictly in turn, or (`skip_busy`) passing over those still
            // busy with a batch, which keep their place for the next cycle.
            let mut skipped = false;
            let mut stopped = false;
            for step in 0..k {
                let pos = (start + step) % k;
                if self.skip_busy && ring.consumers[pos].busy.load(Ordering::Acquire) != 0 {
                    skipped = true;
                    continue;
                }
                let (letters, closed) = self.take_batch(&mut dead);
                let full = letters.len() == self.batch;
                if !letters.is_empty() {
                    let slot = &ring.consumers[pos];
                    note(slot.id, &letters);
                    cycled.handed += 1;
                    slot.busy.fetch_add(1, Ordering::Relaxed);
                    if let Err(mpsc::SendError(work)) = slot.tx.send(Work::Batch(letters)) {
                        // The consumer's thread is gone (it ends only on
                        // `End`): nothing is lost, the letters go back.
                        slot.busy.fetch_sub(1, Ordering::Relaxed);
                        consumer::give_back(&self.core, work, slot.hops, &mut dead);
                    }
                    ring.cursor = (pos + 1) % k;
                }
                if closed.is_some() {
                    end = closed;
                    stopped = true;
                    break;
                }
                if !full {
                    stopped = true;
                    break;
                }
            }
            cycled.blocked = skipped && !stopped;
            if cycled.handed == 0 && end.is_none() && mb.in_flight() == 0 && !mb.has_mail() {
                ring.empty += 1;
                if self.end_after.is_some_and(|n| ring.empty >= n) {
                    end = Some(Reason::Idle);
                }
            } else {
                ring.empty = 0;
            }
        }
        let Some(reason) = end else {
            drop(ring);
            // User callbacks run outside the ring's lock: a sink may
            // register, unregister or tick.
            self.deliver_dead(&mut dead, hops);
            return Ok(cycled);
        };
        let me = thread::current().id();
        ring.ending = Some(reason);
        ring.ender = Some(me);
        for slot in ring.consumers.drain(..) {
            let _ = slot.tx.send(Work::End(reason));
        }
        // A consumer whose own tick runs this cycle keeps its thread in the
        // ring: it cannot join itself, and `join_rest` joins it once its
        // batch is over.
        let (mine, threads): (Vec<_>, Vec<_>) = std::mem::take(&mut ring.threads)
            .into_iter()
            .partition(|(_, handle)| handle.thread().id() == me);
        ring.threads = mine;
        drop(ring);
        // The sinks run before `end` is set, on this thread: a tick from
        // one of them returns at once (`ender`) instead of waiting for
        // this end (a drop of the broker there: see its `Drop`).
        mb.close(reason, DeadReason::after(reason), &mut dead);
        self.deliver_dead(&mut dead, hops);
        // The consumers perform the batches they hold, then are destroyed.
        join_all(threads);
        // Letters sent back by those last batches: never stranded.
        mb.sweep_rest(DeadReason::after(reason), &mut dead);
        self.deliver_dead(&mut dead, hops);
        *lock(&self.end) = Some(reason);
        lock(&self.ring).ender = None;
        self.ended.notify_all();
        self.settle.notify();
        Err(reason)
    }

    /// Takes one batch: up to `batch` letters, with room made for the
    /// letters queued as it takes them, never for a full batch at once (a
    /// batch of 65,536 letters of 512 KiB is 32 GiB; of 1 KiB, 64 MiB
    /// every cycle). With the reason, if the mailbox says the end has
    /// come.
    fn take_batch(
        &self,
        dead: &mut Vec<DeadLetter<A::In>>,
    ) -> (Vec<Letter<A::In>>, Option<Reason>) {
        let mb = &self.core.mb;
        let mut letters = Vec::new();
        loop {
            // At least one, so that an empty mailbox still says whether
            // the end has come; letters sent meanwhile are taken by the
            // next round.
            let queued: usize = mb.lanes().map(Lane::queued).sum();
            let want = (self.batch - letters.len()).min(queued.max(1));
            let (more, closed) = mb.take_batch(want, dead);
            let got = more.len();
            if letters.is_empty() {
                letters = more;
            } else {
                letters.extend(more);
            }
            // Fewer than asked for: the mailbox is empty.
            if closed.is_some() || got < want || letters.len() == self.batch {
                return (letters, closed);
            }
        }
    }

    /// Hands out the letters the broker turned away, counted under the
    /// consumers' hop limit if they share one.
    fn deliver_dead(&self, dead: &mut Vec<DeadLetter<A::In>>, hops: Option<u32>) {
        if let Some(hops) = hops {
            consumer::count_hops_under(dead, hops);
        }
        self.core.deliver_dead(dead);
    }

    /// Waits until the cycle that ended the broker has destroyed every
    /// consumer (another thread may be running it).
    fn wait_end(&self, reason: Reason) -> Reason {
        // A consumer cannot wait for the cycle that waits for it.
        if self.core.mb.is_own_thread() {
            return reason;
        }
        let mut end = lock(&self.end);
        loop {
            if let Some(reason) = *end {
                return reason;
            }
            end = match self.ended.wait(end) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
    }

    /// After the end, on a thread that is not a consumer: joins the
    /// consumer threads the end could not (one whose own tick ended the
    /// broker, ones unregistered by a consumer), so that nothing of theirs
    /// is still running once `join` or `drain` returns.
    pub(crate) fn join_rest(&self) {
        let threads = std::mem::take(&mut lock(&self.ring).threads);
        join_all(threads);
    }

    pub(crate) fn finished(&self) -> Option<Reason> {
        *lock(&self.end)
    }

    /// Starts a consumer: its `init` runs on its own thread; once it
    /// succeeded the consumer joins the ring after the one registered
    /// last (registration order).
    /// A strategy a stage's spawn would refuse (`step(0)`) is refused.
    pub(crate) fn register(self: &Arc<Self>, actor: A, strategy: Strategy<A::In>) -> Option<usize> {
        strategy.check().ok()?;
        let hops = strategy.hops();
        let mut ring = lock(&self.ring);
        if ring.ending.is_some() {
            return None;
        }
        let id = ring.next_id;
        ring.next_id += 1;
        drop(ring);
        let (tx, rx) = mpsc::channel();
        let (started_tx, started) = mpsc::sync_channel(1);
        let shared = self.clone();
        let busy = Arc::new(AtomicUsize::new(0));
        let its_busy = busy.clone();
        let handle = consumer::thread_for::<A::In>(consumer::thread_name(&self.core.mb.name))
            .spawn(move || {
                let ties = Ties {
                    core: &shared.core,
                    down: &shared.down,
                    performed: &shared.performed,
                    busy: &its_busy,
                    settle: &shared.settle,
                };
                consumer::run(&ties, strategy, actor, id, &rx, &started_tx);
            })
            .ok()?;
        let ok = started.recv().unwrap_or(false);
        let mut ring = lock(&self.ring);
        match ring.ending {
            Some(reason) if ok => {
                let _ = tx.send(Work::End(reason));
            }
            None if ok => {
                ring.consumers.push(Slot { id, tx, hops, busy });
                ring.threads.push((id, handle));
                drop(ring);
                // A consumer free of batches: news for a driver whose
                // consumers are all busy.
                self.settle.notify();
                return Some(id);
            }
            _ => {}
        }
        drop(ring);
        join_all(vec![(id, handle)]);
        None
    }

    /// Removes a consumer from the ring: it performs the batches it holds,
    /// then is destroyed (`Reason::Unregistered`) before this returns,
    /// unless called on a consumer's thread: a consumer never joins another
    /// (two unregistering each other would wait for each other), and its
    /// thread is joined at the broker's end instead.
    pub(crate) fn unregister(&self, id: usize) -> bool {
        let mut ring = lock(&self.ring);
        let Some(pos) = ring.consumers.iter().position(|s| s.id == id) else {
            return false;
        };
        let slot = ring.consumers.remove(pos);
        // The consumer that was next stays next.
        if pos < ring.cursor {
            ring.cursor -= 1;
        }
        if ring.cursor >= ring.consumers.len() {
            ring.cursor = 0;
        }
        let _ = slot.tx.send(Work::End(Reason::Unregistered));
        let thread = if self.core.mb.is_own_thread() {
            // Left to be joined later; the finished ones go now.
            ring.threads.retain(|(_, handle)| !handle.is_finished());
            None
        } else {
            let at = ring.threads.iter().position(|(t, _)| *t == id);
            at.map(|i| ring.threads.remove(i))
        };
        drop(ring);
        join_all(thread.into_iter().collect());
        true
    }

    /// Nothing queued, nothing handed out and not yet settled; or ended.
    pub(crate) fn is_quiet(&self) -> bool {
        if self.finished().is_some() {
            return true;
        }
        // Under the ring's lock no cycle takes a letter: `in_flight` can
        // only fall and the lanes only fill between the two reads, so
        // both at zero were so together, when the second was read.
        let _ring = lock(&self.ring);
        self.core.mb.in_flight() == 0 && !self.core.mb.has_mail()
    }

    /// Is a consumer free of batches, or the broker ending (the wait of a
    /// driver whose cycle found every consumer busy)?
    pub(crate) fn any_free(&self) -> bool {
        let ring = lock(&self.ring);
        ring.ending.is_some()
            || ring.consumers.is_empty()
            || ring
                .consumers
                .iter()
                .any(|s| s.busy.load(Ordering::Acquire) == 0)
    }

    /// The consumers registered, in round-robin order from the next one.
    pub(crate) fn consumers(&self) -> Vec<usize> {
        let ring = lock(&self.ring);
        let n = ring.consumers.len();
        (0..n)
            .map(|i| ring.consumers[(ring.cursor + i) % n].id)
            .collect()
    }

    pub(crate) fn metrics(&self) -> StageMetrics {
        let mut m = self.core.metrics();
        // ORDERING: Relaxed, a snapshot (see `Batch`'s count).
        m.performed = self.performed.load(Ordering::Relaxed);
        m.instances = lock(&self.ring).consumers.len();
        m
    }
}

/// Joins consumer threads, except the calling one (a consumer that ended
/// its own broker); a panic there was caught already.
fn join_all(threads: Vec<(usize, JoinHandle<()>)>) {
    let me = thread::current().id();
    for (_, handle) in threads {
        if handle.thread().id() != me {
            let _ = handle.join();
        }
    }
}
