//! Seed 002's broker: cycles of a set interval, batches of a set size
//! handed round robin to consumers that register and unregister while it
//! runs, and an end after N quiet or lonely cycles (rules 23-25 of
//! `src/actor/README.md`).

mod batch;
mod boxed;
mod builder;
mod consumer;
mod handle;
mod join;
mod ring;

pub use batch::Batch;
pub use builder::BrokerBuilder;
pub use handle::Broker;
