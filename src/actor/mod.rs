//! Typed actors with prioritized mailboxes, and pipelines of them (feature
//! `actor`): Akka's prioritized mailbox and Kabuki's actor pipelines, in
//! one process, on the executor.
//!
//! - A [`Stage`] is N instances of an [`Actor`] sharing one mailbox; each
//!   instance is one job of the stage's [`Executor`](crate::Executor).
//!   Kabuki's lifecycle: [`Actor::init`], [`Actor::perform`],
//!   [`Actor::destroy`] with a [`Reason`]. [`Stage::resize`] adds and
//!   removes instances while the stage runs, and a [`Resizer`] does it by
//!   the mailbox's depth (Akka's resizer).
//! - The mailbox has one FIFO lane per priority; [`Prioritized`] messages
//!   or a [`PriorityGenerator`] give the priority, the mailbox's default
//!   covers the rest. **Larger is more important**; the seed's levels are
//!   [`Priority::URGENT`](crate::Priority::URGENT) (400),
//!   [`HIGH`](crate::Priority::HIGH) (300),
//!   [`MEDIUM`](crate::Priority::MEDIUM) (200) and
//!   [`LOW`](crate::Priority::LOW) (100).
//! - [`Addr::stop`] (Akka's `PoisonPill`) and [`Addr::kill`] (`Kill`) are
//!   queued at priorities set in [`MailboxConfig`]; [`Stage::drain`] and
//!   [`Pipeline::drain`] send Kabuki's shutdown marker behind the payload.
//! - [`Outbox::letter`] shows a perform its letter's control information
//!   ([`LetterInfo`]: priority, send-backs, predicate runs, TTL, hops
//!   left); `init` may send through [`StageContext::outbox`], and any
//!   actor may ask its pipeline to drain ([`Outbox::drain_pipeline`]).
//! - A [`Broker`] (seed 002) hands its mailbox's letters out in cycles,
//!   as batches round robin over consumers that register and unregister
//!   while it runs ([`Actor::perform_batch`]), and ends after N quiet or
//!   lonely cycles.
//! - Async code awaits room in a full lane with [`Addr::reserve`] (a
//!   [`SendPermit`] once a slot is free; no thread blocks), on a stage or
//!   on a pipeline's [`addr`](Pipeline::addr).
//! - A [`StageMonitor`] ([`Stage::monitor`], [`Pipeline::monitors`]) reads
//!   a stage's counters, latest faults and dead letters, and begins a
//!   drain, without owning the stage: for dashboards and health checks.
//! - A refused message comes back typed in a [`SendError`]; accepted ones
//!   that are not performed come back as [`DeadLetter`]s; failures go to
//!   the fault sink as [`Fault`]s.
//!
//! The ordering rules are written down in `src/actor/README.md`.
//!
//! # Example
//!
//! ```
//! use priority_executor::Priority;
//! use priority_executor::actor::{Actor, ActorError, Outbox, Prioritized, PriorityGenerator, Reason, Stage};
//! use std::sync::mpsc;
//!
//! enum Order {
//!     Cancel(u32),
//!     Place(u32),
//! }
//! impl Prioritized for Order {
//!     fn priority(&self) -> Option<Priority> {
//!         match self {
//!             Order::Cancel(_) => Some(Priority::URGENT),
//!             Order::Place(_) => None, // the default, MEDIUM
//!         }
//!     }
//! }
//!
//! struct Book(mpsc::Sender<String>);
//! impl Actor for Book {
//!     type In = Order;
//!     type Out = ();
//!     fn perform(&mut self, order: Order, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
//!         let line = match order {
//!             Order::Cancel(id) => format!("cancel {id}"),
//!             Order::Place(id) => format!("place {id}"),
//!         };
//!         self.0.send(line)?;
//!         Ok(())
//!     }
//! }
//!
//! let (tx, rx) = mpsc::channel();
//! let stage = Stage::builder("book", move |_| Book(tx.clone()))
//!     .generator(PriorityGenerator::prioritized())
//!     .spawn()?;
//! let book = stage.addr();
//! book.send(Order::Place(1)).unwrap();
//! book.send(Order::Cancel(1)).unwrap();
//! book.stop().unwrap(); // at HIGH: after the cancel; a place still queued is a dead letter
//! let exit = stage.join();
//! assert_eq!(exit.reason, Reason::Stopped);
//! let lines: Vec<String> = rx.try_iter().collect();
//! assert!(lines.contains(&"cancel 1".to_owned()));
//! // Every message is accounted for: the place ran first or was turned away.
//! assert_eq!(exit.metrics.performed + exit.metrics.dead_lettered, 2);
//! # Ok::<(), priority_executor::actor::SpawnError>(())
//! ```

#[allow(clippy::module_inception)]
mod actor;
mod addr;
mod broker;
mod builder;
mod config;
mod counts;
mod current;
mod dispatch;
mod error;
mod head;
mod idle;
mod info;
mod instance;
mod lane;
mod letter;
mod letters;
mod mailbox;
mod metrics;
mod monitor;
mod outcome;
mod pipeline;
mod priority;
mod reason;
mod reserve;
mod resize;
mod resizer;
mod shared;
mod signal;
mod stage;
mod strategy;
mod take;
#[cfg(all(test, not(loom)))]
mod wait_tests;

pub use actor::{Actor, ActorError, StageContext};
pub use addr::{Addr, Outbox};
pub use broker::{Batch, Broker, BrokerBuilder};
pub use builder::StageBuilder;
pub use config::{MAX_CAPACITY, MailboxConfig, Unlisted};
pub use error::{ResizeError, SendError, SpawnError, StageShutDown};
pub use info::LetterInfo;
pub use letters::{DeadLetter, DeadReason, Fault, Phase};
pub use metrics::{MailboxLaneMetrics, StageMetrics};
pub use monitor::StageMonitor;
pub use pipeline::{Pipeline, PipelineBuilder};
pub use priority::{Prioritized, PriorityGenerator};
pub use reason::Reason;
pub use reserve::{Reserving, SendPermit};
pub use resize::MAX_INSTANCES;
pub use resizer::Resizer;
pub use shared::Exit;
pub use stage::Stage;
pub use strategy::Strategy;
