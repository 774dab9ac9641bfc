//! The bridge's settings in `executors.toml`: `[amqp.NAME]` beside
//! `[executors.NAME]`, read with the positions of every key, so an error
//! names the file, the line, the setting and the value.
//!
//! - `error`: the error that names the place, the setting and the value;
//! - `reader`: reading one table's values, placing errors in the text;
//! - `parse`: `[amqp.NAME]` into a `ConsumerConfig`.

mod error;
mod parse;
mod reader;

pub use error::FileConfigError;
