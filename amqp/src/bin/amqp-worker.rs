//! A consumer process: see `shared/worker.rs`.

#[path = "shared/worker.rs"]
mod worker;

fn main() -> std::process::ExitCode {
    worker::main(std::env::args().skip(1).collect())
}
