//! A stage's mailbox: one FIFO lane per priority, the door senders pass,
//! and the dispatch that instances take letters through. The rules it
//! keeps are numbered in `README.md` beside this file.
//!
//! - Senders never lock: they pick the lane, take a slot (one atomic
//!   operation on the lane's `len`, which also says whether the lane is
//!   closed and, if bounded, full), and push.
//! - Instances dispatch under the *take lock*: choosing the lane, popping,
//!   and acting on `stop` and `kill` are one step, so no instance can
//!   dispatch a letter after another instance dispatched the `stop` ahead
//!   of it. Performing happens outside the lock.
//! - Closing the door sets the top bit of every lane's `len`. A letter is
//!   accepted if its slot was taken before that; `len` counts it from then
//!   until it is popped, so a sweep that pops until `len` is zero (waiting
//!   for pushes still under way) leaves nothing accepted behind, and a
//!   stage ends only when every lane's `len` is zero.

use super::actor::Reason;
use super::config::{LaneSpec, MAX_LANES, MailboxConfig, Unlisted};
use super::error::SendError;
use super::letters::{DeadLetter, DeadReason};
use super::priority::PriorityGenerator;
use super::signal::Signal;
use crate::lane::picker::{Picker, Schedule};
use crate::pool::Wait;
use crate::priority::{Capacity, Priority};
use crate::sync::{Mutex, lock};
use crossbeam_queue::SegQueue;
use crossbeam_utils::{Backoff, CachePadded};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Set in a lane's `len` once the stage accepts no new message.
const CLOSED: usize = 1 << (usize::BITS - 1);
const COUNT: usize = !CLOSED;

/// Why a slot could not be taken.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NoSlot {
    Full,
    Closed,
}

/// A user message in a lane, with what the strategies track.
pub(crate) struct Letter<M> {
    pub(crate) msg: M,
    pub(crate) priority: Priority,
    /// Times a strategy sent it back.
    pub(crate) sent_back: u32,
    /// The TTL strategy's count, once it has looked at the message.
    pub(crate) ttl: Option<u32>,
}

enum Entry<M> {
    Letter(Letter<M>),
    Stop,
    Kill,
}

/// What an instance gets from [`Mailbox::next`].
pub(crate) enum Next<M> {
    Letter(Letter<M>),
    /// Nothing to dispatch now.
    Empty,
    /// The stage is ending: no more letters, ever.
    Closed(Reason),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Draining,
    /// A graceful stop of this priority was dispatched: only lanes above
    /// it are still served.
    Stopping(Priority),
    Closed(Reason),
}

pub(crate) struct Lane<M> {
    pub(crate) priority: Priority,
    pub(crate) weight: u32,
    pub(crate) capacity: Capacity,
    queue: SegQueue<Entry<M>>,
    /// Entries queued or with a slot taken, and the `CLOSED` bit; bounded
    /// lanes keep the count below capacity.
    len: CachePadded<AtomicUsize>,
    /// Entries popped (dispatched or swept). Written under the take lock.
    dispatched: AtomicU64,
    /// Entries pushed past the door: control entries and send-backs.
    forced: AtomicU64,
    space: Signal,
}

impl<M> Lane<M> {
    fn new(spec: LaneSpec) -> Lane<M> {
        Lane {
            priority: spec.priority,
            weight: spec.weight,
            capacity: spec.capacity,
            queue: SegQueue::new(),
            len: CachePadded::new(AtomicUsize::new(0)),
            dispatched: AtomicU64::new(0),
            forced: AtomicU64::new(0),
            space: Signal::default(),
        }
    }

    /// Takes a slot: refused if the lane is closed or (bounded) full.
    #[inline]
    fn try_reserve(&self) -> Result<(), NoSlot> {
        let Capacity::Bounded(cap) = self.capacity else {
            // ORDERING: SeqCst: the idle instances' check and the closing
            // sweep read `len` (signal.rs, module docs).
            let before = self.len.fetch_add(1, Ordering::SeqCst);
            if before & CLOSED != 0 {
                self.len.fetch_sub(1, Ordering::SeqCst);
                return Err(NoSlot::Closed);
            }
            return Ok(());
        };
        let mut cur = self.len.load(Ordering::SeqCst);
        loop {
            if cur & CLOSED != 0 {
                return Err(NoSlot::Closed);
            }
            if cur >= cap {
                return Err(NoSlot::Full);
            }
            // ORDERING: SeqCst pairs with the space waiters' count (signal.rs).
            match self
                .len
                .compare_exchange_weak(cur, cur + 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return Ok(()),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Takes a slot whatever the capacity (control entries, send-backs);
    /// past a closed door only if `past_closed`.
    fn force_reserve(&self, past_closed: bool) -> bool {
        let before = self.len.fetch_add(1, Ordering::SeqCst);
        if before & CLOSED != 0 && !past_closed {
            self.len.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        self.forced.fetch_add(1, Ordering::Relaxed);
        true
    }

    fn unreserve(&self) {
        self.len.fetch_sub(1, Ordering::SeqCst);
        if self.capacity != Capacity::Unbounded {
            self.space.notify_one();
        }
    }

    /// Closes the lane to senders; wakes those blocked on it (refused).
    fn close(&self) {
        self.len.fetch_or(CLOSED, Ordering::SeqCst);
        self.space.notify_all();
    }

    /// Pops the head entry. Only under the take lock, so `dispatched`
    /// has one writer.
    #[inline]
    fn pop(&self) -> Option<Entry<M>> {
        let entry = self.queue.pop()?;
        let n = self.dispatched.load(Ordering::Relaxed);
        self.dispatched.store(n + 1, Ordering::Relaxed);
        self.unreserve();
        Some(entry)
    }

    /// Is an entry queued (a peek at the queue itself)?
    #[inline]
    fn has_entries(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Is an entry queued or about to be (a slot is reserved)? What an
    /// instance checks before sleeping: `len` is raised by a SeqCst
    /// read-modify-write before every push (signal.rs).
    #[inline]
    fn has_reserved(&self) -> bool {
        self.len.load(Ordering::SeqCst) & COUNT != 0
    }

    /// Entries queued (or with a slot taken).
    pub(crate) fn queued(&self) -> usize {
        self.len.load(Ordering::Relaxed) & COUNT
    }

    /// Letters accepted by a send: every entry popped or still queued,
    /// less those pushed past the door. Exact while the lane is quiet;
    /// costs the senders nothing.
    pub(crate) fn accepted(&self) -> u64 {
        (self.dispatched() + self.queued() as u64)
            .saturating_sub(self.forced.load(Ordering::Relaxed))
    }

    /// Pops every entry at the moment `len` says is there, waiting for
    /// pushes still under way.
    fn sweep_into(&self, mut each: impl FnMut(Entry<M>)) {
        let backoff = Backoff::new();
        while self.len.load(Ordering::SeqCst) & COUNT != 0 {
            match self.pop() {
                Some(entry) => {
                    each(entry);
                    backoff.reset();
                }
                // A sender took its slot and has not pushed yet (or undoes
                // a refused slot).
                None => backoff.snooze(),
            }
        }
    }

    pub(crate) fn dispatched(&self) -> u64 {
        self.dispatched.load(Ordering::Relaxed)
    }
}

/// The instance side's counters (see `README.md`, rule 18).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) performed: AtomicU64,
    pub(crate) faulted: AtomicU64,
    pub(crate) dead_lettered: AtomicU64,
    pub(crate) sent_back: AtomicU64,
    pub(crate) retried: AtomicU64,
}

/// State only the dispatching instance touches.
struct Take {
    phase: Phase,
    /// Live lane slots, highest priority first.
    order: Vec<usize>,
    /// The weighted picker over the declared lanes (fixed), if any.
    schedule: Option<Schedule>,
}

pub(crate) struct Mailbox<M> {
    pub(crate) name: String,
    slots: Box<[OnceLock<Box<Lane<M>>>]>,
    live: AtomicUsize,
    grow: Mutex<()>,
    unlisted: Unlisted,
    default_capacity: Capacity,
    pub(crate) default_priority: Priority,
    pub(crate) stop_priority: Priority,
    pub(crate) kill_priority: Priority,
    generator: PriorityGenerator<M>,
    /// Set (under `grow`) when the door closes.
    closed: AtomicBool,
    handed_back: CachePadded<AtomicU64>,
    take: Mutex<Take>,
    /// Instances waiting for a letter or a change of phase.
    pub(crate) ready: Signal,
    /// Bumped at every change a waiting instance must look at.
    generation: AtomicUsize,
    in_flight: AtomicUsize,
    pub(crate) counters: Counters,
}

impl<M> Mailbox<M> {
    pub(crate) fn new(
        name: String,
        config: &MailboxConfig,
        generator: PriorityGenerator<M>,
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
            take: Mutex::new(Take {
                phase: Phase::Running,
                order: (0..declared.len()).collect(),
                schedule,
            }),
            ready: Signal::default(),
            generation: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            counters: Counters::default(),
        }
    }

    // ===== lanes =====

    /// The live lanes, in slot order (declared first, then by creation).
    pub(crate) fn lanes(&self) -> impl Iterator<Item = &Lane<M>> {
        let live = self.live.load(Ordering::Acquire);
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
        // ORDERING: Release publishes the slot to `lanes()`' Acquire.
        self.live.store(live + 1, Ordering::Release);
        self.slots[live].get().map(|b| &**b)
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
        match lane.try_reserve() {
            Ok(()) => {}
            Err(NoSlot::Closed) => return Err(self.refuse_stopped(msg)),
            Err(NoSlot::Full) => match self.reserve_slow(lane, wait) {
                Ok(()) => {}
                Err(NoSlot::Closed) => return Err(self.refuse_stopped(msg)),
                Err(NoSlot::Full) => {
                    return Err(self.refuse(SendError::Full {
                        priority: lane.priority,
                        capacity: lane.capacity.limit().unwrap_or(usize::MAX),
                        message: msg,
                    }));
                }
            },
        }
        lane.queue.push(Entry::Letter(Letter {
            msg,
            priority,
            sent_back: 0,
            ttl: None,
        }));
        self.ready.notify_one();
        Ok(())
    }

    /// A full bounded lane: wait for a slot as `wait` allows.
    #[cold]
    fn reserve_slow(&self, lane: &Lane<M>, wait: Wait) -> Result<(), NoSlot> {
        let deadline = match wait {
            Wait::No => return Err(NoSlot::Full),
            Wait::Forever => None,
            Wait::Until(d) => Some(d),
        };
        let backoff = Backoff::new();
        while !backoff.is_completed() {
            match lane.try_reserve() {
                Err(NoSlot::Full) => backoff.snooze(),
                outcome => return outcome,
            }
        }
        let mut outcome = Err(NoSlot::Full);
        lane.space.wait(deadline, || {
            outcome = lane.try_reserve();
            outcome != Err(NoSlot::Full)
        });
        outcome
    }

    fn refuse(&self, err: SendError<M>) -> SendError<M> {
        self.handed_back.fetch_add(1, Ordering::Relaxed);
        err
    }

    fn refuse_stopped(&self, msg: M) -> SendError<M> {
        self.refuse(SendError::Stopped {
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
        if !lane.force_reserve(false) {
            return false;
        }
        lane.queue
            .push(if kill { Entry::Kill } else { Entry::Stop });
        self.ready.notify_one();
        true
    }

    /// Re-queues a letter a strategy sent back (rule 12): it was accepted
    /// long ago, so it passes a closed door and a full lane. Called by an
    /// instance while the letter counts as in flight.
    pub(crate) fn send_back(&self, letter: Letter<M>) {
        if let Some(lane) = self.lane_for_internal(letter.priority) {
            lane.force_reserve(true);
            lane.queue.push(Entry::Letter(letter));
            self.counters.sent_back.fetch_add(1, Ordering::Relaxed);
            self.ready.notify_one();
        }
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
    fn close_door(&self) {
        let _grow = lock(&self.grow);
        self.closed.store(true, Ordering::SeqCst);
        for lane in self.lanes() {
            lane.close();
        }
    }

    // ===== instances =====

    /// Does any lane hold an entry, or a slot a sender is filling? A peek.
    #[inline]
    pub(crate) fn has_mail(&self) -> bool {
        self.lanes().any(Lane::has_reserved)
    }

    #[inline]
    pub(crate) fn generation(&self) -> usize {
        self.generation.load(Ordering::SeqCst)
    }

    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.ready.notify_all();
    }

    /// Dispatches the next letter (rules 4-10). `finished`: the caller is
    /// done with the letter it dispatched last. Letters a `stop` or `kill`
    /// turns away are appended to `dead`, in order, for the caller to hand
    /// out.
    pub(crate) fn next(&self, finished: bool, dead: &mut Vec<DeadLetter<M>>) -> Next<M> {
        let mut take = lock(&self.take);
        if finished {
            // `in_flight` changes only under the take lock: no
            // read-modify-write needed.
            let n = self.in_flight.load(Ordering::Relaxed) - 1;
            self.in_flight.store(n, Ordering::Release);
            if n == 0 && take.phase != Phase::Running {
                // Instances waiting for the last perform to end.
                self.bump();
            }
        }
        loop {
            let above = match take.phase {
                Phase::Closed(reason) => return Next::Closed(reason),
                Phase::Stopping(p) => Some(p),
                Phase::Running | Phase::Draining => None,
            };
            match self.pick(&mut take, above) {
                Some((_, Entry::Letter(letter))) => {
                    let n = self.in_flight.load(Ordering::Relaxed);
                    self.in_flight.store(n + 1, Ordering::Release);
                    return Next::Letter(letter);
                }
                Some((at, Entry::Stop)) => {
                    self.close_door();
                    self.sweep(Some(at), DeadReason::Stopped, dead);
                    self.set_phase(&mut take, Phase::Stopping(at));
                }
                Some((_, Entry::Kill)) => {
                    self.close_door();
                    self.sweep(None, DeadReason::Killed, dead);
                    self.set_phase(&mut take, Phase::Closed(Reason::Killed));
                    return Next::Closed(Reason::Killed);
                }
                None => {
                    let end = match take.phase {
                        Phase::Draining => Reason::Drained,
                        Phase::Stopping(_) => Reason::Stopped,
                        _ => return Next::Empty,
                    };
                    // A sender may hold a slot and not have pushed yet.
                    let pending = self
                        .lanes()
                        .any(|l| above.is_none_or(|p| l.priority > p) && l.has_reserved());
                    if self.in_flight.load(Ordering::Relaxed) != 0 || pending {
                        return Next::Empty;
                    }
                    self.set_phase(&mut take, Phase::Closed(end));
                    return Next::Closed(end);
                }
            }
        }
    }

    /// Chooses a lane (strict, or the weighted cycle) and pops from it.
    /// With `above`, only lanes above that priority are served.
    fn pick(&self, take: &mut Take, above: Option<Priority>) -> Option<(Priority, Entry<M>)> {
        let live = self.live.load(Ordering::Acquire);
        if take.order.len() != live {
            take.order = (0..live).collect();
            let slots = &self.slots;
            take.order
                .sort_by_key(|&i| std::cmp::Reverse(slots[i].get().map(|l| l.priority)));
        }
        let lane = |i: usize| self.slots[take.order[i]].get();
        let allowed = |l: &Lane<M>| above.is_none_or(|p| l.priority > p);
        if let Some(schedule) = &take.schedule {
            // An empty look must not take a ticket: that would move the
            // cycle on with nothing dispatched.
            if !(0..take.order.len())
                .any(|i| lane(i).is_some_and(|l| allowed(l) && l.has_entries()))
            {
                return None;
            }
            let mut got = None;
            schedule.pick(
                take.order.len(),
                |i| lane(i).is_some_and(|l| allowed(l) && l.has_entries()),
                |i| match lane(i) {
                    Some(l) if allowed(l) => match l.pop() {
                        Some(e) => {
                            got = Some((l.priority, e));
                            true
                        }
                        None => false,
                    },
                    _ => false,
                },
            )?;
            return got;
        }
        for i in 0..take.order.len() {
            if let Some(l) = lane(i)
                && allowed(l)
                && let Some(e) = l.pop()
            {
                return Some((l.priority, e));
            }
        }
        None
    }

    /// Empties the lanes at or below `at` (all with `None`), highest first
    /// and FIFO within a lane, into `dead`. Control entries are dropped.
    fn sweep(&self, at: Option<Priority>, reason: DeadReason, dead: &mut Vec<DeadLetter<M>>) {
        // Every live lane, also one created since the last pick.
        let mut lanes: Vec<&Lane<M>> = self.lanes().collect();
        lanes.sort_by_key(|l| std::cmp::Reverse(l.priority));
        for lane in lanes {
            if at.is_some_and(|p| lane.priority > p) {
                continue;
            }
            lane.sweep_into(|entry| {
                if let Entry::Letter(l) = entry {
                    dead.push(DeadLetter {
                        message: l.msg,
                        priority: l.priority,
                        reason,
                    });
                }
            });
        }
    }

    fn set_phase(&self, take: &mut Take, phase: Phase) {
        take.phase = phase;
        self.bump();
    }

    /// Letters dispatched and not yet done. Exact under the take lock;
    /// outside it, see [`Mailbox::wait_no_perform`].
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Waits until no letter is in flight (rule 14: before any destroy).
    /// The last `finished` of a stage that is ending bumps the generation
    /// after lowering the count; reading the generation (Acquire) first
    /// makes that count visible here.
    pub(crate) fn wait_no_perform(&self) {
        loop {
            let seen = self.generation();
            if self.in_flight() == 0 {
                return;
            }
            self.ready.wait(None, || self.generation() != seen);
        }
    }

    /// Begins a drain (rule 10). `false` if the stage was already ending.
    pub(crate) fn begin_drain(&self) -> bool {
        let mut take = lock(&self.take);
        if take.phase != Phase::Running {
            return false;
        }
        self.close_door();
        self.set_phase(&mut take, Phase::Draining);
        true
    }

    /// Ends the stage for idleness if nothing was accepted since `seen`
    /// accepted letters, nothing is queued and nothing runs (rule 11).
    pub(crate) fn close_idle(&self, seen: u64, dead: &mut Vec<DeadLetter<M>>) -> bool {
        let mut take = lock(&self.take);
        if take.phase != Phase::Running
            || self.in_flight() != 0
            || self.has_mail()
            || self.accepted() != seen
        {
            return false;
        }
        self.close_door();
        self.sweep(None, DeadReason::Idle, dead);
        self.set_phase(&mut take, Phase::Closed(Reason::Idle));
        true
    }

    /// After the last perform: anything still in a lane (a letter sent
    /// back while a `kill` or `stop` was dispatched) becomes a dead letter,
    /// so nothing accepted is ever stranded.
    pub(crate) fn sweep_rest(&self, reason: DeadReason, dead: &mut Vec<DeadLetter<M>>) {
        let _take = lock(&self.take);
        self.sweep(None, reason, dead);
    }

    /// Ends the stage at once: no instance survived `init` (rule 13).
    pub(crate) fn close_failed(&self, dead: &mut Vec<DeadLetter<M>>) {
        let mut take = lock(&self.take);
        if matches!(take.phase, Phase::Closed(_)) {
            return;
        }
        self.close_door();
        self.sweep(None, DeadReason::FailedInit, dead);
        self.set_phase(&mut take, Phase::Closed(Reason::FailedInit));
    }
}
