//! The time limits of broker operations: a client whose I/O has stopped
//! may never resolve an operation.

use lapin::ConnectionStatus;
use std::time::Duration;

/// The longest wait for the broker to answer one operation; past it the
/// connection counts as lost (a client whose I/O has stopped may never
/// resolve it).
pub(super) const OPERATION_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest wait to connect, declare and start consuming.
pub(super) const OPEN_TIMEOUT: Duration = Duration::from_secs(30);

/// `fut`, or an error naming `what` once `limit` has passed.
pub(super) async fn within<T, E: ToString>(
    limit: Duration,
    what: &str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String> {
    match tokio::time::timeout(limit, fut).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err(format!(
            "{what}: no answer from the broker within {limit:?}"
        )),
    }
}

/// `fut` under [`within`], given up as soon as the client reports the
/// connection gone (checked every 100 ms).
pub(super) async fn guarded<T, E: ToString>(
    status: &ConnectionStatus,
    what: &str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String> {
    let lost = async {
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if !status.connected() {
                return format!("{what}: the connection is lost");
            }
        }
    };
    tokio::select! {
        result = within(OPERATION_TIMEOUT, what, fut) => result,
        error = lost => Err(error),
    }
}
