//! Futures that stay pending: each parks with its waker in a slot the
//! script holds, to be woken (now, from the helper thread, twice) or
//! dropped unwoken; some wake themselves.

use crate::common::{Guard, PANIC_MESSAGE, Record};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// What the script and the future share.
#[derive(Default)]
pub struct Slot {
    /// The waker of the future's last `Pending`, until the script takes it.
    pub waker: Option<Waker>,
    /// Set by the script at the end: the next poll finishes.
    pub finish_now: bool,
    /// Set by the script at the end: the next poll parks for good (its
    /// waker is dropped).
    pub give_up: bool,
}

pub type Shared = Arc<Mutex<Slot>>;

pub fn lock(slot: &Shared) -> MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct Pending {
    pub guard: Guard,
    pub slot: Shared,
    /// Polls that return `Pending` before it is ready.
    pub remaining: u8,
    /// Wakes itself during the poll instead of parking its waker.
    pub self_wake: bool,
    pub panics: bool,
}

impl Pending {
    pub fn new(remaining: u8, self_wake: bool, panics: bool) -> (Pending, Arc<Record>, Shared) {
        let (guard, record) = Guard::new();
        let slot = Shared::default();
        let future = Pending {
            guard,
            slot: Arc::clone(&slot),
            remaining,
            self_wake,
            panics,
        };
        (future, record, slot)
    }
}

impl Future for Pending {
    type Output = u8;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u8> {
        self.guard.called();
        let this = &mut *self;
        let mut slot = lock(&this.slot);
        if this.remaining == 0 || slot.finish_now {
            drop(slot);
            if this.panics {
                panic!("{PANIC_MESSAGE} in a future");
            }
            return Poll::Ready(7);
        }
        this.remaining -= 1;
        if slot.give_up {
            return Poll::Pending;
        }
        if this.self_wake {
            drop(slot);
            cx.waker().wake_by_ref();
        } else {
            slot.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}
