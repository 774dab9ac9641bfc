//! A stage's mailbox: one FIFO lane per priority, the door senders pass,
//! and the dispatch that instances take letters through. The rules it
//! keeps are numbered in `README.md` beside this file.
//!
//! - Senders never lock: they pick the lane, take a slot (one atomic
//!   operation on the lane's `opened` count, which also says whether the
//!   lane is closed and, if bounded, full), and push.
//! - Instances dispatch under the *take lock*: choosing the lane, popping,
//!   and acting on `stop` and `kill` are one step, so no instance can
//!   dispatch a letter after another instance dispatched the `stop` ahead
//!   of it. Performing happens outside the lock.
//! - Closing the door sets the top bit of every lane's `opened`. A letter
//!   is accepted if its slot was taken before that; the lane's length
//!   (`opened - taken`, see `lane/`) counts it from then until it is
//!   popped, so a sweep that pops until the length is zero (waiting for
//!   pushes still under way) leaves nothing accepted behind, and a stage
//!   ends only when every lane's length is zero.

use super::config::{LaneSpec, MAX_LANES, MailboxConfig, Unlisted};
use super::error::SendError;
use super::lane::{Entry, Lane, NoSlot, Ticket};
use super::letter::Letter;
use super::priority::PriorityGenerator;
use super::signal::Signal;
use super::take::{Phase, Take};
use crate::lane::picker::{Picker, Schedule};
use crate::priority::{Capacity, Priority};
use crate::sync::Wait;
use crate::sync::spin::SpinLock;
use crate::sync::{Mutex, lock};
use crossbeam_utils::CachePadded;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// The instance side's counters (see `README.md`, rule 18); the count of
/// performs, the one that moves with every letter, is kept per instance
/// ([`PerInstance`](super::shared::PerInstance) in the stage's `Core`).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) faulted: AtomicU64,
    pub(crate) dead_lettered: AtomicU64,
    pub(crate) sent_back: AtomicU64,
    pub(crate) retried: AtomicU64,
}

/// A `kill` was queued: a retry starts no further attempt.
pub(crate) const KILL_SENT: usize = 1;
/// A `stop` was queued: retries run without their backoff.
pub(crate) const STOP_SENT: usize = 2;
/// A drain began: retries run without their backoff.
pub(crate) const DRAINING: usize = 4;

pub(crate) struct Mailbox<M> {
    pub(crate) name: String,
    pub(crate) slots: Box<[OnceLock<Box<Lane<M>>>]>,
    pub(crate) live: AtomicUsize,
    pub(crate) grow: Mutex<()>,
    pub(crate) unlisted: Unlisted,
    pub(crate) default_capacity: Capacity,
    pub(crate) default_priority: Priority,
    pub(crate) stop_priority: Priority,
    pub(crate) kill_priority: Priority,
    pub(crate) generator: PriorityGenerator<M>,
    /// Set (under `grow`) when the door closes.
    pub(crate) closed: AtomicBool,
    pub(crate) handed_back: CachePadded<AtomicU64>,
    /// Taken for every dispatch: on a line of its own, away from what
    /// every send reads.
    pub(crate) take: CachePadded<SpinLock<Take>>,
    /// Instances waiting for a letter or a change of phase. On a line of
    /// its own: every send reads it, and the take lock and the counts an
    /// instance writes for every letter must not share its line.
    pub(crate) ready: CachePadded<Signal>,
    /// Bumped at every change a waiting instance must look at.
    pub(crate) generation: AtomicUsize,
    /// Written for every letter (under the take lock): on a line of its
    /// own too.
    pub(crate) in_flight: CachePadded<AtomicUsize>,
    /// Control sent so far ([`KILL_SENT`], [`STOP_SENT`], [`DRAINING`]):
    /// what ends a retry's backoff (rule 15).
    pub(crate) interrupts: AtomicUsize,
    /// Instances waiting out a retry's backoff. Not `ready`: a send's
    /// `notify_one` must reach an instance that can dispatch its letter.
    pub(crate) backoff: Signal,
    /// The stage ends when idle (rule 11): the end of the last perform
    /// running is a change its waiting instances look at.
    pub(crate) idle: bool,
    /// The strategy's hop limit, for the letters' [`LetterInfo`](super::LetterInfo).
    pub(crate) hop_limit: u32,
    pub(crate) counters: Counters,
}
impl<M> Mailbox<M> {
    /// Letters dispatched and not yet done. Exact under the take lock;
    /// outside it, see [`Mailbox::wait_no_perform`].
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    pub(crate) fn new(
        name: String,
        config: &MailboxConfig,
        generator: PriorityGenerator<M>,
        idle: bool,
        hop_limit: u32,
    ) -> Mailbox<M> {
        let mut declared = config.lanes.clone();
        declared.sort_by_key(|l| std::cmp::Reverse(l.priority));
        let slots: Box<[OnceLock<Box<Lane<M>>>]> =
            (0..MAX_LANES).map(|_| OnceLock::new()).collect();
        for (slot, spec) in slots.iter().zip(&declared) {
            let _ = slot.set(Box::new(Lane::new(*spec)));
        }
        let schedule = (config.picker != Picker::Strict).then(|| {
            let weights: Vec<u32> = declared.iter().map(|l| l.weight).collect();
            Schedule::new(config.picker, &weights)
        });
        Mailbox {
            name,
            slots,
            live: AtomicUsize::new(declared.len()),
            grow: Mutex::new(()),
            unlisted: config.unlisted,
            default_capacity: config.default_capacity,
            default_priority: config.default_priority,
            stop_priority: config.stop_priority,
            kill_priority: config.kill_priority,
            generator,
            closed: AtomicBool::new(false),
            handed_back: CachePadded::new(AtomicU64::new(0)),
            take: CachePadded::new(SpinLock::new(Take {
                phase: Phase::Running,
                order: (0..declared.len()).collect(),
                schedule,
                // The picker's type (a loom atomic in the models).
                cursor: crate::sync::atomic::AtomicUsize::new(0),
            })),
            ready: CachePadded::new(Signal::default()),
            generation: AtomicUsize::new(0),
            in_flight: CachePadded::new(AtomicUsize::new(0)),
            interrupts: AtomicUsize::new(0),
            backoff: Signal::default(),
            idle,
            hop_limit,
            counters: Counters::default(),
        }
    }

    /// This mailbox's identity for [`current`](super::current): its
    /// address, fixed while the stage's `Arc` holds it.
    #[inline]
    pub(crate) fn id(&self) -> usize {
        std::ptr::from_ref(self).cast::<()>() as usize
    }

    /// Is the calling thread one of this stage's instances?
    #[inline]
    pub(crate) fn is_own_thread(&self) -> bool {
        super::current::is_serving(self.id())
    }

    // ===== lanes =====

    /// The live lanes, in slot order (declared first, then by creation).
    pub(crate) fn lanes(&self) -> impl Iterator<Item = &Lane<M>> {
        // ORDERING: SeqCst, not just Acquire: an idle instance's check of
        // the ready signal's Dekker pair (signal.rs) reads the lanes
        // through this count. An Acquire load there may miss a lane a
        // sender has just created (rule 3), while that sender's notify
        // misses the instance armed: the instance would sleep through the
        // letter, and the sender would then wait for room for ever
        // (`a_lane_created_by_a_send_wakes_the_idle_instance`, Miri). With
        // both this load and the store in `new_lane` SeqCst, one of the
        // pair sees the other. A plain load on x86, as Acquire is.
        let live = self.live.load(Ordering::SeqCst);
        self.slots[..live]
            .iter()
            .filter_map(|s| s.get().map(|b| &**b))
    }

    /// The lanes' priorities, highest first.
    pub(crate) fn priorities(&self) -> Vec<Priority> {
        let mut p: Vec<Priority> = self.lanes().map(|l| l.priority).collect();
        p.sort_by(|a, b| b.cmp(a));
        p
    }

    /// The lane a letter of `priority` goes to, under `rule`.
    #[inline]
    fn lane_for(&self, priority: Priority, rule: Unlisted) -> Option<&Lane<M>> {
        if let Some(lane) = self.lanes().find(|l| l.priority == priority) {
            return Some(lane);
        }
        match rule {
            Unlisted::Refuse => None,
            Unlisted::Nearest => self.nearest(priority),
            Unlisted::NewLane => self.new_lane(priority),
        }
    }

    /// A lane that never refuses: for control entries and send-backs.
    fn lane_for_internal(&self, priority: Priority) -> Option<&Lane<M>> {
        let rule = match self.unlisted {
            Unlisted::Refuse => Unlisted::Nearest,
            other => other,
        };
        self.lane_for(priority, rule)
    }

    fn nearest(&self, priority: Priority) -> Option<&Lane<M>> {
        let below = self
            .lanes()
            .filter(|l| l.priority <= priority)
            .max_by_key(|l| l.priority);
        below.or_else(|| self.lanes().min_by_key(|l| l.priority))
    }

    #[cold]
    fn new_lane(&self, priority: Priority) -> Option<&Lane<M>> {
        let _grow = lock(&self.grow);
        if let Some(lane) = self.lanes().find(|l| l.priority == priority) {
            return Some(lane);
        }
        let live = self.live.load(Ordering::Acquire);
        if live >= MAX_LANES {
            return self.nearest(priority);
        }
        let spec = LaneSpec {
            priority,
            weight: 1,
            capacity: self.default_capacity,
        };
        let lane = Lane::new(spec);
        if self.closed.load(Ordering::SeqCst) {
            // The door closed before this lane existed: it is born closed.
            lane.close();
        }
        let _ = self.slots[live].set(Box::new(lane));
        // ORDERING: SeqCst: publishes the slot to `lanes()` (Release would
        // do that), and comes before the sender's SeqCst slot and its
        // notify in the single order the ready signal's pair needs.
        self.live.store(live + 1, Ordering::SeqCst);
        self.slots[live].get().map(|b| &**b)
    }

    /// The slot of the lane a letter of `priority` goes to, for a permit
    /// (`reserve.rs`); the error a send of it would get otherwise.
    pub(crate) fn slot_for(&self, priority: Priority) -> Result<usize, SendError<()>> {
        let unknown = || SendError::UnknownPriority {
            priority,
            lanes: self.priorities(),
            message: (),
        };
        let lane = self.lane_for(priority, self.unlisted).ok_or_else(unknown)?;
        let live = self.live.load(Ordering::Acquire);
        self.slots[..live]
            .iter()
            .position(|s| s.get().is_some_and(|l| std::ptr::eq(&**l, lane)))
            .ok_or_else(unknown)
    }

    /// The lane in `slot` (from [`slot_for`](Mailbox::slot_for)).
    pub(crate) fn lane_at(&self, slot: usize) -> &Lane<M> {
        self.slots[slot]
            .get()
            .expect("a slot once given holds its lane")
    }

    pub(crate) fn priority_of(&self, msg: &M) -> Priority {
        self.generator
            .priority_of(msg)
            .unwrap_or(self.default_priority)
    }

    // ===== senders =====

    /// Offers a message. `priority`: the caller's, else the generator's.
    #[inline]
    pub(crate) fn send(
        &self,
        msg: M,
        priority: Option<Priority>,
        wait: Wait,
    ) -> Result<(), SendError<M>> {
        let priority = priority.unwrap_or_else(|| self.priority_of(&msg));
        let Some(lane) = self.lane_for(priority, self.unlisted) else {
            return Err(self.refuse(SendError::UnknownPriority {
                priority,
                lanes: self.priorities(),
                message: msg,
            }));
        };
        let ticket = match lane.try_reserve() {
            Ok(ticket) => ticket,
            Err(NoSlot::Closed) => return Err(self.refuse_stopped(msg)),
            Err(NoSlot::Full) => match self.reserve_slow(lane, wait) {
                Ok(ticket) => ticket,
                Err(NoSlot::Closed) => return Err(self.refuse_stopped(msg)),
                Err(NoSlot::Full) => {
                    return Err(self.refuse(SendError::Full {
                        priority: lane.priority,
                        capacity: lane.capacity.limit().unwrap_or(usize::MAX),
                        message: msg,
                    }));
                }
            },
        };
        let letter = Entry::Letter(Letter::new(msg, priority));
        // SAFETY: the ticket was just taken from this lane.
        unsafe { lane.push(ticket, letter) };
        self.ready.notify_one();
        Ok(())
    }

    /// A full bounded lane: wait for a slot as `wait` allows (the lane's
    /// rules 9-11, `lane/README.md`). One of the stage's own instances
    /// never waits (rule 16): the slot it waits for is freed by the
    /// instances, and all of them may be sending.
    #[cold]
    fn reserve_slow(&self, lane: &Lane<M>, wait: Wait) -> Result<Ticket, NoSlot> {
        if self.is_own_thread() {
            return Err(NoSlot::Full);
        }
        let deadline = match wait {
            Wait::No => return Err(NoSlot::Full),
            Wait::Forever => None,
            Wait::Until(d) => Some(d),
        };
        lane.reserve_waiting(deadline)
    }

    fn refuse(&self, err: SendError<M>) -> SendError<M> {
        self.handed_back.fetch_add(1, Ordering::Relaxed);
        err
    }

    fn refuse_stopped(&self, msg: M) -> SendError<M> {
        self.refuse(SendError::ShutDown {
            stage: self.name.clone(),
            message: msg,
        })
    }

    /// Queues `stop` or `kill` at `priority`, past capacity. `false` if the
    /// door is closed.
    pub(crate) fn control(&self, kill: bool, priority: Priority) -> bool {
        let Some(lane) = self.lane_for_internal(priority) else {
            return false;
        };
        let Some(ticket) = lane.force_reserve() else {
            return false;
        };
        let entry = if kill { Entry::Kill } else { Entry::Stop };
        // SAFETY: the ticket was just taken from this lane.
        unsafe { lane.push(ticket, entry) };
        self.interrupt(if kill { KILL_SENT } else { STOP_SENT });
        true
    }

    /// Marks a control sent and wakes every instance: an idle one to
    /// dispatch it, a retrying one to cut its backoff short.
    pub(crate) fn interrupt(&self, what: usize) {
        // ORDERING: SeqCst, the condition of the `backoff` signal's Dekker
        // pair (signal.rs), read by `wait_backoff`.
        self.interrupts.fetch_or(what, Ordering::SeqCst);
        self.ready.notify_all();
        self.backoff.notify_all();
    }

    /// Control sent so far (`KILL_SENT`, `STOP_SENT`, `DRAINING`).
    #[inline]
    pub(crate) fn interrupts(&self) -> usize {
        // ORDERING: SeqCst, as in `interrupt`.
        self.interrupts.load(Ordering::SeqCst)
    }

    /// Waits out a retry's backoff of `delay`, or less: until a `kill` or
    /// `stop` is queued or a drain begins (rule 15). A condition wait with
    /// a deadline, never a sleep.
    pub(crate) fn wait_backoff(&self, delay: std::time::Duration) {
        if delay.is_zero() || self.interrupts() != 0 {
            return;
        }
        let deadline = std::time::Instant::now().checked_add(delay);
        self.backoff.wait(deadline, || self.interrupts() != 0);
    }

    /// Re-queues a letter a strategy sent back (rule 12): it was accepted
    /// long ago, so it passes a closed door and a full lane. Called by an
    /// instance while the letter counts as in flight.
    pub(crate) fn send_back(&self, letter: Letter<M>) {
        if self.requeue(letter).is_ok() {
            self.counters.sent_back.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Re-queues a letter at the back of its lane, past the door and the
    /// capacity, as [`send_back`](Mailbox::send_back) does but without
    /// counting a send-back: a letter of a batch the broker could not hand
    /// to its consumer. (A letter the batch perform never took is sent
    /// back, one hop more, and counts as one.)
    pub(crate) fn requeue(&self, letter: Letter<M>) -> Result<(), Letter<M>> {
        let Some(lane) = self.lane_for_internal(letter.priority) else {
            return Err(letter);
        };
        let ticket = lane.reserve_past_door();
        // SAFETY: the ticket was just taken from this lane.
        unsafe { lane.push(ticket, Entry::Letter(letter)) };
        self.ready.notify_one();
        Ok(())
    }

    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    pub(crate) fn handed_back(&self) -> u64 {
        self.handed_back.load(Ordering::Relaxed)
    }

    pub(crate) fn accepted(&self) -> u64 {
        self.lanes().map(Lane::accepted).sum()
    }

    /// Closes the door: every lane refuses new slots from now on (lanes
    /// created later are born closed), and senders blocked on a full lane
    /// are woken to be refused.
    pub(crate) fn close_door(&self) {
        let _grow = lock(&self.grow);
        self.closed.store(true, Ordering::SeqCst);
        for lane in self.lanes() {
            lane.close();
        }
    }
}
