//! Which stage the calling thread is an instance of, if any: a send to
//! that stage's own full lane must not block (rule 16 of `README.md`),
//! and dropping the stage must not wait for the thread doing it (rule 19).
//!
//! An instance is one long job of its stage's own executor, so a thread
//! serves at most one stage at a time; the mark is set for the whole job
//! (`init` to the last `destroy` and the stage's end) and cleared after.
//!
//! Also which stages' resizes the calling thread holds up (it resizes
//! them, or runs the `init` a resize waits for): a resize of one of them
//! from this thread would wait for itself (rule 26).

use std::cell::{Cell, RefCell};

thread_local! {
    /// The address of the mailbox whose instance this thread runs, or 0.
    static SERVING: Cell<usize> = const { Cell::new(0) };
}

/// Marks the calling thread as an instance of the stage of `mailbox` (an
/// address, [`Mailbox::id`](super::mailbox::Mailbox::id)) until dropped.
pub(crate) struct Serving {
    before: usize,
}

impl Serving {
    pub(crate) fn enter(mailbox: usize) -> Serving {
        Serving {
            before: SERVING.with(|s| s.replace(mailbox)),
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        SERVING.with(|s| s.set(self.before));
    }
}

/// Is the calling thread an instance of the stage of `mailbox`?
#[inline]
pub(crate) fn is_serving(mailbox: usize) -> bool {
    SERVING.with(|s| s.get() == mailbox)
}

thread_local! {
    /// The stages (by their mailbox's address) whose resize this thread
    /// holds up: it resizes them (and runs their factory), or runs the
    /// `init` of one of their instances.
    static HOLDING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// This thread holds up a resize of a stage until dropped: a resize of
/// that stage from this thread then would wait for itself.
pub(crate) struct Holding(usize);

impl Holding {
    /// `None` if this thread holds up a resize of the stage of `mailbox`
    /// (an address, [`Mailbox::id`](super::mailbox::Mailbox::id)) already.
    pub(crate) fn enter(mailbox: usize) -> Option<Holding> {
        let key = mailbox;
        HOLDING.with_borrow_mut(|held| {
            if held.contains(&key) {
                return None;
            }
            held.push(key);
            Some(Holding(key))
        })
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        HOLDING.with_borrow_mut(|held| {
            if let Some(at) = held.iter().rposition(|k| *k == self.0) {
                held.swap_remove(at);
            }
        });
    }
}
