//! The guide: how the crate works, chapter by chapter.
//!
//! Each chapter is a module with nothing in it but its text (the markdown
//! files beside this one), so it is read here, on docs.rs, and its Rust
//! examples are compiled and run by `cargo test --doc` like every other
//! example of the crate.
//!
//! | chapter | what it covers |
//! |---|---|
//! | [`model`] | lanes, pickers, threads, handles, futures, errors, backpressure, shutdown, cancelling, metrics, batches |
//! | [`policies`] | reserved workers, deadlines, aging, retries and dead letters, full lanes, hooks |
//! | [`observability`] | the `metrics` and `tracing` features: every series, the Prometheus example, spans |
//! | [`executors_toml`] | feature `esb`: the `executors.toml` specification, hooks in code, rules, errors, sequences, reloading |
//! | [`actors`] | feature `actor`: actors, mailboxes, stages, pipelines, the seeds' vocabulary |
//! | [`rabbitmq`] | the RabbitMQ bridge (package `priority-executor-amqp`): consuming, guarantees, publishing, processes |
//! | [`http`] | the tower layer (package `priority-executor-tower`) |
//! | [`sleep_protocol`] | the rules of the idle protocol that keep sleeping workers from missing a job |
//! | [`actor_protocol`] | feature `actor`: the ordering rules of mailboxes, stages and pipelines |
//! | [`performance`] | how it compares, measured, and the floodgate demo |
//! | [`layout`] | the workspace and the source tree, file by file, and the tests |
//!
//! The chapters behind a feature (`executors_toml`, `actors`,
//! `actor_protocol`) hold their text when it is on, and only a pointer to
//! it when it is off; docs.rs builds with every feature.

#[doc = include_str!("model.md")]
pub mod model {}

#[doc = include_str!("policies.md")]
pub mod policies {}

#[doc = include_str!("observability.md")]
pub mod observability {}

#[cfg_attr(feature = "esb", doc = include_str!("executors_toml.md"))]
#[cfg_attr(
    not(feature = "esb"),
    doc = "`executors.toml` and the ESB layer: built with feature `esb` (docs.rs has every feature)."
)]
pub mod executors_toml {}

#[cfg_attr(feature = "actor", doc = include_str!("actors.md"))]
#[cfg_attr(
    not(feature = "actor"),
    doc = "Actors and pipelines: built with feature `actor` (docs.rs has every feature)."
)]
pub mod actors {}

#[doc = include_str!("rabbitmq.md")]
pub mod rabbitmq {}

#[doc = include_str!("http.md")]
pub mod http {}

/// The idle protocol: how workers go to sleep and are woken without
/// missing a job, rule by rule (`src/sleep/README.md`).
///
// The protocol files hold no Rust examples, only shell commands, some in
// indented blocks, which rustdoc would take for Rust: they are rendered,
// not run as doctests (and not parsed as Rust).
#[cfg_attr(not(doctest), doc = include_str!("../sleep/README.md"))]
#[allow(rustdoc::invalid_rust_codeblocks)]
pub mod sleep_protocol {}

/// The actor layer's ordering rules: what a mailbox, a stage and a
/// pipeline promise, and how the code keeps it (`src/actor/README.md`).
///
#[cfg_attr(all(feature = "actor", not(doctest)), doc = include_str!("../actor/README.md"))]
#[cfg_attr(not(feature = "actor"), doc = "")]
#[cfg_attr(
    not(feature = "actor"),
    doc = "Built with feature `actor` (docs.rs has every feature)."
)]
#[allow(rustdoc::invalid_rust_codeblocks)]
pub mod actor_protocol {}

#[doc = include_str!("performance.md")]
pub mod performance {}

#[doc = include_str!("layout.md")]
pub mod layout {}
