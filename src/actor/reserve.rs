//! Awaiting room in a stage's mailbox: [`Addr::reserve`] and its
//! [`SendPermit`]. The waiting itself is the lane's (`lane/`, rule 13).

use super::addr::Addr;
use super::error::SendError;
use super::lane::{Entry, NoSlot, Ticket};
use super::letter::Letter;
use super::mailbox::Mailbox;
use crate::priority::Priority;
use crate::sync::line::Place;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

impl<M> Addr<M> {
    /// Waits, without blocking a thread, for a free slot in the lane of
    /// `priority`, and returns a [`SendPermit`] that queues one message
    /// there without waiting: the async form of the backpressure of
    /// [`send_with`](Addr::send_with) at a
    /// [`priority`](crate::SendOptions::priority) (as tokio's
    /// `mpsc::Sender::reserve`). For a
    /// [`Pipeline`](super::Pipeline), reserve on its
    /// [`addr`](super::Pipeline::addr).
    ///
    /// Any runtime can poll the future; it needs none. Futures waiting on
    /// one lane are served in the order they began to wait, and waiting on
    /// a full lane never delays one waiting on another lane. An unbounded
    /// lane is always ready.
    ///
    /// Cancel-safe: dropping the future gives up its place in line (and
    /// gives back a slot it had been granted, to the next in line);
    /// dropping a permit unused gives its slot back.
    /// A slot that frees while futures wait is granted to the first in
    /// line before it is woken: until that future is polled again or
    /// dropped, the slot is kept for it, from other futures and from
    /// `send` calls alike (as a permit tokio's semaphore hands a waiter).
    /// Threads blocked in `send` on the same lane take turns with the
    /// futures for freed slots.
    /// Its waker is woken by the instance that frees the slot, while that
    /// instance dispatches: as the wakers of tokio and of every common
    /// runtime do, it must only schedule the task, neither block nor poll
    /// it on the spot (the stage's instances would wait on it).
    ///
    /// A permit holds a slot the stage counts as a letter coming. In a
    /// bounded lane of up to 65 536 letters its place in line is taken
    /// when it is granted: letters sent to that lane after it wait behind
    /// it (first in, first out). In an unbounded lane, or a larger one,
    /// its letter takes its place when it is sent, as any send does. The
    /// stage does not end, nor does a `stop` or `kill` finish turning
    /// letters away, until the permit is used or dropped. Use it at once.
    ///
    /// # Errors
    ///
    /// The future resolves to [`SendError::ShutDown`] once the stage
    /// accepts nothing (also while it waits), and to
    /// [`SendError::UnknownPriority`] under
    /// [`Unlisted::Refuse`](super::Unlisted::Refuse), and to
    /// [`SendError::Full`] when polled on one of the stage's own instances
    /// whenever it would wait (the lane full, or futures ahead of it in
    /// line): as [`send`](Addr::send) does there, it never waits for a
    /// slot only the instances can free (rule 16 of
    /// `src/actor/README.md`). There is no message to hand back yet: the
    /// errors carry `()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, MailboxConfig, Outbox, SendError, Stage};
    /// use priority_executor::{Capacity, Priority};
    /// # use std::future::Future;
    /// # use std::task::{Context, Poll, Waker};
    /// # fn block_on<F: Future>(f: F) -> F::Output {
    /// #     let mut f = std::pin::pin!(f);
    /// #     let mut cx = Context::from_waker(Waker::noop());
    /// #     loop {
    /// #         if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
    /// #             return out;
    /// #         }
    /// #         std::thread::yield_now();
    /// #     }
    /// # }
    ///
    /// struct Sum(u64);
    /// impl Actor for Sum {
    ///     type In = u64;
    ///     type Out = ();
    ///     fn perform(&mut self, n: u64, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
    ///         self.0 += n;
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let stage = Stage::builder("sum", |_| Sum(0))
    ///     .mailbox(MailboxConfig::new().lane(Priority(1), Capacity::Bounded(4)))
    ///     .spawn()?;
    /// let addr = stage.addr();
    /// // In an async fn or block, on any runtime:
    /// block_on(async {
    ///     for n in 0..100 {
    ///         addr.reserve(Priority(1)).await?.send(n);
    ///     }
    ///     Ok::<_, SendError<()>>(())
    /// })?;
    /// assert_eq!(stage.drain().metrics.performed, 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reserve(&self, priority: Priority) -> Reserving<M> {
        Reserving {
            mb: Arc::clone(&self.mb),
            priority,
            slot: None,
            place: Place::default(),
        }
    }
}

/// The future of [`Addr::reserve`]: a [`SendPermit`] once the lane has a
/// free slot. It owns what it needs (`Unpin`, and `Send` with its
/// messages), so a `Service` may keep one between calls to `poll_ready`
/// and poll it with [`poll_reserve`](Reserving::poll_reserve).
#[must_use = "futures do nothing unless polled"]
pub struct Reserving<M> {
    mb: Arc<Mailbox<M>>,
    priority: Priority,
    /// The lane's slot in the mailbox, once looked up.
    slot: Option<usize>,
    place: Place,
}

impl<M> Reserving<M> {
    /// Polls for the permit: what `.await` does, for code that holds the
    /// future in a struct (a `Service`'s `poll_ready`).
    ///
    /// # Errors
    ///
    /// As [`Addr::reserve`].
    pub fn poll_reserve(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<SendPermit<M>, SendError<()>>> {
        let slot = match self.slot {
            Some(slot) => slot,
            None => match self.mb.slot_for(self.priority) {
                Ok(slot) => *self.slot.insert(slot),
                Err(err) => return Poll::Ready(Err(err)),
            },
        };
        let lane = self.mb.lane_at(slot);
        match lane.poll_reserve(&mut self.place, cx) {
            // Rule 16: an instance of the stage waiting for a slot of its
            // own lane would wait for itself.
            Poll::Pending if self.mb.is_own_thread() => {
                if let Some(ticket) = lane.cancel_reserve(&mut self.place) {
                    give_back(&self.mb, slot, ticket);
                }
                Poll::Ready(Err(SendError::Full {
                    priority: self.priority,
                    capacity: lane.capacity.limit().unwrap_or(usize::MAX),
                    message: (),
                }))
            }
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(ticket)) => Poll::Ready(Ok(SendPermit {
                mb: Arc::clone(&self.mb),
                slot,
                priority: self.priority,
                ticket: Some(ticket),
            })),
            Poll::Ready(Err(NoSlot::Closed | NoSlot::Full)) => {
                Poll::Ready(Err(SendError::ShutDown {
                    stage: self.mb.name.clone(),
                    message: (),
                }))
            }
        }
    }
}

impl<M> Future for Reserving<M> {
    type Output = Result<SendPermit<M>, SendError<()>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.poll_reserve(cx)
    }
}

impl<M> Unpin for Reserving<M> {}

impl<M> Drop for Reserving<M> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot
            && let Some(ticket) = self.mb.lane_at(slot).cancel_reserve(&mut self.place)
        {
            give_back(&self.mb, slot, ticket);
        }
    }
}

impl<M> fmt::Debug for Reserving<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reserving")
            .field("stage", &self.mb.name)
            .field("priority", &self.priority)
            .field("waiting", &!self.place.is_new())
            .finish()
    }
}

/// A slot held in a stage's mailbox lane, from [`Addr::reserve`]: queues
/// one message there without waiting, or, dropped unused, gives the slot
/// back.
///
/// Hold it briefly. Until it is used or dropped, the letters sent to its
/// lane after it wait behind it (in a bounded lane of up to 65 536
/// letters; see [`Addr::reserve`]), a drain, stop or kill waits for it, and
/// the stage's idle instances look for mail at short intervals (a nap of
/// at most 5 ms) rather than only when woken. A permit leaked with
/// [`std::mem::forget`] keeps all of that for the stage's life.
#[must_use = "a permit holds a slot of the lane until it is used or dropped"]
pub struct SendPermit<M> {
    mb: Arc<Mailbox<M>>,
    slot: usize,
    priority: Priority,
    /// `None` once used.
    ticket: Option<Ticket>,
}

impl<M> SendPermit<M> {
    /// The priority the message will carry.
    pub fn priority(&self) -> Priority {
        self.priority
    }

    /// Queues `msg` in the permit's slot, without waiting. It cannot be
    /// refused: the slot was taken while the stage accepted messages, so
    /// the message is performed, or handed out as a dead letter by a
    /// `stop` or `kill` queued ahead of it.
    ///
    /// # Examples
    ///
    /// See [`Addr::reserve`].
    pub fn send(mut self, msg: M) {
        let ticket = self.ticket.take().expect("a permit is used only once");
        let letter = Entry::Letter(Letter::new(msg, self.priority));
        // SAFETY: the ticket was taken from this lane, and `take` above
        // sees that it is pushed once.
        unsafe { self.mb.lane_at(self.slot).push_permit(ticket, letter) };
        self.mb.ready.notify_one();
    }
}

impl<M> Drop for SendPermit<M> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            give_back(&self.mb, self.slot, ticket);
        }
    }
}

impl<M> fmt::Debug for SendPermit<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendPermit")
            .field("stage", &self.mb.name)
            .field("priority", &self.priority)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::SendOptions;
    use crate::actor::{Actor, ActorError, MailboxConfig, Outbox, Stage};
    use crate::priority::{Capacity, Priority};
    use std::sync::mpsc;
    use std::task::{Context, Poll, Waker};
    use std::time::{Duration, Instant};

    struct Report(mpsc::Sender<u32>);

    impl Actor for Report {
        type In = u32;
        type Out = ();
        fn perform(&mut self, n: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
            let _ = self.0.send(n);
            Ok(())
        }
    }

    /// Waits until `done` holds, failing after a generous limit: a hang
    /// detector, not a timing assertion.
    fn until(what: &str, done: impl Fn() -> bool) {
        let give_up = Instant::now() + Duration::from_secs(30);
        while !done() {
            assert!(Instant::now() < give_up, "gave up waiting: {what}");
            std::thread::yield_now();
        }
    }

    /// A permit held at the head of a ring lane, with a letter behind it:
    /// the letter waits for the permit, and the instances sleep meanwhile
    /// (they wait for a push, not for the lane's length, which counts the
    /// held slot). They once spun, a core each, for as long as the permit
    /// was held.
    #[test]
    fn instances_sleep_while_a_held_permit_heads_their_lane() {
        let (tx, performed) = mpsc::channel();
        let stage = Stage::builder("held", move |_| Report(tx.clone()))
            .instances(2)
            .mailbox(MailboxConfig::new().lane(Priority(1), Capacity::Bounded(4)))
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        let mut cx = Context::from_waker(Waker::noop());
        let Poll::Ready(Ok(permit)) = addr.reserve(Priority(1)).poll_reserve(&mut cx) else {
            panic!("an empty lane has room");
        };
        addr.send_with(2, SendOptions::new().priority(Priority(1)))
            .expect("accepted");
        until("both instances asleep", || stage.waiting() == 2);
        assert!(
            performed.try_recv().is_err(),
            "the letter waits for the permit"
        );
        permit.send(1);
        let mut got = vec![
            performed.recv().expect("performed"),
            performed.recv().expect("performed"),
        ];
        got.sort_unstable();
        assert_eq!(got, [1, 2]);
        assert_eq!(stage.drain().metrics.performed, 2);
    }
}

/// Gives back a permit's slot unused (a permit dropped, or a slot granted
/// to a future dropped before it looked): the reader passes over it.
fn give_back<M>(mb: &Mailbox<M>, slot: usize, ticket: Ticket) {
    // SAFETY: `ticket` is a permit's, taken from the lane at `slot` of
    // this mailbox (`poll_reserve` or a grant), and pushed only here.
    unsafe { mb.lane_at(slot).push_vacant(ticket) };
    // An instance waiting for the slot's push (a drain, lane rule 12)
    // looks again.
    mb.ready.notify_one();
}
