//! One lane of a mailbox: the FIFO queue of one priority, the door that
//! senders pass, the tickets that keep the order, and the wait for room.
//! Its state and numbered rules follow (`README.md` beside this file); the
//! loom models in `model.rs` check them on this code.
//!
#![doc = include_str!("README.md")]

use crate::actor::config::LaneSpec;
use crate::actor::letter::Letter;
use crate::actor::signal::Signal;
use store::Store;

pub(crate) use store::Ticket;

mod store;
use crate::priority::{Capacity, Priority};
use crate::sync::Backoff;
use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use crate::sync::line::Place;
use crossbeam_utils::CachePadded;
use std::task::{Context, Poll};
use std::time::Instant;

/// How long a sweep naps between looks once its spin is over, while a
/// slot stays unfilled (a permit held, rule 13).
const SWEEP_NAP: std::time::Duration = std::time::Duration::from_micros(200);

/// How long an idle instance sleeps at first, while a permit is held,
/// before it looks again (rule 13): a sender's push into a lane holding a
/// permit is seen by a peek at the head entry, which its notify may miss.
/// The nap doubles while nothing comes, up to [`PERMIT_NAP_MAX`].
pub(crate) const PERMIT_NAP: std::time::Duration = std::time::Duration::from_micros(100);
/// The longest nap of an idle instance while a permit is held (rule 13).
pub(crate) const PERMIT_NAP_MAX: std::time::Duration = std::time::Duration::from_millis(5);

/// Set in a lane's `opened` once the stage accepts no new message.
pub(crate) const CLOSED: usize = 1 << (usize::BITS - 1);
pub(crate) const COUNT: usize = !CLOSED;

/// Why a slot could not be taken.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoSlot {
    Full,
    Closed,
}

/// What a lane holds.
pub(crate) enum Entry<M> {
    Letter(Letter<M>),
    Stop,
    Kill,
    /// The slot of a permit dropped unused (rule 13): popped and passed
    /// over by the lane itself, never seen by the mailbox.
    Vacant,
}

/// The senders' line.
#[derive(Default)]
struct Opened {
    /// Slots taken, and `CLOSED`. Never lowered (rule 2).
    count: AtomicUsize,
    /// The last `taken` a sender read (bounded lanes).
    taken_seen: AtomicUsize,
}

pub(crate) struct Lane<M> {
    pub(crate) priority: Priority,
    pub(crate) weight: u32,
    pub(crate) capacity: Capacity,
    store: Store<M>,
    /// Written by senders only (rules 1-3).
    opened: CachePadded<Opened>,

    /// Entries popped (dispatched or swept). Written under the take lock
    /// only (rule 4).
    taken: CachePadded<AtomicUsize>,
    /// Entries pushed past the door: control entries and send-backs.
    forced: AtomicU64,
    /// Permits granted (or being granted) whose slot is not filled yet
    /// (rule 13). Written on the permits' paths only.
    held: AtomicUsize,
    /// Permits' slots filled (a letter, or vacant), raised after each such
    /// push and before its notify: what an idle instance waits to see move
    /// while a permit is held (rule 13). A sender's push pays no count.
    filled: AtomicUsize,
    pub(crate) space: Signal,
}

impl<M> Lane<M> {
    pub(crate) fn new(spec: LaneSpec) -> Lane<M> {
        Lane {
            priority: spec.priority,
            weight: spec.weight,
            capacity: spec.capacity,
            store: Store::new(spec.capacity),
            opened: CachePadded::new(Opened::default()),
            taken: CachePadded::new(AtomicUsize::new(0)),
            forced: AtomicU64::new(0),
            held: AtomicUsize::new(0),
            filled: AtomicUsize::new(0),
            space: Signal::default(),
        }
    }

    /// Takes a slot: refused if the lane is closed or (bounded) full.
    #[inline]
    pub(crate) fn try_reserve(&self) -> Result<Ticket, NoSlot> {
        let Capacity::Bounded(cap) = self.capacity else {
            // A compare-exchange, not a `fetch_add` given back when
            // refused: a refusal must write nothing, or the length would
            // say "a push is coming" for a moment and then fall with no
            // pop and no wake-up, and an instance that saw it would wait
            // for ever (rule 2).
            // ORDERING: SeqCst: the idle instances' check and the closing
            // sweep read `opened` (signal.rs, rules 1 and 5).
            let before = self
                .opened
                .count
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |cur| {
                    (cur & CLOSED == 0).then_some(cur + 1)
                })
                .map_err(|_| NoSlot::Closed)?;
            return Ok(Ticket::new(before & COUNT, false));
        };
        // ORDERING: SeqCst, so that a sender waiting for space, which arms
        // `space` before it calls this, sees a `close` or a pop whose
        // notifier did not see it armed (rule 10). `taken_seen` is only
        // a hint (rule 8): Relaxed.
        let mut cur = self.opened.count.load(Ordering::SeqCst);
        let mut seen = self.opened.taken_seen.load(Ordering::Relaxed);
        loop {
            if cur & CLOSED != 0 {
                return Err(NoSlot::Closed);
            }
            // Where the exchange below succeeds, `cur` is the count then and
            // `seen <= taken <= cur`: the view is never below the length.
            if (cur & COUNT).saturating_sub(seen) >= cap {
                seen = self.taken.load(Ordering::SeqCst);
                self.opened.taken_seen.store(seen, Ordering::Relaxed);
                if (cur & COUNT).saturating_sub(seen) >= cap {
                    return Err(NoSlot::Full);
                }
            }
            // ORDERING: SeqCst, the notifier's side of the ready signal's
            // Dekker pair (signal.rs); a refusal writes nothing (rule 2).
            match self.opened.count.compare_exchange_weak(
                cur,
                cur + 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return Ok(Ticket::new(cur & COUNT, false)),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Takes a slot whatever the capacity, for a control entry: refused
    /// once the door is closed. A compare-exchange, so a refusal takes no
    /// ticket (rule 2).
    pub(crate) fn force_reserve(&self) -> Option<Ticket> {
        // ORDERING: SeqCst, as in `try_reserve`.
        let before = self
            .opened
            .count
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |cur| {
                (cur & CLOSED == 0).then_some(cur + 1)
            })
            .ok()?;
        // ORDERING: Relaxed: a statistic, exact only while the lane is
        // quiet (`accepted`).
        self.forced.fetch_add(1, Ordering::Relaxed);
        Some(Ticket::new(before & COUNT, true))
    }

    /// Takes a slot whatever the capacity and the door, for a letter sent
    /// back: it was accepted long ago. Never refused, so one increment
    /// (rule 3).
    pub(crate) fn reserve_past_door(&self) -> Ticket {
        // ORDERING: SeqCst, as in `try_reserve`.
        let before = self.opened.count.fetch_add(1, Ordering::SeqCst);
        // ORDERING: Relaxed, as in `force_reserve`.
        self.forced.fetch_add(1, Ordering::Relaxed);
        Ticket::new(before & COUNT, true)
    }

    /// Puts an entry in the slot `ticket` took.
    ///
    /// # Safety
    ///
    /// `ticket` was taken from this lane (a ring lane's tickets are its
    /// slots: another lane's would race that lane's own writer). It is
    /// pushed once, which `Ticket` not being `Copy` sees to.
    #[inline]
    pub(crate) unsafe fn push(&self, ticket: Ticket, entry: Entry<M>) {
        // SAFETY: the caller's.
        unsafe { self.store.push(ticket, entry) };
    }

    /// Permits' slots filled so far (rule 13): an instance that found
    /// nothing to dispatch while a permit is held waits until this moves.
    #[inline]
    pub(crate) fn filled(&self) -> usize {
        // ORDERING: SeqCst, the waiter's check of the ready signal's
        // Dekker pair (signal.rs).
        self.filled.load(Ordering::SeqCst)
    }

    /// Is a run of slots free (rule 9), or the lane closed? What a
    /// sender that found the lane full waits for while it spins.
    pub(crate) fn has_room_for_a_run(&self) -> bool {
        // ORDERING: Relaxed: a hint for the spin; `try_reserve` decides.
        self.opened.count.load(Ordering::Relaxed) & CLOSED != 0
            || self.capacity.has_room_for_a_run(self.length())
    }

    /// Waits for a slot of a full bounded lane (rule 9): spins while no
    /// run of slots is free, then sleeps on `space` until a slot is free,
    /// the lane closes or `deadline` passes (`None`: no deadline). `Full`
    /// only once the deadline has passed.
    #[cold]
    pub(crate) fn reserve_waiting(&self, deadline: Option<Instant>) -> Result<Ticket, NoSlot> {
        let backoff = Backoff::new();
        while !backoff.is_completed() {
            if !self.has_room_for_a_run() {
                backoff.snooze();
                continue;
            }
            match self.try_reserve() {
                Err(NoSlot::Full) => backoff.snooze(),
                outcome => return outcome,
            }
        }
        // Rule 10: `wait` arms `space`, then checks.
        let mut outcome = Err(NoSlot::Full);
        self.space.wait(deadline, || {
            outcome = self.try_reserve();
            !matches!(outcome, Err(NoSlot::Full))
        });
        outcome
    }

    /// Takes a slot for a permit, for the future at `place`, or puts it in
    /// line on `space` to be woken when a slot frees or the lane closes
    /// (rule 13). The ticket is pushed with [`push_permit`](Lane::push_permit)
    /// or [`push_vacant`](Lane::push_vacant), never with `push` (which
    /// would leave the permit counted in `held` and `forced`).
    pub(crate) fn poll_reserve(
        &self,
        place: &mut Place,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Ticket, NoSlot>> {
        // A newcomer takes a free slot at once only if nobody waits.
        if place.is_new() && self.space.is_quiet() {
            match self.try_reserve_permit() {
                Err(NoSlot::Full) => {}
                outcome => return Poll::Ready(outcome),
            }
        }
        let mut outcome = Err(NoSlot::Full);
        // Rule 10: `poll_wait` arms `space`, then checks.
        let ready = self.space.poll_wait(
            place,
            cx,
            |may_take, grant| {
                // A slot granted while it waited is its own, even if the
                // door closed since: a permit granted before the close.
                if let Some(grant) = grant {
                    outcome = Ok(Ticket::from_grant(grant));
                    return true;
                }
                if self.is_closed() {
                    outcome = Err(NoSlot::Closed);
                    return true;
                }
                if may_take {
                    outcome = self.try_reserve_permit();
                }
                !matches!(outcome, Err(NoSlot::Full))
            },
            || self.grant_permit(),
        );
        ready.map(|()| outcome)
    }

    /// Takes a free slot as a permit for the first future in line (rule
    /// 13): its token, or `None` with no slot free.
    fn grant_permit(&self) -> Option<usize> {
        self.try_reserve_permit().ok().map(Ticket::into_grant)
    }

    /// Takes a slot for a permit (rule 13): counted in `held` from before
    /// the slot is taken until its ticket is pushed, and as forced from
    /// the grant until its letter is pushed (so `accepted` counts letters
    /// only, and never falls).
    fn try_reserve_permit(&self) -> Result<Ticket, NoSlot> {
        // ORDERING: SeqCst, before the slot's SeqCst read-modify-write of
        // `opened`: an instance that sees the slot in the length (SeqCst)
        // sees the hold too, so it never takes a held slot for a sender's
        // push under way (rule 13).
        self.held.fetch_add(1, Ordering::SeqCst);
        let outcome = self.try_reserve();
        if outcome.is_ok() {
            // ORDERING: Relaxed, as in `force_reserve`.
            self.forced.fetch_add(1, Ordering::Relaxed);
        } else {
            // ORDERING: SeqCst, as above; a hold for a moment with no slot
            // only makes an idle instance wait for a push (rule 13).
            self.held.fetch_sub(1, Ordering::SeqCst);
        }
        outcome
    }

    /// A future waiting at `place` is dropped (rule 13). Returns the
    /// ticket of a slot granted to it meanwhile: the caller gives it back
    /// as for a permit dropped unused ([`push_vacant`](Lane::push_vacant)).
    pub(crate) fn cancel_reserve(&self, place: &mut Place) -> Option<Ticket> {
        self.space.cancel(place).map(Ticket::from_grant)
    }

    /// Is the door closed?
    fn is_closed(&self) -> bool {
        // ORDERING: SeqCst, the waiter's check of rule 10.
        self.opened.count.load(Ordering::SeqCst) & CLOSED != 0
    }

    /// Puts a permit's letter in its slot (rule 13): from now on the slot
    /// counts as a letter accepted.
    ///
    /// # Safety
    ///
    /// As for [`Lane::push`], and `ticket` is a permit's, from
    /// [`poll_reserve`](Lane::poll_reserve).
    pub(crate) unsafe fn push_permit(&self, ticket: Ticket, entry: Entry<M>) {
        // ORDERING: Relaxed, as in `force_reserve`.
        self.forced.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: the caller's.
        unsafe { self.push(ticket, entry) };
        self.permit_filled();
    }

    /// After a permit's push (rule 13): `filled` rises, then `held` falls.
    fn permit_filled(&self) {
        // ORDERING: SeqCst, after the push and before the caller's notify
        // of the ready signal: the notifier's side of its Dekker pair
        // (signal.rs) for an instance waiting for a permit's push.
        self.filled.fetch_add(1, Ordering::SeqCst);
        // ORDERING: SeqCst, as in `try_reserve_permit`; after `filled`, so
        // an instance that sees the hold gone sees the push counted.
        self.held.fetch_sub(1, Ordering::SeqCst);
    }

    /// Fills the slot of a permit dropped unused (rule 13): the reader
    /// passes over it. It stays counted as forced, so `accepted` counts
    /// letters only.
    ///
    /// # Safety
    ///
    /// As for [`Lane::push_permit`].
    pub(crate) unsafe fn push_vacant(&self, ticket: Ticket) {
        // SAFETY: the caller's.
        unsafe { self.push(ticket, Entry::Vacant) };
        self.permit_filled();
    }

    /// Is a permit of this lane held, its slot not filled yet (rule 13)?
    /// Then the length may say mail that no instance can dispatch, and an
    /// idle instance waits for a permit's push, or for the head entry.
    #[inline]
    pub(crate) fn holds_permits(&self) -> bool {
        // ORDERING: SeqCst, after the caller's SeqCst look at the length:
        // a permit's slot seen there has its hold seen here
        // (`try_reserve_permit`). Either answer makes a sound wait; this
        // one keeps an instance from spinning on a held slot.
        self.held.load(Ordering::SeqCst) != 0
    }

    /// Closes the lane to senders; wakes those blocked on it (refused).
    pub(crate) fn close(&self) {
        // ORDERING: SeqCst: one read-modify-write in `opened`'s order
        // decides every slot (rule 1); SeqCst for the waiters' Dekker pair
        // (rule 10).
        self.opened.count.fetch_or(CLOSED, Ordering::SeqCst);
        self.space.notify_all();
    }

    /// Pops the head entry.
    ///
    /// # Safety
    ///
    /// The caller holds its mailbox's take lock (the `&mut Take` that
    /// `pick` and `sweep` in `dispatch.rs` are given): a ring lane has one
    /// reader at a time, and `taken`, which only the reader writes, is the
    /// first ticket not yet read.
    #[inline]
    pub(crate) unsafe fn pop(&self) -> Option<Entry<M>> {
        loop {
            // SAFETY: the caller's.
            match unsafe { self.pop_any() }? {
                // A permit's slot left unused (rule 13).
                Entry::Vacant => {}
                entry => return Some(entry),
            }
        }
    }

    /// Pops the head entry, a vacant slot included.
    ///
    /// # Safety
    ///
    /// As for [`Lane::pop`].
    #[inline]
    unsafe fn pop_any(&self) -> Option<Entry<M>> {
        // ORDERING: Relaxed: the reader is the only writer (rule 4).
        let n = self.taken.load(Ordering::Relaxed);
        // SAFETY: the caller's (above): one reader, and `n`, the count of
        // entries popped, is the first ticket not yet read.
        let entry = unsafe { self.store.pop(n) }?;
        if self.capacity == Capacity::Unbounded {
            // ORDERING: Release: a reader that sees this count (Acquire or
            // stronger) then sees the slot of the entry popped in `opened`,
            // so the length it derives is never negative.
            self.taken.store(n + 1, Ordering::Release);
        } else {
            // ORDERING: SeqCst: the freed slot is what a sender waiting for
            // space checks; this store, then the waiters' count, is the
            // notifier's side of their Dekker pair (signal.rs).
            self.taken.store(n + 1, Ordering::SeqCst);
            self.space.notify_one_granting(|| self.grant_permit());
        }
        Some(entry)
    }

    /// Entries queued or with a slot taken: `taken` first (rule 4).
    /// SeqCst loads, for the checks of the Dekker pairs (signal.rs).
    #[inline]
    fn length(&self) -> usize {
        let taken = self.taken.load(Ordering::SeqCst);
        (self.opened.count.load(Ordering::SeqCst) & COUNT).saturating_sub(taken)
    }

    /// Is an entry queued, ready to pop (a peek at the store itself)?
    /// Under the take lock, as `pop`, or as a hint in an idle instance's
    /// wait while a permit is held (rule 13): a stale `taken` only makes
    /// it answer no.
    #[inline]
    pub(crate) fn has_entries(&self) -> bool {
        // ORDERING: Relaxed, as in `pop`.
        self.store.holds(self.taken.load(Ordering::Relaxed))
    }

    /// What an idle instance waits for in this lane while a permit is held
    /// somewhere (rule 13): while none is held here, an entry queued or
    /// about to be (`has_reserved`); while one is, the head entry pushed
    /// (a peek: a sender's push into a lane with a held permit may be seen
    /// a nap late, never lost).
    #[inline]
    pub(crate) fn has_mail_past_permits(&self) -> bool {
        if self.holds_permits() {
            self.has_entries()
        } else {
            self.has_reserved()
        }
    }

    /// Is an entry queued or about to be (a slot is reserved)? What an
    /// instance checks before sleeping: `opened` is raised by a SeqCst
    /// read-modify-write before every push (signal.rs).
    #[inline]
    pub(crate) fn has_reserved(&self) -> bool {
        self.length() != 0
    }

    /// Entries queued (or with a slot taken).
    pub(crate) fn queued(&self) -> usize {
        self.length()
    }

    /// Letters accepted by a send: every slot taken and kept, less those
    /// pushed past the door. Exact while the lane is quiet; costs the
    /// senders nothing.
    pub(crate) fn accepted(&self) -> u64 {
        // ORDERING: a statistic; SeqCst as every load of `opened`.
        let opened = self.opened.count.load(Ordering::SeqCst) & COUNT;
        (opened as u64).saturating_sub(self.forced.load(Ordering::Relaxed))
    }

    /// Pops every entry at the moment the counts say is there, waiting for
    /// pushes still under way (rule 5).
    ///
    /// # Safety
    ///
    /// As for [`Lane::pop`].
    pub(crate) unsafe fn sweep_into(&self, mut each: impl FnMut(Entry<M>)) {
        let backoff = Backoff::new();
        while self.length() != 0 {
            // SAFETY: the caller's.
            match unsafe { self.pop() } {
                Some(entry) => {
                    each(entry);
                    backoff.reset();
                }
                // A sender took its slot and has not pushed yet, or a
                // permit is held (rule 13): a sender pushes within moments,
                // a permit when its holder uses or drops it, which may take
                // long. Past the spin, the sweep naps between looks, so a
                // held permit costs a waiting thread no core.
                None if backoff.is_completed() && !cfg!(loom) => {
                    std::thread::sleep(SWEEP_NAP);
                }
                None => backoff.snooze(),
            }
        }
    }

    pub(crate) fn dispatched(&self) -> u64 {
        // ORDERING: Relaxed: a statistic.
        self.taken.load(Ordering::Relaxed) as u64
    }
}

#[cfg(all(test, loom))]
mod model;
#[cfg(all(test, not(loom)))]
mod tests;
