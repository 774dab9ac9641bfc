//! A live dashboard for [`priority_executor`]: what Flower is to Celery,
//! for executors. A page in the browser shows each executor's lanes (queued,
//! running, rates, the share each lane gets against its weight, waits,
//! refusals) and threads, with small charts updated about once a second;
//! a JSON endpoint gives the same snapshot to scripts. With an explicit
//! opt-in and a bearer token, a lane can be paused and resumed from the
//! page.
//!
//! # Guide
//!
//! ## Mount it
//!
//! [`Dashboard::router`] is an axum [`Router`](axum::Router): nest it
//! wherever the application serves HTTP.
//!
//! ```no_run
//! use priority_executor::{Capacity, Executor, Priority};
//! use priority_executor_dashboard::Dashboard;
//!
//! # async fn run() -> std::io::Result<()> {
//! let exec = Executor::builder()
//!     .name("visa")
//!     .lane(Priority(10), Capacity::Unbounded)
//!     .lane(Priority(1), Capacity::Bounded(10_000))
//!     .build()
//!     .unwrap();
//! let app = axum::Router::new().nest("/dashboard", Dashboard::new().executor(&exec).router());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, app).await
//! # }
//! ```
//!
//! The page is then at `http://127.0.0.1:8080/dashboard`. An open page
//! holds an event stream; for a graceful shutdown, call
//! [`Dashboard::close_streams`] when it begins, or the shutdown waits for
//! the page to close.
//!
//! ## Or run the ready server
//!
//! An application without an async runtime starts one on a thread of its
//! own with [`Dashboard::spawn`], which binds loopback addresses only
//! ([`DEFAULT_ADDR`] is `127.0.0.1:8080`); dropping the [`Server`] stops it.
//!
//! ```
//! use priority_executor::{Capacity, Executor, Priority};
//! use priority_executor_dashboard::Dashboard;
//!
//! let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
//! let server = Dashboard::new().executor(&exec).spawn("127.0.0.1:0").unwrap();
//! println!("dashboard on http://{}/", server.local_addr());
//! drop(server);
//! ```
//!
//! ## Pipelines and stages
//!
//! With the feature `actor` (on by default), [`Dashboard::stage`] and
//! [`Dashboard::pipeline`] show the actor layer's stages and pipelines:
//! each stage in order with its instances, its mailbox's depth per lane,
//! performs per second, faults and dead letters (counted, and the latest
//! few the stage keeps, with their reason). The dashboard keeps a
//! [`StageMonitor`](priority_executor::actor::StageMonitor) per stage, not
//! the stage: the application still owns, drains and drops it. A drain
//! action drains a pipeline gracefully: it stops accepting, performs
//! everything it accepted, then ends.
//!
//! ```
//! # #[cfg(feature = "actor")] {
//! use priority_executor::actor::{Actor, ActorError, Outbox, Stage};
//! use priority_executor_dashboard::Dashboard;
//!
//! struct Nop;
//! impl Actor for Nop {
//!     type In = u8;
//!     type Out = ();
//!     fn perform(&mut self, _: u8, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
//!         Ok(())
//!     }
//! }
//! let stage = Stage::builder("orders", |_| Nop).spawn().unwrap();
//! let app: axum::Router = Dashboard::new().stage(&stage).router();
//! # drop(app);
//! # }
//! ```
//!
//! ## RabbitMQ bridges
//!
//! With the feature `amqp` (off by default: it brings the bridge's AMQP
//! client), `Dashboard::bridge` shows a
//! [`priority-executor-amqp`](https://docs.rs/priority-executor-amqp)
//! bridge's queues: per queue, messages in hand, acked, requeued and
//! dead-lettered, and whether it is connected. The dashboard keeps the
//! bridge's monitor, not the bridge; `Dashboard::bridge_with` takes any
//! function that returns the same counters.
//!
//! ## What it reads
//!
//! Nothing but [`Executor::metrics`](priority_executor::Executor::metrics)
//! (and each stage's monitor), when a viewer asks: no counter of its own, no thread while nobody
//! looks. Each snapshot reads every executor's metrics once; rates and
//! shares are differences over the last few seconds, kept per executor
//! and shared by every viewer. Wait percentiles appear for executors that
//! record waits ([`ExecutorBuilder::record_waits`](priority_executor::ExecutorBuilder::record_waits)),
//! since start and over the same window: the difference of the lane's
//! wait histograms ([`WaitTimes::since`](priority_executor::WaitTimes::since))
//! between the oldest sample kept and now.
//!
//! ## Actions
//!
//! Read-only by default: every action is answered `403 Forbidden`. Given
//! [`Actions`], a request carrying one of its tokens
//! (`Authorization: Bearer …`) may pause and resume a lane
//! ([`Executor::pause_lane`](priority_executor::Executor::pause_lane))
//! and drain a pipeline;
//! without one it gets `401 Unauthorized`; with one, a path whose priority
//! is not a `u32`, or whose name is not UTF-8, gets `400 Bad Request`
//! naming the bad value. Every request for an action,
//! granted or refused, is recorded with who (the token's name), from where,
//! what and when: kept for the page and handed to
//! [`Dashboard::on_action`] (by default printed on stderr). A token is
//! taken without surrounding whitespace, as a request's is; a blank one
//! is refused where it is configured.
//!
//! ```
//! use priority_executor_dashboard::{Actions, Dashboard};
//!
//! let dashboard = Dashboard::new().actions(Actions::with_token("ops", "a long random token"));
//! # drop(dashboard);
//! ```
//!
//! ## The snapshot's JSON
//!
//! `GET api/snapshot` returns [`Snapshot`]; its fields are documented on
//! [`Snapshot`], [`ExecutorSnapshot`], [`LaneSnapshot`],
//! [`ThreadSnapshot`], [`PipelineSnapshot`], [`StageSnapshot`],
//! [`MailboxLaneSnapshot`], [`FaultSnapshot`], [`DeadLetterSnapshot`],
//! [`BridgeSnapshot`], [`BridgeQueueSnapshot`] and [`ActionRecord`], and
//! its `version` is
//! [`SCHEMA_VERSION`]. `GET api/events` sends the same JSON as server-sent
//! `snapshot` events.

#![deny(missing_docs, missing_debug_implementations, unreachable_pub)]

mod actions;
mod board;
mod bridge_snapshot;
#[cfg(feature = "amqp")]
mod bridges;
mod events;
mod log;
mod names;
mod page;
#[cfg(feature = "actor")]
mod pipelines;
mod router;
mod sampler;
mod server;
mod snapshot;
mod stage_snapshot;
mod tokens;
#[cfg(feature = "amqp")]
mod watched_bridge;
#[cfg(feature = "actor")]
mod watched_pipeline;

pub use board::Dashboard;
pub use bridge_snapshot::{BridgeQueueSnapshot, BridgeSnapshot};
pub use log::ActionRecord;
pub use server::{DEFAULT_ADDR, Server};
pub use snapshot::{ExecutorSnapshot, LaneSnapshot, SCHEMA_VERSION, Snapshot, ThreadSnapshot};
pub use stage_snapshot::{
    DeadLetterSnapshot, FaultSnapshot, MailboxLaneSnapshot, PipelineSnapshot, StageSnapshot,
};
pub use tokens::Actions;
