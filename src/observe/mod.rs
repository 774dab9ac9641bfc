//! What an executor reports beyond its own counters, each behind a cargo
//! feature and free when that feature is off:
//!
//! - [`facade`] (feature `metrics`): counters, gauges and histograms per
//!   executor and lane through the `metrics` facade, registered once when
//!   the executor is built;
//! - [`span`] (feature `tracing`): each attempt of a job runs inside a span
//!   whose parent is the span that was current at `enqueue`.
//!
//! The pool records from `pool/run.rs` (a worker's turn) and
//! `pool/submit.rs` (the producer's path). With a feature off its module
//! is a stand-in of the same shape whose methods are empty and inline to
//! nothing, so the call sites need no `cfg`.

pub(crate) mod facade;
pub(crate) mod span;
