//! The stage a drain asked for by an actor begins at ([`Head`]): the first
//! stage of the actor's pipeline, or its own stage outside one (Kabuki's
//! `shutdown()`, rule 20 of `README.md`).
//!
//! A pipeline spawns its stages last first, so a stage at the back may
//! ask for the drain (in `init`) before the first stage exists: the
//! request is kept and acted on when the first stage is set.

use super::shared::Link;
use crate::sync::{Mutex, lock};
use std::sync::Weak;

#[derive(Default)]
struct State {
    /// Weak: the first stage's `Core` holds this `Head`.
    first: Option<Weak<dyn Link>>,
    asked: bool,
}

/// Shared by every stage of one pipeline (one per stage outside one).
#[derive(Default)]
pub(crate) struct Head(Mutex<State>);

impl Head {
    /// Sets the first stage; begins its drain if one was asked for already.
    pub(crate) fn set(&self, first: Weak<dyn Link>) {
        let mut state = lock(&self.0);
        let asked = state.asked;
        state.first = Some(first.clone());
        drop(state);
        if asked && let Some(link) = first.upgrade() {
            link.begin_drain();
        }
    }

    /// Begins the drain at the first stage (at once if it exists, else as
    /// soon as it is set). Asking again does nothing more.
    pub(crate) fn drain(&self) {
        let mut state = lock(&self.0);
        state.asked = true;
        let first = state.first.clone();
        drop(state);
        if let Some(link) = first.and_then(|w| w.upgrade()) {
            link.begin_drain();
        }
    }
}
