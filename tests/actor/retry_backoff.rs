//! A failing letter's retry backoff gives way to control entries: a kill
//! starts no further attempt, a stop or drain runs the remaining attempts
//! without their backoff. Backoffs here are a minute long: waiting one out
//! shows as a hang under the watchdog.

use super::common::within;
use priority_executor::RetryPolicy;
use priority_executor::actor::{
    Actor, ActorError, DeadReason, Outbox, Phase, Reason, Stage, StageBuilder,
};
use std::sync::mpsc;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);
const BACKOFF: Duration = Duration::from_secs(60);

/// Fails every attempt, reporting it first.
struct Fails(mpsc::Sender<u32>);

impl Actor for Fails {
    type In = u32;
    type Out = ();
    fn perform(&mut self, n: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        self.0.send(n)?;
        Err(format!("letter {n} fails").into())
    }
}

/// A stage retrying 4 times a minute apart, and the attempts it makes.
fn failing(name: &str) -> (StageBuilder<Fails>, mpsc::Receiver<u32>) {
    let (tx, attempts) = mpsc::channel();
    let builder = Stage::builder(name, move |_| Fails(tx.clone()))
        .retry(RetryPolicy::new(4).backoff(BACKOFF, 1.0));
    (builder, attempts)
}

#[test]
fn a_kill_ends_a_retry_backoff_and_starts_no_further_attempt() {
    within("kill during a retry backoff", LIMIT, || {
        let (builder, attempts) = failing("kill-backoff");
        let stage = builder.spawn().expect("spawn");
        let addr = stage.addr();
        addr.send(7).expect("accepted");
        assert_eq!(attempts.recv(), Ok(7), "the first attempt ran");
        addr.kill().expect("kill queued");
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Killed);
        assert_eq!(attempts.try_iter().count(), 0, "no attempt after the kill");
        assert_eq!(exit.metrics.dead_lettered, 1);
        assert_eq!(exit.metrics.performed + exit.metrics.faulted, 0);
        assert_eq!(exit.metrics.offered, 1);
    });
}

#[test]
fn a_kill_ends_the_backoff_and_the_letter_is_a_dead_letter() {
    within("kill: the letter's end", LIMIT, || {
        let (builder, attempts) = failing("kill-dead");
        let (tx, dead) = mpsc::channel();
        let stage = builder
            .on_dead_letter(move |d| tx.send(d).expect("dead letter"))
            .spawn()
            .expect("spawn");
        stage.addr().send(9).expect("accepted");
        assert_eq!(attempts.recv(), Ok(9));
        stage.addr().kill().expect("kill queued");
        assert_eq!(stage.join().reason, Reason::Killed);
        let dead: Vec<_> = dead.try_iter().collect();
        assert_eq!(dead.len(), 1);
        assert_eq!((dead[0].message, dead[0].reason), (9, DeadReason::Killed));
    });
}

#[test]
fn a_stop_runs_the_remaining_attempts_without_their_backoff() {
    within("stop during a retry backoff", LIMIT, || {
        let (builder, attempts) = failing("stop-backoff");
        let stage = builder.spawn().expect("spawn");
        stage.addr().send(3).expect("accepted");
        assert_eq!(attempts.recv(), Ok(3));
        stage.addr().stop().expect("stop queued");
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Stopped);
        assert_eq!(attempts.try_iter().count(), 4, "the 4 retries ran");
        assert_eq!((exit.metrics.faulted, exit.metrics.retried), (1, 4));
    });
}

#[test]
fn a_drain_runs_the_remaining_attempts_without_their_backoff() {
    within("drain during a retry backoff", LIMIT, || {
        let (builder, attempts) = failing("drain-backoff");
        let stage = builder.spawn().expect("spawn");
        stage.addr().send(5).expect("accepted");
        assert_eq!(attempts.recv(), Ok(5));
        let faults = stage.take_faults();
        assert!(faults.is_empty());
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_eq!(attempts.try_iter().count(), 4);
        assert_eq!(exit.metrics.faulted, 1);
    });
}

#[test]
fn a_fault_after_retries_cut_short_by_a_stop_names_every_attempt() {
    within("stop: the fault", LIMIT, || {
        let (builder, attempts) = failing("stop-fault");
        let (tx, faults) = mpsc::channel();
        let stage = builder
            .on_fault(move |f| tx.send(f).expect("fault"))
            .spawn()
            .expect("spawn");
        stage.addr().send(1).expect("accepted");
        assert_eq!(attempts.recv(), Ok(1));
        stage.addr().stop().expect("stop queued");
        stage.join();
        let faults: Vec<_> = faults.try_iter().collect();
        assert_eq!(faults.len(), 1);
        assert_eq!(
            (faults[0].phase, faults[0].attempts, faults[0].message),
            (Phase::Perform, 5, Some(1))
        );
    });
}
