//! Tests against a real RabbitMQ: `AMQP_ADDR`, or the local node that
//! `scripts/rabbitmq start` runs. Without a broker each test prints a note
//! and passes, unless `CI` is set: then it fails.

mod asynchronous;
mod common;
mod dead_letters;
mod errors;
#[cfg(feature = "executors-toml")]
mod file_config;
mod flow;
mod kill;
mod pipeline;
mod pipeline_inbox;
mod priority;
mod proxy;
#[cfg(feature = "executors-toml")]
mod publish_priority;
mod reconnect;
mod retries;
mod stall;
mod stop;
