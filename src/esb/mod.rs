//! The ESB layer (cargo feature `esb`, on by default): executors declared
//! in `executors.toml` and looked up by name, messages with properties,
//! rules that give a message its priority, and named sequences, as in
//! Synapse. It uses only the public API of the pool.
//!
//! - [`message`]: a message, its properties and body;
//! - [`rules`]: the `[rules.NAME]` tables, message -> priority;
//! - [`config`]: the file's shape, checked and turned into builders;
//! - [`config_error`]: an error with the file, line, executor and key;
//! - [`sequence`]: named sequences, their fault handlers and metrics;
//! - [`registry`]: [`Registry`], the registry, and reloading it.

pub(crate) mod config;
pub(crate) mod config_error;
pub(crate) mod message;
pub(crate) mod registry;
pub(crate) mod rules;
pub(crate) mod sequence;
