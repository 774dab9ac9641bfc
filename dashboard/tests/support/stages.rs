//! Stages for the dashboard's tests: an actor held on a gate by one
//! message, so that what is sent next stays queued until the test
//! releases it.

use priority_executor::actor::{Actor, ActorError, Outbox, Stage, StageBuilder};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// The message that holds the instance performing it.
pub const HOLD: u32 = 1000;

/// How long a step may take before it counts as hung: a hang detector,
/// not a timing assertion.
pub const LIMIT: Duration = Duration::from_secs(30);

/// Holds on [`HOLD`], fails on odd numbers, forwards the rest.
pub struct Gated {
    held: mpsc::Sender<()>,
    release: Arc<Mutex<mpsc::Receiver<()>>>,
}

impl Actor for Gated {
    type In = u32;
    type Out = u32;

    fn perform(&mut self, n: u32, out: &mut Outbox<'_, u32>) -> Result<(), ActorError> {
        if n == HOLD {
            let _ = self.held.send(());
            let _ = self.release.lock().unwrap().recv_timeout(LIMIT);
        }
        if n % 2 == 1 {
            return Err(format!("odd number {n}").into());
        }
        let _ = out.send(n);
        Ok(())
    }
}

/// The test's side of the gate.
pub struct Gate {
    held: mpsc::Receiver<()>,
    release: mpsc::Sender<()>,
}

impl Gate {
    /// Waits until an instance performs [`HOLD`].
    pub fn wait_held(&self) {
        self.held.recv_timeout(LIMIT).expect("the instance is held");
    }

    /// Lets the held instance go on.
    pub fn release(&self) {
        self.release.send(()).unwrap();
    }
}

/// A stage of one gated instance, and its gate.
pub fn gated(name: &str) -> (StageBuilder<Gated>, Gate) {
    let (held_tx, held) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    let release_rx = Arc::new(Mutex::new(release_rx));
    let builder = Stage::builder(name, move |_| Gated {
        held: held_tx.clone(),
        release: release_rx.clone(),
    });
    (builder, Gate { held, release })
}

/// Forwards everything.
pub struct Pass;

impl Actor for Pass {
    type In = u32;
    type Out = u32;

    fn perform(&mut self, n: u32, out: &mut Outbox<'_, u32>) -> Result<(), ActorError> {
        let _ = out.send(n);
        Ok(())
    }
}
