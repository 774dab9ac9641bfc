//! The bridge's settings in `executors.toml`: `[amqp.NAME]` beside
//! `[executors.NAME]`, read with the positions of every key, so an error
//! is the core's [`ConfigError`](priority_executor::ConfigError), placed
//! and worded as the registry's own.
//!
//! - `reader`: reading one table's values, placing errors in the text;
//! - `parse`: `[amqp.NAME]` into a `ConsumerConfig`.

mod parse;
mod reader;
