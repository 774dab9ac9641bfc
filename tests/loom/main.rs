//! loom models of the pool's protocols (`src/sleep/README.md`), run on the
//! production code through the `sync` facade:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test --release --test loom
//! ```
#![cfg(loom)]

mod support;

mod backpressure;
mod cell;
mod futures;
mod idle;
mod keep_alive;
mod pause;
mod reserve;
mod shutdown;
mod sleep;
