//! One consumer of a broker, on its own thread: `init`, then the batches
//! the broker hands it, in order, until it is unregistered or the broker
//! ends; then `destroy`.

use super::batch::Batch;
use super::ring::Settle;
use crate::actor::actor::{Actor, StageContext};
use crate::actor::addr::{Downstream, Outbox};
use crate::actor::current::Serving;
use crate::actor::letter::Letter;
use crate::actor::letters::{DeadLetter, DeadReason, Phase};
use crate::actor::outcome::{error_text, fault, panicked};
use crate::actor::reason::Reason;
use crate::actor::shared::Core;
use crate::actor::strategy::Strategy;
use crate::util::drop_quietly;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;

/// What the broker sends a consumer.
pub(crate) enum Work<M> {
    Batch(Vec<Letter<M>>),
    /// No more batches: destroy with this reason once those held are done.
    End(Reason),
}

pub(crate) fn thread_name(broker: &str) -> String {
    format!("{broker}-consumer")
}

/// std's stack for a thread it spawns, unless `RUST_MIN_STACK` says
/// otherwise.
const DEFAULT_STACK: usize = 2 << 20;

/// Letters of up to this size leave a broker's threads std's stack.
const SMALL_LETTER: usize = 16 << 10;

/// Copies of a letter a thread of the broker's gets room for beyond std's
/// stack: a consumer under the priority strategy that copies a letter
/// and sends it back held about 40 in its frames, unoptimised.
const LETTER_COPIES: usize = 64;

/// A builder for one of a broker's threads (a consumer's, the cycle
/// thread, a drain's). They move letters by value, and unoptimised code
/// keeps a copy of the letter in each of several frames: with letters of
/// hundreds of kilobytes, std's stack overflows as a consumer starts.
/// Letters above 16 KiB get room for [`LETTER_COPIES`] copies beyond it
/// (address space: a page is used once touched); smaller ones leave the
/// stack as std (and `RUST_MIN_STACK`) make it.
pub(crate) fn thread_for<M>(name: String) -> std::thread::Builder {
    let builder = std::thread::Builder::new().name(name);
    let letter = std::mem::size_of::<Letter<M>>();
    if letter <= SMALL_LETTER {
        return builder;
    }
    let room = letter
        .saturating_mul(LETTER_COPIES)
        .saturating_add(DEFAULT_STACK);
    builder.stack_size(room)
}

/// A batch that could not be handed over goes back to the mailbox; a
/// letter that cannot is added to `dead` (counted under `hop_limit`, its
/// consumer's), for the caller to hand out once it holds no lock.
pub(crate) fn give_back<M>(
    core: &Core<M>,
    work: Work<M>,
    hop_limit: u32,
    dead: &mut Vec<DeadLetter<M>>,
) {
    if let Work::Batch(letters) = work {
        let n = letters.len();
        for letter in letters {
            if let Err(letter) = core.mb.requeue(letter) {
                dead.push(DeadLetter {
                    info: letter.info(hop_limit),
                    priority: letter.priority,
                    message: letter.msg,
                    reason: DeadReason::Stopped,
                });
            }
        }
        core.mb.let_go_batch(n);
    }
}

/// Counts the hops left of letters the mailbox turned away under
/// `hop_limit`, a consumer's, instead of the mailbox's default one.
pub(crate) fn count_hops_under<M>(dead: &mut [DeadLetter<M>], hop_limit: u32) {
    for d in dead {
        d.info.hops_left = hop_limit.saturating_sub(d.info.sent_back);
    }
}

/// What a consumer shares with its broker.
pub(crate) struct Ties<'a, A: Actor> {
    pub(crate) core: &'a Core<A::In>,
    pub(crate) down: &'a Downstream<A::Out>,
    /// The broker's count of letters performed.
    pub(crate) performed: &'a AtomicU64,
    /// This consumer's batches not yet settled.
    pub(crate) busy: &'a AtomicUsize,
    /// Told as each batch settles.
    pub(crate) settle: &'a Settle,
}

/// The consumer's thread. `started` is told whether `init` succeeded.
pub(crate) fn run<A: Actor>(
    ties: &Ties<'_, A>,
    strategy: Strategy<A::In>,
    mut actor: A,
    id: usize,
    rx: &mpsc::Receiver<Work<A::In>>,
    started: &mpsc::SyncSender<bool>,
) {
    let core = ties.core;
    // Rule 16: a consumer's send to its own broker's full lane never waits.
    let _serving = Serving::enter(core.mb.id());
    let fresh = Letter::new((), core.mb.default_priority).info(strategy.hops());
    let ctx = StageContext {
        stage: &core.mb.name,
        instance: id,
        down: ties.down,
        out_type: std::any::type_name::<A::Out>(),
        head: &core.head,
        fresh,
    };
    let ok = match catch_unwind(AssertUnwindSafe(|| actor.init(&ctx))) {
        Ok(Ok(())) => true,
        Ok(Err(error)) => {
            fault(core, id, Phase::Init, error_text(error), 0, None, None);
            false
        }
        Err(payload) => {
            fault(core, id, Phase::Init, panicked(payload), 0, None, None);
            false
        }
    };
    let _ = started.send(ok);
    let reason = if ok {
        loop {
            match rx.recv() {
                Ok(Work::Batch(letters)) => {
                    let n = letters.len();
                    let out = Outbox {
                        down: ties.down,
                        letter: fresh,
                        performing: true,
                        stage: &core.mb.name,
                        instance: id,
                        head: &core.head,
                    };
                    let mut batch = Batch::new(letters, out, &strategy, core, ties.performed);
                    let outcome =
                        match catch_unwind(AssertUnwindSafe(|| actor.perform_batch(&mut batch))) {
                            Ok(Ok(())) => Ok(()),
                            Ok(Err(error)) => Err(error_text(error)),
                            Err(payload) => Err(panicked(payload)),
                        };
                    batch.finish(id, outcome);
                    core.mb.let_go_batch(n);
                    let mut dead = Vec::new();
                    core.mb.sweep_after_end(&mut dead);
                    if !dead.is_empty() {
                        // What this batch sent back or left untaken: under
                        // this consumer's hop limit.
                        count_hops_under(&mut dead, strategy.hops());
                        core.deliver_dead(&mut dead);
                    }
                    // Settled: what it sent back is queued, the rest let
                    // go (a `wait_quiet` and a `skip_busy` round look).
                    ties.busy.fetch_sub(1, Ordering::Release);
                    ties.settle.notify();
                }
                Ok(Work::End(reason)) => break reason,
                // The broker is gone without a word: cannot happen (it
                // always says `End`); end as drained.
                Err(mpsc::RecvError) => break Reason::Drained,
            }
        }
    } else {
        Reason::FailedInit
    };
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| actor.destroy(reason))) {
        fault(core, id, Phase::Destroy, panicked(payload), 0, None, None);
    }
    drop_quietly(actor);
}
