//! Dispatch: how an instance takes the next entry of a mailbox under the
//! take lock, and the phases a stage goes through as `stop`, `kill`, a
//! drain, idleness or failed `init` end it (rules 4-11 of `README.md`).

use super::lane::{Entry, Lane};
use super::letter::Letter;
use super::letters::{DeadLetter, DeadReason};
use super::mailbox::{DRAINING, Mailbox};
use super::reason::Reason;
use super::take::{Phase, Take};
use crate::priority::Priority;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;

/// What an instance gets from [`Mailbox::next`].
pub(crate) enum Next<M> {
    Letter(Letter<M>),
    /// Nothing to dispatch now.
    Empty,
    /// The stage is ending: no more letters, ever.
    Closed(Reason),
}

impl<M> Mailbox<M> {
    /// Does any lane hold an entry, or a slot a sender or a permit is
    /// filling? A peek.
    #[inline]
    pub(crate) fn has_mail(&self) -> bool {
        self.lanes().any(Lane::has_reserved)
    }

    /// Is a permit held whose slot is not filled yet, in any lane (lane
    /// rule 13)? Then an idle instance reads [`permit_fills`](Self::permit_fills)
    /// before it looks once more, and waits with [`mail_since`](Self::mail_since).
    #[inline]
    pub(crate) fn holds_permits(&self) -> bool {
        self.lanes().any(Lane::holds_permits)
    }

    /// Permits' slots filled so far, every lane together (lane rule 13). A
    /// sum of counts that only rise, so it moves exactly when a permit's
    /// push happened.
    #[inline]
    pub(crate) fn permit_fills(&self) -> usize {
        self.lanes()
            .fold(0, |sum, lane| sum.wrapping_add(lane.filled()))
    }

    /// What an instance that found nothing to dispatch waits for (lane
    /// rule 13). Without `fills` (no permit was held when it looked): mail,
    /// the length alone, which a sender's slot fills within moments. With
    /// `fills` (the permits' fill count read before it looked last): a
    /// permit's push since then with mail still there (not taken by
    /// another instance meanwhile), or mail in a lane holding no permit,
    /// or a head entry pushed in a lane holding one. The counts and the
    /// length are SeqCst loads of counts raised by a SeqCst
    /// read-modify-write before the notify; the head entry is a peek, so
    /// a caller waiting with `fills` wakes at a deadline too
    /// ([`PERMIT_NAP`](super::lane::PERMIT_NAP)).
    #[inline]
    pub(crate) fn mail_since(&self, fills: Option<usize>) -> bool {
        let Some(fills) = fills else {
            return self.has_mail();
        };
        (self.permit_fills() != fills && self.has_mail())
            || self.lanes().any(Lane::has_mail_past_permits)
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
    ///
    /// The caller's last letter counts as in flight until this dispatch
    /// either hands it a new letter, which takes its place (the count
    /// stays), or does anything else (then it is let go first).
    pub(crate) fn next(&self, finished: bool, dead: &mut Vec<DeadLetter<M>>) -> Next<M> {
        let mut take = self.take.lock();
        let mut finished = finished;
        loop {
            let above = match take.phase {
                Phase::Closed(reason) => {
                    self.let_go(take.phase, &mut finished);
                    return Next::Closed(reason);
                }
                Phase::Stopping(p) => Some(p),
                Phase::Running | Phase::Draining => None,
            };
            match self.pick(&mut take, above) {
                Some((_, Entry::Letter(letter))) => {
                    if !finished {
                        // `in_flight` changes only under the take lock: no
                        // read-modify-write needed.
                        let n = self.in_flight.load(Ordering::Relaxed);
                        self.in_flight.store(n + 1, Ordering::Release);
                    }
                    return Next::Letter(letter);
                }
                Some((at, Entry::Stop)) => {
                    self.let_go(take.phase, &mut finished);
                    self.close_door();
                    self.sweep(&mut take, Some(at), DeadReason::Stopped, dead);
                    self.set_phase(&mut take, Phase::Stopping(at));
                }
                Some((_, Entry::Vacant)) => unreachable!("a lane passes over vacant slots"),
                Some((_, Entry::Kill)) => {
                    self.let_go(take.phase, &mut finished);
                    self.close_door();
                    self.sweep(&mut take, None, DeadReason::Killed, dead);
                    self.set_phase(&mut take, Phase::Closed(Reason::Killed));
                    return Next::Closed(Reason::Killed);
                }
                None => {
                    self.let_go(take.phase, &mut finished);
                    if let Some(p) = above {
                        // Letters sent back at or below a stop being
                        // served are never dispatched: turned away now,
                        // not after the last perform, so the length an
                        // idle instance waits on counts only what will
                        // be served (rule 8).
                        self.sweep(&mut take, Some(p), DeadReason::Stopped, dead);
                    }
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

    /// Lets the caller's last letter go, if `finished` says it has one
    /// (under the take lock).
    fn let_go(&self, phase: Phase, finished: &mut bool) {
        if !std::mem::take(finished) {
            return;
        }
        // `in_flight` changes only under the take lock: no
        // read-modify-write needed.
        let n = self.in_flight.load(Ordering::Relaxed) - 1;
        self.in_flight.store(n, Ordering::Release);
        if n == 0 && (phase != Phase::Running || self.idle) {
            // Instances waiting for the last perform to end; or, for idle
            // shutdown, instances whose quiet period must start again
            // from here (rule 11).
            self.bump();
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
            return schedule
                .pick(
                    &take.cursor,
                    take.order.len(),
                    |i| lane(i).is_some_and(|l| allowed(l) && l.has_entries()),
                    |i| {
                        let l = lane(i).filter(|l| allowed(l))?;
                        // SAFETY: the take lock is held (`take`).
                        unsafe { l.pop() }.map(|e| (l.priority, e))
                    },
                )
                .map(|(_, got)| got);
        }
        for &slot in &take.order {
            if let Some(l) = self.slots.get(slot).and_then(OnceLock::get)
                && allowed(l)
                // SAFETY: the take lock is held (`take`).
                && let Some(e) = unsafe { l.pop() }
            {
                return Some((l.priority, e));
            }
        }
        None
    }

    /// Empties the lanes at or below `at` (all with `None`), highest first
    /// and FIFO within a lane, into `dead`. Control entries are dropped.
    /// `_take`: the take lock is held (lanes have one reader at a time).
    fn sweep(
        &self,
        _take: &mut Take,
        at: Option<Priority>,
        reason: DeadReason,
        dead: &mut Vec<DeadLetter<M>>,
    ) {
        // Every live lane, also one created since the last pick.
        let mut lanes: Vec<&Lane<M>> = self.lanes().collect();
        lanes.sort_by_key(|l| std::cmp::Reverse(l.priority));
        for lane in lanes {
            if at.is_some_and(|p| lane.priority > p) {
                continue;
            }
            // SAFETY: the take lock is held (`_take`).
            unsafe {
                lane.sweep_into(|entry| {
                    if let Entry::Letter(l) = entry {
                        dead.push(DeadLetter {
                            info: l.info(self.hop_limit),
                            priority: l.priority,
                            message: l.msg,
                            reason,
                        });
                    }
                });
            }
        }
    }

    fn set_phase(&self, take: &mut Take, phase: Phase) {
        take.phase = phase;
        self.bump();
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

    /// The stage's instances changed (rule 26): waiting instances look
    /// again (one may have to leave), and quiet periods start again, as
    /// at the end of the last perform (rule 11).
    pub(crate) fn resized(&self) {
        let _take = self.take.lock();
        self.bump();
    }

    /// Begins a drain (rule 10). `false` if the stage was already ending.
    pub(crate) fn begin_drain(&self) -> bool {
        // The door closes only with a change of phase (under the take
        // lock), so a closed door already says "not running": answered
        // without the lock, which a stop's or a kill's sweep may hold for
        // as long as a permit in a swept lane is held.
        if self.is_closed() {
            return false;
        }
        let mut take = self.take.lock();
        if take.phase != Phase::Running {
            return false;
        }
        self.close_door();
        self.set_phase(&mut take, Phase::Draining);
        self.interrupt(DRAINING);
        true
    }

    /// Ends the stage for idleness if nothing was accepted since `seen`
    /// accepted letters, nothing is queued, nothing runs, and no perform
    /// ended since the caller's quiet period began (`generation`, read
    /// before it: the last perform's end bumps it under the take lock,
    /// rule 11).
    pub(crate) fn close_idle(
        &self,
        seen: u64,
        generation: usize,
        dead: &mut Vec<DeadLetter<M>>,
    ) -> bool {
        let mut take = self.take.lock();
        if take.phase != Phase::Running
            || self.in_flight() != 0
            || self.generation() != generation
            || self.has_mail()
            || self.accepted() != seen
        {
            return false;
        }
        self.close_door();
        self.sweep(&mut take, None, DeadReason::Idle, dead);
        self.set_phase(&mut take, Phase::Closed(Reason::Idle));
        true
    }

    /// After the last perform: anything still in a lane (a letter sent
    /// back while a `kill` or `stop` was dispatched) becomes a dead letter,
    /// so nothing accepted is ever stranded.
    pub(crate) fn sweep_rest(&self, reason: DeadReason, dead: &mut Vec<DeadLetter<M>>) {
        let mut take = self.take.lock();
        self.sweep(&mut take, None, reason, dead);
    }

    /// After a broker's batch: if the broker ended meanwhile (a `tick`
    /// from inside the batch ended it, and its last sweep could not wait
    /// for the batch it ran in), what the batch sent back or left untaken
    /// is turned away now, as the end's sweep would have, instead of
    /// staying in the closed lanes. One look at the door otherwise.
    pub(crate) fn sweep_after_end(&self, dead: &mut Vec<DeadLetter<M>>) {
        if !self.is_closed() {
            return;
        }
        let mut take = self.take.lock();
        if let Phase::Closed(reason) = take.phase {
            self.sweep(&mut take, None, DeadReason::after(reason), dead);
        }
    }

    /// Ends the stage at once: no instance survived `init` (rule 13).
    pub(crate) fn close_failed(&self, dead: &mut Vec<DeadLetter<M>>) {
        self.close(Reason::FailedInit, DeadReason::FailedInit, dead);
    }

    /// Ends the stage at once with `reason`, unless it has ended: closes
    /// the door and turns every queued letter into a dead letter (`why`).
    pub(crate) fn close(&self, reason: Reason, why: DeadReason, dead: &mut Vec<DeadLetter<M>>) {
        let mut take = self.take.lock();
        if matches!(take.phase, Phase::Closed(_)) {
            return;
        }
        self.close_door();
        self.sweep(&mut take, None, why, dead);
        self.set_phase(&mut take, Phase::Closed(reason));
    }

    /// Dispatches up to `n` letters for a broker's batch (each counts as
    /// in flight until [`let_go_batch`](Mailbox::let_go_batch)), with the
    /// reason if the mailbox says the end has come (rules 4-10 apply, as
    /// to an instance's dispatch).
    pub(crate) fn take_batch(
        &self,
        n: usize,
        dead: &mut Vec<DeadLetter<M>>,
    ) -> (Vec<Letter<M>>, Option<Reason>) {
        let mut letters = Vec::with_capacity(n);
        while letters.len() < n {
            match self.next(false, dead) {
                Next::Letter(letter) => letters.push(letter),
                Next::Empty => break,
                Next::Closed(reason) => return (letters, Some(reason)),
            }
        }
        (letters, None)
    }

    /// A consumer is done with `n` letters of a batch; or an instance
    /// leaving the stage (rule 26) with its last letter.
    pub(crate) fn let_go_batch(&self, n: usize) {
        if n == 0 {
            return;
        }
        let take = self.take.lock();
        // `in_flight` changes only under the take lock: no
        // read-modify-write needed.
        let left = self.in_flight.load(Ordering::Relaxed) - n;
        self.in_flight.store(left, Ordering::Release);
        if left == 0 && (take.phase != Phase::Running || self.idle) {
            self.bump();
        }
    }
}
