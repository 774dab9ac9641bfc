//! [`Broker::join_async`]: the blocking `join` as a future any runtime
//! can poll (the crate has none), on the crate's shared end helper.

use super::consumer::thread_for;
use super::handle::Broker;
use crate::actor::actor::Actor;
use crate::actor::shared::Exit;
use crate::sync::ending::{Begun, Ending};
use std::future::Future;

impl<A: Actor> Broker<A> {
    /// [`join`](Broker::join) as a future: its first poll starts the
    /// blocking `join` on a thread of its own named `{broker}-join`
    /// (with manual cycles that thread runs them), which wakes the task
    /// awaiting the future once the broker has ended, and the future
    /// resolves to the [`Exit`] `join` returns. Any runtime can poll it,
    /// and it needs none; it is `'static`, `Send` and `Unpin`. If the
    /// system refuses the thread, that first poll runs the join itself. A
    /// panic of the join is raised again by the poll that finds it.
    ///
    /// Cancel-safe: dropped once polled, the join goes on running on its
    /// thread to the broker's end, as `join` would have; only the `Exit`
    /// is lost. Dropped before its first poll, the future drops the
    /// broker on a thread of its own (which drains it, as dropping the
    /// broker does), never blocking the thread dropping the future.
    ///
    /// # Panics
    ///
    /// On its first poll by one of the broker's consumers or on its cycle
    /// thread, as [`join`](Broker::join) does there (the future would
    /// wait for itself).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Broker, Outbox, Reason, Strategy};
    /// # use std::future::Future;
    /// # use std::sync::Arc;
    /// # use std::task::{Context, Poll, Wake, Waker};
    /// # /// Polls a future on this thread, parked between polls.
    /// # fn block_on<F: Future>(f: F) -> F::Output {
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl Wake for Unpark {
    /// #         fn wake(self: Arc<Self>) {
    /// #             self.0.unpark();
    /// #         }
    /// #     }
    /// #     let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    /// #     let mut cx = Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop {
    /// #         if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
    /// #             return out;
    /// #         }
    /// #         std::thread::park();
    /// #     }
    /// # }
    ///
    /// struct Count;
    /// impl Actor for Count {
    ///     type In = u32;
    ///     type Out = ();
    ///     fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let broker = Broker::builder("async").manual_cycles().end_after(2).spawn()?;
    /// broker.register(Count, Strategy::always()).unwrap();
    /// for n in 0..25 {
    ///     broker.addr().send(n).unwrap();
    /// }
    /// // In an async fn or block, on any runtime:
    /// let exit = block_on(async move { broker.join_async().await });
    /// assert_eq!(exit.reason, Reason::Idle);
    /// assert_eq!(exit.metrics.performed, 25);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn join_async(self) -> impl Future<Output = Exit> + Send + Unpin + 'static {
        let thread = thread_for::<A::In>(format!("{}-join", self.name()));
        Ending::owning(thread, move || {
            self.check_not_own();
            Begun::Wait(Box::new(move || self.join()))
        })
    }
}
