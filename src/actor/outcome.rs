//! What becomes of a letter that is not performed, shared by a stage's
//! instances and a broker's consumers: sent back (rule 12), handed out as
//! a dead letter, or reported as a fault.

use super::actor::ActorError;
use super::letter::Letter;
use super::letters::{DeadLetter, DeadReason, Fault, Phase};
use super::shared::Core;
use super::strategy::Strategy;
use crate::priority::Priority;
use crate::util::{drop_quietly, panic_message};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;

/// Re-queues `letter` at `priority` with `ttl`, or, past the hop limit,
/// hands it out as a dead letter at the priority it was queued at (its
/// own, not the one it would have been re-queued at).
pub(crate) fn send_back<M>(
    core: &Core<M>,
    strategy: &Strategy<M>,
    mut letter: Letter<M>,
    priority: Priority,
    ttl: Option<u32>,
) {
    if strategy.may_send_back(letter.sent_back) {
        letter.sent_back += 1;
        letter.priority = priority;
        letter.ttl = ttl;
        core.mb.send_back(letter);
    } else {
        dead_letter(core, strategy.hops(), letter, DeadReason::HopLimit);
    }
}

/// Hands `letter` out as a dead letter; its information is reported
/// under the strategy's `hop_limit`.
pub(crate) fn dead_letter<M>(
    core: &Core<M>,
    hop_limit: u32,
    letter: Letter<M>,
    reason: DeadReason,
) {
    let mut dead = vec![DeadLetter {
        info: letter.info(hop_limit),
        priority: letter.priority,
        message: letter.msg,
        reason,
    }];
    core.deliver_dead(&mut dead);
}

/// Counted after the fault is handed out (as dead letters are).
pub(crate) fn count_fault<M>(core: &Core<M>) {
    core.mb.counters.faulted.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn fault<M>(
    core: &Core<M>,
    instance: usize,
    phase: Phase,
    error: String,
    attempts: u32,
    priority: Option<Priority>,
    message: Option<M>,
) {
    core.faults.put(Fault {
        stage: core.mb.name.clone(),
        instance,
        phase,
        error,
        attempts,
        priority,
        message,
    });
}

/// A letter whose perform failed on its last attempt, or that could not
/// be performed at all: reported to the fault sink with what is left of
/// its message, and counted as faulted.
pub(crate) fn perform_fault<M>(
    core: &Core<M>,
    instance: usize,
    error: String,
    attempts: u32,
    priority: Priority,
    message: Option<M>,
) {
    let phase = Phase::Perform;
    fault(
        core,
        instance,
        phase,
        error,
        attempts,
        Some(priority),
        message,
    );
    count_fault(core);
}

pub(crate) fn panicked(payload: Box<dyn Any + Send>) -> String {
    let text = format!("panicked: {}", panic_message(payload.as_ref()));
    drop_quietly(payload);
    text
}

/// The text of an error an `init` or a perform returned, then the error
/// dropped. Its `Display` and its `Drop` are user code: a panic in either
/// is caught (and said in the text) instead of unwinding through the
/// instance, which would leave its letter in flight for ever.
pub(crate) fn error_text(error: ActorError) -> String {
    let text = match catch_unwind(AssertUnwindSafe(|| error.to_string())) {
        Ok(text) => text,
        Err(payload) => format!("an error whose Display {}", panicked(payload)),
    };
    drop_quietly(error);
    text
}

/// A copy of a message for a retry or a send-back after a failure, made
/// by the message's `Clone` (user code): the fault's text if it panicked.
pub(crate) fn copy_of<M>(copy: fn(&M) -> M, msg: &M) -> Result<M, String> {
    catch_unwind(AssertUnwindSafe(|| copy(msg)))
        .map_err(|payload| format!("copying the message {}", panicked(payload)))
}
