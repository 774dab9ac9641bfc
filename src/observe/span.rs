//! Feature `tracing`: each attempt of a job runs inside a span, so a
//! request's span follows its job onto the worker.
//!
//! At `enqueue` the job keeps the span current on the producer's thread
//! (only when a subscriber is set, and only with the feature on); each
//! attempt then runs inside a new span named `job` (target
//! `priority_executor`, level INFO) whose parent is that span, with the
//! fields `executor`, `priority`, `attempt` (1 for the first run; each
//! retry gets its own span) and `wait_ns` (its queue wait). The hooks run
//! inside it. A sequence of the ESB layer records its name in the field
//! `sequence`.
//!
//! An actor stage's instance is one long job of the stage's executor; each
//! attempt of a `perform` runs inside a span named `perform` (same target
//! and level), child of the instance's `job` span, with the fields `stage`,
//! `instance`, `priority` (the message's) and `attempt`.
//!
//! The subscriber is the application's code: a panic in it while a span
//! is made, entered, left or closed is caught, so the job, the worker and
//! the letter are not lost. The subscriber misses the call that panicked
//! (only a panic while making the span leaves the attempt without one).
//! A close that panics while closing it releases its parent, which the
//! attempt still holds; a chain of such closes further up, inside the
//! subscriber's own unwinding, is beyond reach and may still abort.

#[cfg(feature = "tracing")]
pub(crate) use on::*;

#[cfg(not(feature = "tracing"))]
pub(crate) use off::*;

#[cfg(feature = "tracing")]
mod on {
    use crate::priority::Priority;
    use crate::util::drop_quietly;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::time::Duration;
    use tracing::Span;

    /// What a job keeps of the span current at its enqueue: the parent of
    /// its attempts' spans. Dropping it closes the span through the
    /// subscriber, quietly (see [`quietly`]).
    #[derive(Debug)]
    pub(crate) struct Parent(Span);

    impl Drop for Parent {
        fn drop(&mut self) {
            close_quietly(&mut self.0);
        }
    }

    /// A span an attempt runs in, entered: entering, leaving and closing
    /// it call the subscriber, quietly (see [`quietly`]). It holds its
    /// parent too, let go only after the span closed: the registry
    /// releases a closing span's parent while a panic of that close
    /// unwinds, and closing the parent there, with a second panic, would
    /// abort.
    pub(crate) struct Entered {
        span: Span,
        parent: Span,
    }

    impl Drop for Entered {
        fn drop(&mut self) {
            // Left even if entering it panicked: the subscriber may have
            // entered it before the panic, and leaving a span that is
            // not entered is a no-op for the registry.
            quietly(|| self.span.with_subscriber(|(id, to)| to.exit(id)));
            close_quietly(&mut self.span);
            close_quietly(&mut self.parent);
        }
    }

    /// Lets go of `span` (closing it if it was the last reference),
    /// quietly; `span` is none afterwards.
    fn close_quietly(span: &mut Span) {
        let span = std::mem::replace(span, Span::none());
        quietly(|| drop(span));
    }

    /// Enters `span` for the attempt that follows, until the result drops;
    /// `parent` is the span it was made under, if any.
    #[inline]
    pub(crate) fn enter(span: Span, parent: Option<&Parent>) -> Entered {
        let parent = match parent {
            Some(parent) if !parent.0.is_none() => {
                quietly(|| parent.0.clone()).unwrap_or_else(Span::none)
            }
            _ => Span::none(),
        };
        // The span stays out of the closure: a panic while entering must
        // not drop it (closing it would call the subscriber again).
        quietly(|| span.with_subscriber(|(id, to)| to.enter(id)));
        Entered { span, parent }
    }

    /// Runs subscriber code, the application's: a panic there must not
    /// unwind a worker that holds a job or an instance that holds a
    /// letter, so it is caught (the attempt goes on without its span).
    fn quietly<T>(call: impl FnOnce() -> T) -> Option<T> {
        match catch_unwind(AssertUnwindSafe(call)) {
            Ok(value) => Some(value),
            Err(payload) => {
                drop_quietly(payload);
                None
            }
        }
    }

    /// Does a job need its enqueue time for its span? Only once a
    /// subscriber has been set (a relaxed load of tracing's own flag).
    #[inline]
    pub(crate) fn wants_clock() -> bool {
        tracing::dispatcher::has_been_set()
    }

    /// The span to parent a job's attempts to: the one current now, if the
    /// job was stamped (a subscriber was set) and none otherwise.
    #[inline]
    pub(crate) fn current(enqueued_ns: u64) -> Parent {
        if enqueued_ns == 0 {
            Parent(Span::none())
        } else {
            Parent(quietly(Span::current).unwrap_or_else(Span::none))
        }
    }

    /// No span (a job without facts: cannot happen for a stamped one).
    #[inline]
    pub(crate) fn none() -> Span {
        Span::none()
    }

    /// The span one attempt runs in.
    #[inline]
    pub(crate) fn attempt(
        parent: &Parent,
        executor: &str,
        priority: Priority,
        attempt: u32,
        waited: Duration,
    ) -> Span {
        guarded(|| {
            tracing::info_span!(
                target: "priority_executor",
                parent: &parent.0,
                "job",
                executor,
                priority = priority.0,
                attempt,
                wait_ns = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX),
                sequence = tracing::field::Empty,
            )
        })
    }

    /// Names the sequence a job runs, in the span of its attempt.
    #[cfg_attr(not(feature = "esb"), allow(dead_code))]
    pub(crate) fn record_sequence(name: &str) {
        quietly(|| {
            Span::current().record("sequence", name);
        });
    }

    /// The span one attempt of an actor's `perform` runs in.
    #[cfg_attr(any(not(feature = "actor"), loom), allow(dead_code))]
    #[inline]
    pub(crate) fn perform(stage: &str, instance: usize, priority: Priority, attempt: u32) -> Span {
        guarded(|| {
            tracing::info_span!(
                target: "priority_executor",
                "perform",
                stage,
                instance,
                priority = priority.0,
                attempt,
            )
        })
    }

    /// Makes a span through the subscriber, quietly: if that panics, the
    /// attempt runs in no span.
    #[inline]
    fn guarded(make: impl FnOnce() -> Span) -> Span {
        quietly(make).unwrap_or_else(Span::none)
    }
}

/// The stand-in without the feature.
#[cfg(not(feature = "tracing"))]
mod off {
    use crate::priority::Priority;
    use std::time::Duration;

    #[inline(always)]
    pub(crate) fn wants_clock() -> bool {
        false
    }

    /// No span: entering it does nothing.
    pub(crate) struct NoSpan;

    /// What a job keeps of the span current at its enqueue: nothing.
    pub(crate) type Parent = ();

    /// Entering no span does nothing.
    #[inline(always)]
    pub(crate) fn enter(span: NoSpan, _: Option<&Parent>) -> NoSpan {
        span
    }

    #[inline(always)]
    pub(crate) fn none() -> NoSpan {
        NoSpan
    }

    #[inline(always)]
    pub(crate) fn attempt(_: &Parent, _: &str, _: Priority, _: u32, _: Duration) -> NoSpan {
        NoSpan
    }

    #[cfg_attr(not(feature = "esb"), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn record_sequence(_: &str) {}

    #[cfg_attr(any(not(feature = "actor"), loom), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn perform(_: &str, _: usize, _: Priority, _: u32) -> NoSpan {
        NoSpan
    }
}
