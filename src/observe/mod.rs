//! What an executor reports beyond its own counters, behind a cargo
//! feature and free when that feature is off: [`facade`] (feature
//! `metrics`) keeps counters, gauges and histograms per executor and lane
//! in the `metrics` facade, registered once when the executor is built.
//!
//! The pool records from `pool/run.rs` (a worker's turn) and
//! `pool/submit.rs` (the producer's path). With the feature off the module
//! is a stand-in of the same shape whose methods are empty and inline to
//! nothing, so the call sites need no `cfg`.

pub(crate) mod facade;
