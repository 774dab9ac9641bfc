//! `--serve ADDR`: the live dashboard of the executor while the flood runs
//! (priority-executor-dashboard's ready server, on loopback).

use crate::cli::Options;
use priority_executor::Executor;
use priority_executor_dashboard::{Actions, Dashboard, Server};
use std::io::IsTerminal;

/// Starts the dashboard if `--serve` asks for it, and says where.
pub fn start(options: &Options, executor: &Executor) -> Result<Option<Server>, String> {
    let Some(addr) = &options.serve else {
        return Ok(None);
    };
    let mut dashboard = Dashboard::new().executor(executor);
    if let Some(token) = &options.token {
        dashboard = dashboard.actions(Actions::with_token("floodgate", token.clone()));
    }
    let server = dashboard
        .spawn(addr.as_str())
        .map_err(|e| format!("--serve {addr}: {e}"))?;
    println!(
        "Dashboard: http://{}/ ({})",
        server.local_addr(),
        if options.token.is_some() {
            "pause and resume with the token"
        } else {
            "read-only"
        }
    );
    Ok(Some(server))
}

/// On a terminal, keeps the dashboard up until Enter, so the last state
/// can be looked at; otherwise stops it at once.
pub fn linger(server: Option<Server>) {
    let Some(server) = server else { return };
    if std::io::stdin().is_terminal() {
        println!(
            "Dashboard still at http://{}/ - press Enter to stop.",
            server.local_addr()
        );
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    }
    server.stop();
}
