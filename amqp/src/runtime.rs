//! The bridge's own small async runtime: one thread, so that users need
//! none and the executor's workers never run async code.

use crate::error::BridgeError;
use std::future::Future;
use tokio::runtime::{Builder, Handle, Runtime};

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
