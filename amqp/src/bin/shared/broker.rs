//! The broker for the demos: the one at the URI, or the repository's
//! private node, started if none answers.

use priority_executor_amqp::Publisher;
use std::process::Command;

/// The URI: `AMQP_ADDR`, or the local node of `scripts/rabbitmq`.
pub fn default_uri() -> String {
    std::env::var("AMQP_ADDR")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned())
}

/// A publisher, starting the repository's broker if none answers.
pub fn publisher(uri: &str) -> Result<Publisher, String> {
    if let Ok(p) = Publisher::connect(uri) {
        return Ok(p);
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/rabbitmq");
    println!("no broker answers at the URI: starting one with {script} start");
    let status = Command::new(script)
        .arg("start")
        .status()
        .map_err(|e| format!("cannot run {script}: {e}"))?;
    if !status.success() {
        return Err(format!("{script} start failed ({status})"));
    }
    Publisher::connect(uri).map_err(|e| e.to_string())
}
