//! The end of an `ops` session: one of the shutdowns, the futures still
//! parked woken or given up, then every job, future and lane accounted for.

use crate::End;
use crate::check::{Fate, Kind, Run};
use crate::common::{self, PANIC_MESSAGE, step};
use crate::futures;
use crate::helper::Helper;
use priority_executor::{EnqueueError, Executor, JobError, JobOptions};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{Ordering, fence};
use std::time::Duration;

impl Run {
    pub fn end(
        mut self,
        exec: Executor,
        end: End,
        helper: &mut Helper,
        release_holds: impl FnOnce(),
    ) {
        let mut handed_back_dropped = 0usize;
        let mut stopped = false;
        // A graceful shutdown from this thread, outside the pool, waited
        // for the pool's end: every future still parked then was dropped,
        // woken or not, its handle resolving `Cancelled` (`spawn_future`'s
        // docs).
        let mut ended_outside = false;
        let wake_rest = match end {
            End::Shutdown | End::ShutdownThenWake { .. } => {
                release_holds();
                step("shutdown");
                exec.shutdown();
                ended_outside = true;
                // Nothing is left to poll a future: each one ran to its
                // end during the shutdown or was dropped at the pool's
                // end. (A wake sent to the helper thread may come after
                // that end and have a future polled again.)
                if !self.helper_wakes {
                    for (id, f) in self.futures.iter().enumerate() {
                        let handle = f.handle.as_ref().expect("a future's handle");
                        assert!(
                            handle.is_finished(),
                            "future {id} unfinished after a graceful shutdown"
                        );
                    }
                }
                matches!(end, End::ShutdownThenWake { wake_rest: true })
            }
            End::Drop => {
                release_holds();
                step("drop");
                // The script's clones go; the helper thread's is the last,
                // dropped there once the resizes still to come are applied.
                self.exec = None;
                drop(exec);
                true
            }
            End::ShutdownNow {
                run_mask,
                wake_rest,
            } => {
                step("shutdown_now");
                stopped = true;
                let pending = exec.shutdown_now();
                // Released first: a held job handed back is run here.
                release_holds();
                let m = exec.metrics();
                assert_eq!(
                    m.lanes.iter().map(|l| l.handed_back).sum::<u64>(),
                    pending.len() as u64,
                    "{m:?}"
                );
                step("run handed back");
                for (i, job) in pending.into_iter().enumerate() {
                    if run_mask >> (i % 64) & 1 == 1 {
                        let _ = catch_unwind(AssertUnwindSafe(|| job.run()));
                    } else {
                        drop(job);
                        handed_back_dropped += 1;
                    }
                }
                drop(exec);
                wake_rest
            }
        };
        // The resizes and wakes still to come race the shutdown.
        step("helper");
        helper.finish();
        let gone = matches!(end, End::Drop);
        if gone {
            // Nothing keeps the pool: a future woken now has no pool to
            // go back to.
            self.exec = None;
        }

        // Every future parked now is woken (its next poll finishes) or
        // given up (its waker dropped: it never finishes).
        step("futures");
        for f in &self.futures {
            let waker = {
                let mut slot = futures::lock(&f.slot);
                if wake_rest {
                    slot.finish_now = true;
                } else {
                    slot.give_up = true;
                }
                slot.waker.take()
            };
            if wake_rest && let Some(waker) = waker {
                waker.wake();
            }
        }
        if let Some(exec) = &self.exec {
            step("threads exit");
            // A future woken after a graceful shutdown is polled on a
            // thread started for it; once none is alive, nothing moves.
            while exec.metrics().threads.live > 0 {
                std::thread::yield_now();
            }
            // ORDERING: pairs with each worker's SeqCst decrement of `live`.
            fence(Ordering::Acquire);
        }

        step("check futures");
        let mut abandoned = vec![0u64; self.futures_in_lane.len()];
        let mut cancelled_futures = 0usize;
        for (id, f) in self.futures.iter_mut().enumerate() {
            let handle = f.handle.take().expect("a future's handle");
            if f.waker_dropped && !(ended_outside || gone) {
                // Its poll parked it with the waker the script dropped:
                // nothing can poll it again, and nothing ended the pool
                // from outside to drop it.
                assert!(
                    !handle.is_finished(),
                    "future {id} finished without its waker"
                );
            }
            if (!wake_rest || f.waker_dropped) && !handle.is_finished() {
                abandoned[f.lane] += 1;
                drop(handle);
                assert_eq!(
                    f.record.drops(),
                    1,
                    "future {id}: given up, not dropped once"
                );
                continue;
            }
            let result = handle.join();
            let (calls, drops) = (f.record.calls(), f.record.drops());
            assert_eq!(drops, 1, "future {id}: dropped {drops} times");
            if f.waker_dropped {
                assert_eq!(
                    result,
                    Err(JobError::Cancelled),
                    "future {id} finished without its waker"
                );
            }
            match result {
                Ok(7) => assert!(!f.panics && calls >= 1, "future {id}"),
                Err(JobError::Panicked { message }) => {
                    assert!(f.panics && calls >= 1, "future {id}");
                    assert_eq!(message, format!("{PANIC_MESSAGE} in a future"));
                }
                Err(JobError::Cancelled) => {
                    assert!(
                        stopped || gone || ended_outside,
                        "future {id} cancelled without shutdown_now or the pool's end"
                    );
                    if !stopped {
                        // Dropped parked at the end: polled before that.
                        assert!(calls >= 1, "future {id} cancelled unpolled");
                    }
                    cancelled_futures += 1;
                }
                other => panic!("future {id}: {other:?}"),
            }
        }

        if let Some(exec) = &self.exec {
            step("check lanes");
            for (lane, given_up) in exec.metrics().lanes.iter().zip(&abandoned) {
                // A future given up is accepted and never settled, unless
                // it was handed back by `shutdown_now` (and then parked
                // again by its poll off the pool): that settled it.
                if stopped {
                    assert!(
                        lane.settled() <= lane.submitted
                            && lane.submitted <= lane.settled() + given_up,
                        "{given_up} futures given up: {lane:?}"
                    );
                } else {
                    assert_eq!(
                        lane.submitted,
                        lane.settled() + given_up,
                        "{given_up} futures given up: {lane:?}"
                    );
                }
                assert_eq!(lane.queued, 0, "{lane:?}");
            }
            assert!(exec.is_terminated());
            // Refusals after shutdown leave nothing behind: no phantom
            // queued job, no slot kept, no rejection counted.
            let rejected: Vec<u64> = exec.metrics().lanes.iter().map(|l| l.rejected).collect();
            for &p in &self.priorities {
                assert!(matches!(
                    exec.enqueue(p, || ()).unwrap_err(),
                    EnqueueError::ShutDown { .. }
                ));
                assert!(matches!(
                    exec.enqueue_with(p, || (), JobOptions::new().wait_at_most(Duration::ZERO))
                        .unwrap_err(),
                    EnqueueError::ShutDown { .. }
                ));
            }
            for (lane, before) in exec.metrics().lanes.iter().zip(rejected) {
                assert_eq!(lane.queued, 0, "{lane:?}");
                assert_eq!(lane.rejected, before, "{lane:?}");
            }
        }
        self.exec = None;

        step("check jobs");
        let mut cancelled = 0;
        let mut lost = 0;
        // A job `cancel()` stopped keeps its place until a worker reaches
        // it and drops it unrun (`JobHandle::cancel`'s docs): after an end
        // that did not wait for the workers (the last clone dropped by a
        // job, a shutdown from a job), that may come after this check.
        // Its closure is counted once no worker is left.
        let mut cancelled_closures = Vec::new();
        for (id, job) in std::mem::take(&mut self.jobs).into_iter().enumerate() {
            let result = match job.fate {
                Fate::Accepted(handle) => Some(handle.join()),
                Fate::Joined(result) => Some(result),
                Fate::Refused => None,
                Fate::Lost => {
                    lost += 1;
                    let (calls, drops) = (job.record.calls(), job.record.drops());
                    assert!(calls <= 1, "job {id} of a panicked batch ran {calls} times");
                    assert_eq!(
                        drops, 1,
                        "job {id} of a panicked batch dropped {drops} times"
                    );
                    continue;
                }
            };
            let calls = job.record.calls();
            let drops = job.record.drops();
            if job.cancelled {
                assert_eq!(result, Some(Err(JobError::Cancelled)), "job {id}");
                assert!(drops <= 1, "job {id}: closure dropped {drops} times");
                cancelled_closures.push((id, job.record));
            } else {
                assert_eq!(drops, 1, "job {id}: closure dropped {drops} times");
            }
            match result {
                // Refused: returned to us and called by us, once.
                None => assert_eq!(calls, 1, "refused job {id}"),
                Some(Ok(())) => {
                    assert!(!job.panics);
                    assert_eq!(calls, 1, "job {id}");
                }
                Some(Err(JobError::Panicked { message })) => {
                    assert!(job.panics && job.kind == Kind::Plain, "job {id}: {message}");
                    assert!(message.starts_with(PANIC_MESSAGE));
                    assert_eq!(calls, 1, "job {id}");
                }
                Some(Err(JobError::Cancelled)) => {
                    assert_eq!(calls, 0, "cancelled job {id} ran");
                    if !job.cancelled {
                        assert!(stopped, "job {id} cancelled without cancel or shutdown_now");
                        cancelled += 1;
                    }
                }
                Some(Err(e)) => panic!("job {id}: {e:?}"),
            }
        }
        // Each job handed back and dropped is one cancelled handle: ours,
        // a future's, or one lost with a panicking batch.
        assert!(
            cancelled <= handed_back_dropped,
            "{cancelled} > {handed_back_dropped}"
        );
        assert!(
            handed_back_dropped <= cancelled + cancelled_futures + lost,
            "{handed_back_dropped} dropped, {cancelled} + {cancelled_futures} + {lost} cancelled"
        );
        // A worker that ran `shutdown()` from its job is not joined by
        // it (nor, later, by the executor's drop): wait for it to exit.
        step("workers exit");
        let outlived = common::wait_threads_gone("fz-");
        if !outlived.is_empty() {
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| {
                eprintln!(
                    "fuzz: note: workers {outlived:?} outlived their executor's shutdown \
                     (a job called shutdown() through the handle; reported once)"
                )
            });
        }
        for (id, record) in cancelled_closures {
            let drops = record.drops();
            assert_eq!(
                drops, 1,
                "cancelled job {id}: closure dropped {drops} times once no worker was left"
            );
        }
        step("dropped");
    }
}
