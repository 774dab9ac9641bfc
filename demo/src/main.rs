//! The floodgate: after a holiday, a backlog of standard visa applications
//! and a smaller number of priority ones arrive at once. A priority executor
//! with lanes 10 and 1 serves them ten to one, so priority applications are
//! not kept waiting behind the flood; a plain FIFO pool serves them in
//! arrival order. Both runs are timed from inside the jobs, printed as a
//! table per lane and drawn as an SVG chart.
//!
//! ```text
//! cargo run --release -p priority-executor-demo
//! cargo run --release -p priority-executor-demo -- --jobs 2000 --picker classic --svg /tmp/f.svg
//! cargo run --release -p priority-executor-demo -- --json results.json
//! cargo run --release -p priority-executor-demo -- --serve 127.0.0.1:8080
//! ```
//!
//! With `--serve`, the live dashboard (priority-executor-dashboard) shows
//! the executor's lanes while the flood runs. Served, the flood is larger
//! (40 000 applications) and arrives over 20 s (`--jobs`, `--arrive-over`
//! change that), faster than the threads serve it: the priority lane stays
//! short while the standard lane grows. `--token T` lets the page pause
//! and resume a lane.
//!
//! On a terminal, while each run goes on, a bar per class shows the
//! applications done, those still queued and the p99 wait so far (for the
//! executor from its `metrics()`), with a line for the threads.
//!
//! The executor is `visa_priority_exec` from `executors.toml` (its lanes,
//! weights, capacities and picker), run on one thread per core (`--threads`)
//! so the flood meets a busy pool; the FIFO pool gets as many threads. Each
//! application is a call to an external service, simulated by blocking the
//! worker for `--work-us` microseconds, so the figures depend on the thread
//! count, not on what else the machine is doing.

mod chart;
mod cli;
mod flood;
mod json;
mod progress;
mod run;
mod serve;
mod source;
mod stats;
mod timeline;

use std::process::ExitCode;

fn main() -> ExitCode {
    // `--help` is printed on stdout (exit 0), a refused command line on
    // stderr with what was wrong (exit 2).
    let options = cli::parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit());
    match run::run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("floodgate: {e}");
            ExitCode::FAILURE
        }
    }
}
