//! The ESB layer (feature `esb`): `executors.toml`, its errors, rules,
//! sequences and reloading.

#[path = "../common/mod.rs"]
mod common;

mod builder;
mod config_errors;
mod config_fuzz;
mod config_messages;
mod dotted_keys;
mod mailbox_errors;
mod named_lanes;
mod reload;
mod reload_under_load;
mod sequence_faults;
mod sequences;
mod shared;
mod shutdown;

/// Writes `toml` as `executors.toml` in a directory of its own for the
/// test `test` (in the system's temporary directory), and returns its path.
pub fn temp_file(test: &str, toml: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("priority-executor-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("executors.toml");
    std::fs::write(&path, toml).expect("write temp file");
    path
}
