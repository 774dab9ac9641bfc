//! One instance's life, as a job of the stage's executor: `init`, then
//! dispatch and perform until the mailbox says the stage is ending, then
//! wait for the other instances' performs and `destroy`; or, once a
//! resize asks it to leave, `destroy` after its own last perform.

use super::actor::{Actor, StageContext};
use super::addr::{Downstream, Outbox};
use super::current::Holding;
use super::current::Serving;
use super::dispatch::Next;
use super::idle::Clock;
use super::lane::{PERMIT_NAP, PERMIT_NAP_MAX};
use super::letter::Letter;
use super::letters::{DeadReason, Phase};
use super::mailbox::KILL_SENT;
use super::outcome::{copy_of, dead_letter, error_text, fault, panicked, perform_fault, send_back};
use super::reason::Reason;
use super::shared::Core;
use super::strategy::{Decision, Strategy};
use crate::executor::Executor;
use crate::job::RetryPolicy;
use crate::observe::span;
use crate::priority::Priority;
use crate::util::drop_quietly;
use crossbeam_utils::Backoff;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A retry policy and how to copy a message for the next attempt.
pub(crate) type Retry<M> = Option<(RetryPolicy, fn(&M) -> M)>;

/// A stage's settings, shared by its instances.
pub(crate) struct Settings<A: Actor> {
    pub(crate) retry: Retry<A::In>,
    pub(crate) strategy: Strategy<A::In>,
    pub(crate) idle_after: Option<Duration>,
    pub(crate) idle_clock: Clock,
    pub(crate) down: Downstream<A::Out>,
}

/// Starts the instance `actor` made by the factory for `index` (counted
/// as started by the caller) as a job of the stage's executor.
pub(crate) fn start<A: Actor>(
    core: &Arc<Core<A::In>>,
    settings: &Arc<Settings<A>>,
    exec: &Executor,
    actor: A,
    index: usize,
) {
    core.performed.reserve(index);
    let job_core = core.clone();
    let job_settings = settings.clone();
    let started = exec.enqueue(Priority(1), move || {
        run(&job_core, &job_settings, actor, index);
    });
    if let Err(refused) = started {
        // The executor has a thread for every instance, so this cannot
        // happen; if it did, the instance counts as failed so nothing
        // waits for it.
        drop(refused.into_inner());
        core.init_done(false);
        core.exited(index, Reason::FailedInit);
    }
}

/// The instance's job.
fn run<A: Actor>(core: &Core<A::In>, settings: &Settings<A>, mut actor: A, index: usize) {
    // Rules 16 and 19: this thread is one of the stage's instances until
    // the job ends.
    let _serving = Serving::enter(core.mb.id());
    let ctx = StageContext {
        stage: &core.mb.name,
        instance: index,
        down: &settings.down,
        out_type: std::any::type_name::<A::Out>(),
        head: &core.head,
        fresh: Letter::new((), core.mb.default_priority).info(core.mb.hop_limit),
    };
    // Rule 26: a resize may wait for this `init`; one of this stage from
    // here (the `init` or its fault sink) would wait for itself.
    let holding = Holding::enter(core.mb.id());
    let ok = match catch_unwind(AssertUnwindSafe(|| actor.init(&ctx))) {
        Ok(Ok(())) => true,
        Ok(Err(error)) => {
            fault(core, index, Phase::Init, error_text(error), 0, None, None);
            false
        }
        Err(payload) => {
            fault(core, index, Phase::Init, panicked(payload), 0, None, None);
            false
        }
    };
    drop(holding);
    core.init_done(ok);
    // A stage whose spawn failed (the factory panicked for a later
    // instance) serves nothing: its instances are destroyed at once.
    let serving = core.wait_inits();
    let reason = if ok && serving {
        let reason = serve(core, settings, &mut actor, index);
        // Rule 14: every perform of the stage is over before any destroy
        // (rule 26: a removed instance waits for its own only).
        if reason != Reason::Removed {
            core.mb.wait_no_perform();
        }
        reason
    } else {
        Reason::FailedInit
    };
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| actor.destroy(reason))) {
        fault(
            core,
            index,
            Phase::Destroy,
            panicked(payload),
            0,
            None,
            None,
        );
    }
    drop_quietly(actor);
    core.exited(index, reason);
}

/// Dispatches and performs until the stage ends, or until this instance
/// takes a removal (rule 26); returns why it stopped.
fn serve<A: Actor>(
    core: &Core<A::In>,
    settings: &Settings<A>,
    actor: &mut A,
    index: usize,
) -> Reason {
    let mb = &core.mb;
    let mut dead = Vec::new();
    let backoff = Backoff::new();
    let mut finished = false;
    // The permits' fill count, read once idle while a permit is held, and
    // before one more dispatch: a permit's push after that read moves the
    // count, which ends the wait below (lane rule 13). Not read while
    // letters flow, nor while no permit is held: the extra dispatch costs
    // the take lock. While a permit is held the wait also ends at a nap's
    // end, doubling from `PERMIT_NAP` while nothing comes.
    let mut fills = None;
    let mut nap = PERMIT_NAP;
    loop {
        let generation = mb.generation();
        // Rule 26: a removal is taken between letters. Read after the
        // generation: a removal asked after that read bumps it, which
        // ends the wait below.
        if core.take_leave() {
            if finished {
                mb.let_go_batch(1);
            }
            return Reason::Removed;
        }
        let next = mb.next(finished, &mut dead);
        finished = false;
        if !dead.is_empty() {
            core.deliver_dead(&mut dead);
        }
        match next {
            Next::Letter(letter) => {
                process(core, settings, actor, index, letter);
                finished = true;
                backoff.reset();
                nap = PERMIT_NAP;
            }
            Next::Closed(reason) => return reason,
            Next::Empty => {
                if fills.is_none() && mb.holds_permits() {
                    fills = Some(mb.permit_fills());
                    continue;
                }
                // Nothing to dispatch: wait for mail (while a permit is
                // held, not the length alone, which counts the slot a held
                // permit has yet to fill), or a change of phase (lane rule
                // 13).
                let fills = fills.take();
                let changed = || mb.mail_since(fills) || mb.generation() != generation;
                // Spin a little before sleeping: a producer that is just
                // behind costs no wake-up.
                while !backoff.is_completed() && !changed() {
                    backoff.snooze();
                }
                if changed() {
                    continue;
                }
                backoff.reset();
                if fills.is_some() {
                    // A permit is held: the stage is not idle, and the
                    // wait ends at the nap's end too (lane rule 13).
                    mb.ready.wait(Instant::now().checked_add(nap), changed);
                    nap = (nap * 2).min(PERMIT_NAP_MAX);
                    continue;
                }
                let Some(quiet) = settings.idle_after else {
                    mb.ready.wait(None, changed);
                    continue;
                };
                let seen = mb.accepted();
                if !settings.idle_clock.wait_quiet(&mb.ready, quiet, changed)
                    && mb.close_idle(seen, generation, &mut dead)
                {
                    core.deliver_dead(&mut dead);
                }
            }
        }
    }
}

/// One dispatched letter: the strategy's decision, then perform with
/// retries, then the fault sink or a send-back.
fn process<A: Actor>(
    core: &Core<A::In>,
    settings: &Settings<A>,
    actor: &mut A,
    index: usize,
    mut letter: Letter<A::In>,
) {
    let strategy = &settings.strategy;
    let decision = if strategy.is_always() {
        Ok(Decision::Perform)
    } else {
        catch_unwind(AssertUnwindSafe(|| strategy.decide(&mut letter)))
    };
    match decision {
        Ok(Decision::Perform) => {}
        Ok(Decision::SendBack { priority, ttl }) => {
            send_back(core, strategy, letter, priority, ttl);
            return;
        }
        Ok(Decision::Dead(reason)) => {
            dead_letter(core, strategy.hops(), letter, reason);
            return;
        }
        Err(payload) => {
            let error = format!("strategy {}", panicked(payload));
            perform_fault(core, index, error, 0, letter.priority, Some(letter.msg));
            return;
        }
    }
    let info = letter.info(core.mb.hop_limit);
    let Letter {
        mut msg,
        priority,
        sent_back,
        predicate_runs,
        ttl,
    } = letter;
    let copier = settings
        .retry
        .as_ref()
        .map(|(_, copy)| *copy)
        .or_else(|| strategy.copier());
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let copy = match copier.map(|c| copy_of(c, &msg)).transpose() {
            Ok(copy) => copy,
            Err(error) => {
                // Without its copy the letter cannot be retried nor sent
                // back: it faults, with its message, before its perform.
                perform_fault(core, index, error, attempts - 1, priority, Some(msg));
                return;
            }
        };
        let mut outbox = Outbox {
            down: &settings.down,
            letter: info,
            performing: true,
            stage: &core.mb.name,
            instance: index,
            head: &core.head,
        };
        let performed = {
            let _span = span::enter(
                span::perform(&core.mb.name, index, priority, attempts),
                None,
            );
            catch_unwind(AssertUnwindSafe(|| actor.perform(msg, &mut outbox)))
        };
        let error = match performed {
            Ok(Ok(())) => {
                core.performed.add_one(index);
                drop_quietly(copy);
                return;
            }
            Ok(Err(e)) => error_text(e),
            Err(payload) => panicked(payload),
        };
        if let Some((policy, _)) = &settings.retry
            && attempts <= policy.max_retries
            && let Some(again) = copy
        {
            // Rule 15: the backoff gives way to a kill, a stop or a drain;
            // after a kill no further attempt starts.
            core.mb.wait_backoff(policy.delay_after(attempts));
            if core.mb.interrupts() & KILL_SENT != 0 {
                let letter = Letter {
                    msg: again,
                    priority,
                    sent_back,
                    predicate_runs,
                    ttl,
                };
                dead_letter(core, strategy.hops(), letter, DeadReason::Killed);
                return;
            }
            core.mb.counters.retried.fetch_add(1, Ordering::Relaxed);
            msg = again;
            continue;
        }
        let (copy, lowered) = match (strategy.after_failure(priority), copy) {
            (Some(lowered), Some(again)) => (None, Some((lowered, again))),
            (_, copy) => (copy, None),
        };
        if let Some((lowered, again)) = lowered {
            let letter = Letter {
                msg: again,
                priority,
                sent_back,
                predicate_runs,
                ttl,
            };
            send_back(core, strategy, letter, lowered, ttl);
            return;
        }
        perform_fault(core, index, error, attempts, priority, copy);
        return;
    }
}
