//! Awaiting room in a lane: [`Executor::reserve`] and its
//! [`Permit`]. The waiting itself is the lane's (`lane/space.rs`).

use super::Executor;
use crate::error::EnqueueError;
use crate::job::JobHandle;
use crate::job::body::Once;
use crate::job::cell::NewJob;
use crate::lane::{NoSlot, SpaceWaiter};
use crate::pool::Shared;
use crate::priority::Priority;
use crate::sync::Arc;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

impl Executor {
    /// Waits, without blocking a thread, for a free slot in the lane of
    /// `priority`, and returns a [`Permit`] that queues one job in it
    /// without waiting: the async form of [`enqueue`](Self::enqueue)'s
    /// backpressure (as tokio's `mpsc::Sender::reserve`).
    ///
    /// Any runtime can poll the future; it needs none. Tasks waiting on
    /// one lane are served in the order they began to wait, and waiting
    /// on a full lane never delays a task waiting on another. An unbounded
    /// lane is always ready.
    ///
    /// Cancel-safe: dropping the future gives up its place in line (and
    /// gives back a slot it had been granted, to the next in line);
    /// dropping a permit unused gives its slot back.
    /// A slot that frees while futures wait is granted to the first in
    /// line before it is woken: until that future is polled again or
    /// dropped, the slot is kept for it, from other futures and from
    /// `enqueue` calls alike (as a permit tokio's semaphore hands a
    /// waiter). Threads blocked in `enqueue` on the same lane take turns
    /// with the futures for freed slots.
    ///
    /// # Errors
    ///
    /// The future resolves to [`EnqueueError::UnknownPriority`] if no lane
    /// has this priority, and to [`EnqueueError::ShutDown`] if the
    /// executor is shutting down (also while the future waits). There is
    /// no job to hand back yet: the errors carry `()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, EnqueueError, Executor, Priority};
    /// # use std::future::Future;
    /// # use std::task::{Context, Poll, Waker};
    /// # fn block_on<F: Future>(f: F) -> F::Output {
    /// #     let mut f = std::pin::pin!(f);
    /// #     let mut cx = Context::from_waker(Waker::noop());
    /// #     loop {
    /// #         if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
    /// #             return out;
    /// #         }
    /// #         std::thread::yield_now();
    /// #     }
    /// # }
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Bounded(8)).build()?;
    /// let for_task = exec.clone();
    /// // In an async fn or block, on any runtime:
    /// let job = block_on(async move {
    ///     let permit = for_task.reserve(Priority(1)).await?;
    ///     Ok::<_, EnqueueError<()>>(permit.enqueue(|| 6 * 7))
    /// })?;
    /// assert_eq!(job.expect("the executor runs").join()?, 42);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reserve(&self, priority: Priority) -> Reserve {
        Reserve {
            shared: Arc::clone(&self.shared),
            priority,
            waiter: SpaceWaiter::default(),
        }
    }
}

/// The future of [`Executor::reserve`]: a [`Permit`] once the lane
/// has a free slot. It owns what it needs (`'static`, `Send`, `Unpin`), so
/// a `Service` may keep one between calls to `poll_ready` and poll it with
/// [`poll_reserve`](Reserve::poll_reserve).
#[must_use = "futures do nothing unless polled"]
pub struct Reserve {
    shared: Arc<Shared>,
    priority: Priority,
    waiter: SpaceWaiter,
}

impl Reserve {
    /// Polls for the permit: what `.await` does, for code that holds the
    /// future in a struct (a `Service`'s `poll_ready`).
    ///
    /// # Errors
    ///
    /// As [`Executor::reserve`].
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::task::{Context, Poll, Waker};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Bounded(1)).build()?;
    /// let mut cx = Context::from_waker(Waker::noop());
    /// let mut reserve = exec.reserve(Priority(1));
    /// let Poll::Ready(Ok(permit)) = reserve.poll_reserve(&mut cx) else {
    ///     panic!("an empty lane has room");
    /// };
    /// // The lane's one slot is the permit's: another task waits.
    /// let mut second = exec.reserve(Priority(1));
    /// assert!(second.poll_reserve(&mut cx).is_pending());
    /// drop(permit); // gives the slot back
    /// assert!(matches!(second.poll_reserve(&mut cx), Poll::Ready(Ok(_))));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn poll_reserve(&mut self, cx: &mut Context<'_>) -> Poll<Result<Permit, EnqueueError<()>>> {
        let shared = &self.shared;
        let Some(index) = shared.lane_index(self.priority) else {
            return Poll::Ready(Err(EnqueueError::UnknownPriority {
                priority: self.priority,
                known: shared.priorities(),
                job: (),
            }));
        };
        if shared.is_closed() {
            shared.lanes[index].cancel_space(&mut self.waiter);
            return Poll::Ready(Err(self.shut_down()));
        }
        match shared.lanes[index].poll_space(&mut self.waiter, cx, || shared.is_closed()) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => Poll::Ready(Ok(Permit {
                shared: Some(Arc::clone(shared)),
                index,
            })),
            Poll::Ready(Err(NoSlot::Closed | NoSlot::Full)) => Poll::Ready(Err(self.shut_down())),
        }
    }

    fn shut_down(&self) -> EnqueueError<()> {
        EnqueueError::ShutDown {
            priority: self.priority,
            job: (),
        }
    }
}

impl Future for Reserve {
    type Output = Result<Permit, EnqueueError<()>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.poll_reserve(cx)
    }
}

impl Drop for Reserve {
    fn drop(&mut self) {
        if let Some(index) = self.shared.lane_index(self.priority) {
            self.shared.lanes[index].cancel_space(&mut self.waiter);
        }
    }
}

impl fmt::Debug for Reserve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reserve")
            .field("priority", &self.priority)
            .field("waiting", &self.waiter)
            .finish()
    }
}

/// A slot held in a lane, from [`Executor::reserve`]: queues one job
/// there without waiting, or, dropped unused, gives the slot back.
#[must_use = "a permit holds a slot of the lane until it is used or dropped"]
pub struct Permit {
    /// `None` once used.
    shared: Option<Arc<Shared>>,
    index: usize,
}

impl Permit {
    /// The priority of the lane the slot is in.
    ///
    /// # Examples
    ///
    /// See [`Reserve::poll_reserve`].
    pub fn priority(&self) -> Priority {
        let shared = self.shared.as_ref().expect("a permit is used only once");
        shared.lanes[self.index].priority
    }

    /// Queues `job` in the permit's slot, without waiting, and returns a
    /// handle to its result.
    ///
    /// # Errors
    ///
    /// [`EnqueueError::ShutDown`] if the executor began shutting down
    /// since the permit was given, [`EnqueueError::NoThread`] if no worker
    /// is alive and none could start; the job is in the error and the slot
    /// is given back.
    ///
    /// # Examples
    ///
    /// See [`Executor::reserve`].
    pub fn enqueue<F, T>(mut self, job: F) -> Result<JobHandle<T>, EnqueueError<F>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let shared = self.shared.take().expect("a permit is used only once");
        shared.submit_reserved(self.index, job, |job, meta, _| {
            NewJob::new(Once(Some(job)), meta)
        })
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            shared.lanes[self.index].unreserve();
        }
    }
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let priority = self.shared.as_ref().map(|s| s.lanes[self.index].priority);
        f.debug_struct("Permit")
            .field("priority", &priority)
            .finish()
    }
}
