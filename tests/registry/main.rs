//! The ESB layer (feature `esb`): `executors.toml`, its errors, rules,
//! sequences and reloading.

#[path = "../common/mod.rs"]
mod common;

mod config_errors;
mod config_fuzz;
mod config_messages;
mod dotted_keys;
mod reload;
mod reload_under_load;
mod sequences;
mod shared;
