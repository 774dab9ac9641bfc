//! The bridge's own small async runtime: one thread, so that users need
//! none and the executor's workers never run async code.

use crate::error::BridgeError;
use std::future::Future;
use tokio::runtime::{Builder, Handle, Runtime, RuntimeFlavor};

/// A runtime with a single worker thread named `name`.
pub(crate) fn new_runtime(name: &str) -> Result<Runtime, BridgeError> {
    Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|e| BridgeError::Runtime(e.to_string()))
}

/// Runs `fut` on the runtime and waits for it on this thread. Unlike
/// `block_on`, this does not panic when called from inside another async
/// runtime (it blocks that thread, as any blocking call would).
pub(crate) fn wait_on<T, F>(handle: &Handle, fut: F) -> Result<T, BridgeError>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    handle.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv()
        .map_err(|_| BridgeError::Runtime("the bridge's runtime stopped".to_owned()))
}

/// Refuses a blocking call of the bridge (`start`, `stop`) that would
/// wait for ever: one made inside a current-thread runtime while the
/// bridge's tasks run on the application's current-thread runtime
/// (`borrowed_current`), which may be that very runtime, whose only
/// thread the wait would hold. (Which runtime is which cannot be told
/// apart; a multi-thread one runs the tasks on threads of its own.)
///
/// # Panics
///
/// In that case, naming the call and its async form.
pub(crate) fn refuse_endless_wait(borrowed_current: bool, call: &str) {
    let current = Handle::try_current().map(|handle| handle.runtime_flavor());
    if borrowed_current && current.is_ok_and(|flavor| flavor == RuntimeFlavor::CurrentThread) {
        panic!(
            "Bridge::{call} blocks its thread until the bridge's tasks are done, and they \
             run on the application's current-thread runtime: inside a current-thread \
             runtime that wait would never end; use {call}_async there"
        );
    }
}

/// Waits for `fut` on this thread. On a worker of a multi-thread runtime,
/// that runtime first hands this thread's other tasks to another thread
/// (`block_in_place`), so the wait holds none of them up.
pub(crate) fn block<F: Future>(fut: F) -> F::Output {
    match Handle::try_current().map(|handle| handle.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => {
            tokio::task::block_in_place(|| futures_lite::future::block_on(fut))
        }
        _ => futures_lite::future::block_on(fut),
    }
}

/// Is `runtime`, a runtime the application lends, a current-thread one?
pub(crate) fn is_current_thread(runtime: &Handle) -> bool {
    runtime.runtime_flavor() == RuntimeFlavor::CurrentThread
}
