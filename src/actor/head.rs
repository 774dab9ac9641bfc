//! The stage a drain asked for by an actor begins at ([`Head`]): the first
//! stage of the actor's pipeline, or its own stage outside one (Kabuki's
//! `shutdown()`, rule 20 of `README.md`).
//!
//! A pipeline spawns its stages last first, so a stage at the back may
//! ask for the drain (in `init`) before the first stage exists: the
//! request is kept and acted on when the first stage is set.

use super::mailbox::Mailbox;
use crate::sync::{Mutex, lock};
use std::sync::{Arc, Weak};

/// Begins the drain of the first stage (it holds a `Weak`: the first
/// stage holds this `Head`).
type Begin = Arc<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct State {
    first: Option<Begin>,
    asked: bool,
}

/// Shared by every stage of one pipeline (one per stage outside one, one
/// per broker).
#[derive(Default)]
pub(crate) struct Head(Mutex<State>);

impl Head {
    /// Sets the first stage's mailbox; begins its drain if one was asked
    /// for already.
    pub(crate) fn set<M: Send + 'static>(&self, first: &Arc<Mailbox<M>>) {
        let weak: Weak<Mailbox<M>> = Arc::downgrade(first);
        let begin: Begin = Arc::new(move || {
            if let Some(mb) = weak.upgrade() {
                mb.begin_drain();
            }
        });
        let mut state = lock(&self.0);
        let asked = state.asked;
        state.first = Some(begin.clone());
        drop(state);
        if asked {
            begin();
        }
    }

    /// Begins the drain at the first stage (at once if it exists, else as
    /// soon as it is set). Asking again does nothing more.
    pub(crate) fn drain(&self) {
        let mut state = lock(&self.0);
        state.asked = true;
        let first = state.first.clone();
        drop(state);
        if let Some(begin) = first {
            begin();
        }
    }
}
