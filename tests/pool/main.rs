//! The pool's behaviour through its public API, one module per behaviour.

#[path = "../common/mod.rs"]
mod common;

mod accounting;
mod aging;
mod async_handle;
mod backpressure;
mod batch;
mod batch_user_code;
mod build_errors;
mod cancel;
mod clones;
mod config_readback;
mod deadlines;
mod destructors;
mod end_async;
mod fifo_within_priority;
mod futures;
mod growth;
mod hooks;
mod idioms;
mod named_lanes;
mod panics;
mod pause;
mod pool_waits;
mod refused_after_shutdown;
mod rejection_policies;
mod reliability;
mod reserve;
mod reserved_workers;
mod resize;
mod retries;
mod shutdown;
mod shutdown_now;
mod spawn_failure;
mod thread_settings;
mod unknown_priority;
mod wait_idle;
mod waits;
mod weighted_order;
