//! Which stage the calling thread is an instance of, if any: a send to
//! that stage's own full lane must not block (rule 16 of `README.md`),
//! and dropping the stage must not wait for the thread doing it (rule 19).
//!
//! An instance is one long job of its stage's own executor, so a thread
//! serves at most one stage at a time; the mark is set for the whole job
//! (`init` to the last `destroy` and the stage's end) and cleared after.

use std::cell::Cell;

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
