//! A message for the local stage, and how its perform came out.

use std::sync::mpsc::SyncSender;

/// How a perform of a message from the inbox came out, as its handler
/// learns it.
pub(super) enum Performed {
    Done,
    Failed(String),
    Panicked,
    Skipped,
}

/// Tells the waiting handler how the perform came out; dropped unused (a
/// panic, or a letter the stage never performed), it says so.
pub(super) struct Done(pub(super) Option<SyncSender<Performed>>);

impl Done {
    pub(super) fn finish(mut self, performed: Performed) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(performed);
        }
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(if std::thread::panicking() {
                Performed::Panicked
            } else {
                Performed::Skipped
            });
        }
    }
}

/// A message for the local stage, from the inbox (with the handler
/// waiting on `done`) or sent by this process.
pub(super) struct Envelope<M> {
    pub(super) msg: M,
    pub(super) done: Option<Done>,
}
