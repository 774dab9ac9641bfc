//! placeholder
#![deny(missing_docs)]

mod message;

pub use message::{Message, MessageBuilder};
