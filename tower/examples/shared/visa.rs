//! The visa scenario shared by the examples: the executor from the
//! package's executors.toml, and a handler doing a few milliseconds of CPU
//! work per application.

use bytes::Bytes;
use http::{Request, Response};
use priority_executor::Registry;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

/// The package's executors.toml (the visa executor and its rules).
pub const EXECUTORS_TOML: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/executors.toml");

/// The executor the visa server runs its handler on.
pub const EXECUTOR: &str = "visa_priority_exec";

pub fn registry() -> Result<Arc<Registry>, priority_executor::ConfigError> {
    Registry::from_path(EXECUTORS_TOML).map(Arc::new)
}

/// Checks an application: `rounds` passes of a hash over the form, as a
/// stand-in for XSLT or a signature check. CPU work, a fixed amount per
/// request.
pub fn check_visa(form: &[u8], rounds: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for round in 0..rounds {
        h ^= round;
        for &b in form {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h = h.rotate_left(5);
    }
    black_box(h)
}

/// The rounds of [`check_visa`] over `form` that take about `ms`
/// milliseconds of CPU on this machine: the fastest of many short probes,
/// so that time spent descheduled on a busy machine does not count.
pub fn rounds_for(ms: f64, form: &[u8]) -> u64 {
    let probe = 200;
    let per_round = (0..200)
        .map(|_| {
            let start = Instant::now();
            check_visa(form, probe);
            start.elapsed().as_secs_f64() / probe as f64
        })
        .fold(f64::INFINITY, f64::min);
    ((ms / 1000.0) / per_round.max(1e-12)).round().max(1.0) as u64
}

/// The handler: checks the form and answers with its digest.
pub fn handler(rounds: u64) -> impl Fn(Request<Bytes>) -> Response<Bytes> + Clone + Send + Sync {
    move |request: Request<Bytes>| {
        let digest = check_visa(request.body(), rounds);
        Response::new(Bytes::from(format!("visa checked: {digest:016x}\n")))
    }
}

/// A visa application form.
pub const FORM: &[u8] = b"<visa><applicant>Ada Lovelace</applicant><country>LK</country></visa>";
