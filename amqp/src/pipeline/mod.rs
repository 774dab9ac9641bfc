//! Pipelines across processes: a stage of `priority_executor::actor` whose
//! inbox and outbox are broker queues, so each stage runs in processes of
//! its own (Kabuki's `-a ACTOR -i INBOX -o OUTBOX`), as many per stage as
//! needed, and a drain marker crosses them in order.
//!
//! # The drain across processes
//!
//! With N processes consuming one queue a single marker reaches only one
//! of them, and messages may still be in the others' hands. So:
//!
//! 1. The stage that starts the drain (the source, [`StageProcess::drain`]
//!    without an inbox) first drains its local stage: every output is
//!    published and confirmed. Then it reads how many consumers its outbox
//!    has (M, at least 1) and publishes M markers (index 0..M, count M, one epoch) at
//!    broker priority 0, behind everything published before them.
//! 2. Each consumer of that queue takes exactly one marker: on its first
//!    it stops consuming (a marker or message delivered to it after that is
//!    handed back to the queue, for the others), finishes and acks what it
//!    has in hand (everything delivered to it before the marker), then
//!    drains its local stage, whose outputs are published and confirmed.
//! 3. The holder of a marker other than 0 then reports to the stage's
//!    control queue (`INBOX.drain`) and exits. The holder of marker 0 waits
//!    for the M - 1 reports of its epoch; then every message published into
//!    the queue before the markers has been performed, by whichever
//!    process, and its outputs are in the outbox: it sends markers
//!    downstream as in step 1.
//!
//! A marker sent before a consumer started is not for it: the upstream
//! counted the consumers before it sent the markers. Such a marker, left
//! in the queue by an earlier run (its process died before taking it), is
//! acked and dropped, and the consumer waits for its own run's marker.
//! The send time and the start are compared on the clocks of the two
//! hosts, which must agree to within the time between a consumer's start
//! and the upstream's drain.
//!
//! No step waits for a fixed time, unless the holder of marker 0 is given
//! a limit for the reports
//! ([`drain_reports_within`](StageProcessBuilder::drain_reports_within)).
//! Every process of a stage must be
//! consuming when the markers for its queue are counted (start the
//! downstream processes first, as Kabuki's script did); a process that
//! joins later gets no marker.
//!
//! # Guarantees
//!
//! A message is acked only after its perform returned and every output it
//! sent was confirmed by the broker (at least once: a process that dies
//! in between leaves it to the broker, which delivers it again). A body
//! the stage cannot decode is dead-lettered to `INBOX.dlx` (kept in
//! `INBOX.dead`) with the reason naming the queue and the type; a failed
//! perform is too, after the configured retries.
//!
//! A message the local stage no longer takes (every instance's `init`
//! failed, or the stage ended) is not performed, so neither acked nor
//! dead-lettered: it goes back to the inbox, the process stops consuming
//! (what it was given meanwhile goes back too) and
//! [`StageProcess::drain`] returns an error saying why. The messages wait
//! in the inbox for the stage's other processes, or the next run.

mod builder;
mod envelope;
mod process;
mod queues;
mod remote;
mod report;
mod wire;

pub use builder::StageProcessBuilder;
pub use process::StageProcess;
pub use queues::stage_priorities;
pub use report::DrainReport;
pub use wire::Wire;
