//! Message priorities: the `Prioritized` trait and the generator closure
//! for message types the user does not own. The seed's named levels
//! (`Priority::URGENT` ... `Priority::LOW`) are in `src/priority.rs`.

use crate::priority::Priority;
use std::fmt;
use std::sync::Arc;

/// A message type that knows its priority (the seed's `PrioritizedMessage`).
///
/// `None`, the default, means "no priority of its own": the mailbox's
/// default priority applies, as for any unmarked message in the seed.
///
/// # Examples
///
/// ```
/// use priority_executor::Priority;
/// use priority_executor::actor::Prioritized;
///
/// enum Bid {
///     Cancel,          // urgent
///     Place(u64),      // the default
///     Audit,           // between HIGH and URGENT: no change elsewhere
/// }
///
/// impl Prioritized for Bid {
///     fn priority(&self) -> Option<Priority> {
///         match self {
///             Bid::Cancel => Some(Priority::URGENT),
///             Bid::Place(_) => None,
///             Bid::Audit => Some(Priority(350)),
///         }
///     }
/// }
/// assert_eq!(Bid::Audit.priority(), Some(Priority(350)));
/// assert_eq!(Bid::Place(1).priority(), None);
/// # let _ = Bid::Cancel;
/// ```
pub trait Prioritized {
    /// The message's priority, or `None` for the mailbox's default.
    fn priority(&self) -> Option<Priority> {
        None
    }
}

/// Maps a message to its priority (Akka's `PriorityGenerator`, larger
/// first). Cheap to clone.
///
/// # Examples
///
/// ```
/// use priority_executor::Priority;
/// use priority_executor::actor::PriorityGenerator;
///
/// // A type we do not own: strings starting with "!" are urgent.
/// let generator = PriorityGenerator::from_fn(|s: &String| {
///     s.starts_with('!').then_some(Priority::URGENT)
/// });
/// ```
///
/// A stage takes it with
/// [`StageBuilder::generator`](super::StageBuilder::generator); see
/// `examples/mailbox.rs`.
pub struct PriorityGenerator<M> {
    f: GeneratorFn<M>,
}

type GeneratorFn<M> = Arc<dyn Fn(&M) -> Option<Priority> + Send + Sync>;

impl<M> PriorityGenerator<M> {
    /// A generator from a closure; `None` means the default priority.
    ///
    /// # Examples
    ///
    /// See [`PriorityGenerator`].
    pub fn from_fn(f: impl Fn(&M) -> Option<Priority> + Send + Sync + 'static) -> Self {
        PriorityGenerator { f: Arc::new(f) }
    }

    /// Every message at the mailbox's default priority.
    ///
    /// # Examples
    ///
    /// See [`PriorityGenerator`].
    pub fn none() -> Self {
        PriorityGenerator::from_fn(|_| None)
    }

    /// The message's own [`Prioritized::priority`].
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Priority;
    /// use priority_executor::actor::{Prioritized, PriorityGenerator};
    ///
    /// struct Alarm;
    /// impl Prioritized for Alarm {
    ///     fn priority(&self) -> Option<Priority> {
    ///         Some(Priority::URGENT)
    ///     }
    /// }
    /// let generator = PriorityGenerator::prioritized();
    /// # let _: PriorityGenerator<Alarm> = generator;
    /// ```
    pub fn prioritized() -> Self
    where
        M: Prioritized,
    {
        PriorityGenerator::from_fn(|m: &M| m.priority())
    }

    /// The priority this generator gives `message` (`None`: the default).
    #[inline]
    pub(crate) fn priority_of(&self, message: &M) -> Option<Priority> {
        (self.f)(message)
    }
}

impl<M> Clone for PriorityGenerator<M> {
    fn clone(&self) -> Self {
        PriorityGenerator { f: self.f.clone() }
    }
}

impl<M> Default for PriorityGenerator<M> {
    fn default() -> Self {
        PriorityGenerator::none()
    }
}

impl<M> fmt::Debug for PriorityGenerator<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PriorityGenerator(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::{Prioritized, PriorityGenerator};
    use crate::Priority;

    #[test]
    fn generators_give_priorities() {
        // A type we do not own: strings starting with "!" are urgent.
        let generator =
            PriorityGenerator::from_fn(|s: &String| s.starts_with('!').then_some(Priority::URGENT));
        assert_eq!(
            generator.priority_of(&"!stop".to_owned()),
            Some(Priority::URGENT)
        );
        assert_eq!(generator.priority_of(&"hello".to_owned()), None);
        assert_eq!(PriorityGenerator::<u64>::none().priority_of(&7), None);

        struct Alarm;
        impl Prioritized for Alarm {
            fn priority(&self) -> Option<Priority> {
                Some(Priority::URGENT)
            }
        }
        let generator = PriorityGenerator::prioritized();
        assert_eq!(generator.priority_of(&Alarm), Some(Priority::URGENT));
    }
}
