//! Small helpers shared across the crate.

use std::any::Any;
use std::fmt::{self, Display};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The message of a caught panic, in the one wording the crate reports.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panicked with a non-string payload".to_owned()
    }
}

/// Drops a value that belongs to user code (a job's captures, its result,
/// a panic payload, a hook), catching a panic from its destructor so it
/// never unwinds through a worker or leaves a handle unresolved. The
/// destructor's own panic message has already been printed by the panic
/// hook; there is nobody else to tell.
#[inline]
pub(crate) fn drop_quietly<T>(value: T) {
    if std::mem::needs_drop::<T>()
        && let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(value)))
        && let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload)))
    {
        // A payload whose own drop panics is leaked rather than risked.
        std::mem::forget(again);
    }
}

/// Runs a user callback (a hook), catching its panic. A panic payload
/// whose own drop panics is dropped quietly too.
#[inline]
pub(crate) fn call_quietly(f: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        drop_quietly(payload);
    }
}

/// `a, b, c` (or `none`): the one way error messages list what exists.
pub(crate) struct List<'a, T>(pub(crate) &'a [T]);

impl<T: Display> Display for List<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            item.fmt(f)?;
        }
        Ok(())
    }
}
