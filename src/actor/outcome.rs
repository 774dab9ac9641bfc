//! What becomes of a letter that is not performed, shared by a stage's
//! instances and a broker's consumers: sent back (rule 12), handed out as
//! a dead letter, or reported as a fault.

use super::letter::Letter;
use super::letters::{DeadLetter, DeadReason, Fault, Phase};
use super::shared::Core;
use super::strategy::Strategy;
use crate::priority::Priority;
use crate::util::{drop_quietly, panic_message};
use std::any::Any;
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

pub(crate) fn panicked(payload: Box<dyn Any + Send>) -> String {
    let text = format!("panicked: {}", panic_message(payload.as_ref()));
    drop_quietly(payload);
    text
}
