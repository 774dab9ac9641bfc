//! The actor layer's behaviour through its public API, one module per
//! behaviour (issue 12). Nothing here sleeps to synchronise: instances are
//! held on gates, and every step that could hang runs under a watchdog
//! ([`support::within`]).
//!
//! The actor layer is not built under `--cfg loom` (the loom models cover
//! the pool), so neither is this binary.
#![cfg(not(loom))]

#[path = "../common/mod.rs"]
mod common;
mod support;

mod accounting;
mod backpressure;
mod broker;
mod broker_drop;
mod broker_pools;
#[cfg(feature = "esb")]
mod config_file;
mod end_async;
mod fifo_within_priority;
mod high_starts_next;
mod hop_limits;
mod idioms;
mod instances;
mod kill_overtakes_stop;
mod letter_info;
mod monitor;
mod own_stage;
mod panics;
mod pipeline_drain;
mod priorities;
mod producers;
mod reserve;
mod resize;
mod resizer;
mod retry_backoff;
mod ring_lanes;
mod spawn_errors;
mod strategies;
mod strict_order;
mod weighted_order;
mod workers;
