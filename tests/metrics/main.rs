//! Feature `metrics`: what a recorder receives, read back from a global
//! `DebuggingRecorder` after known runs.
//!
//! The recorder is global, so it is installed once for this binary (before
//! any executor is built: handles are registered at build time) and the
//! tests take turns: a snapshot drains every series it reads. Each test's
//! executor has a name of its own and reads only its own series.

#[path = "../common/mod.rs"]
mod common;

mod every_counter;
mod known_run;
mod panicking_recorder;
mod paused_gauge;
mod support;
