//! Errors of the bridge and the publisher, each naming what to fix.

use lapin::ErrorKind;
use lapin::protocol::{AMQPErrorKind, AMQPHardError, AMQPSoftError};
use priority_executor::actor::SpawnError;
use priority_executor::{BuildError, InvalidSetting, Priority};

/// Why the bridge or the publisher could not start, or a call failed.
///
/// Every message names the setting to look at (the URI, the login, the
/// queue and its argument).
///
/// # Examples
///
/// ```
/// use priority_executor_amqp::Publisher;
///
/// let err = Publisher::connect("htp://localhost").unwrap_err();
/// assert!(err.to_string().starts_with("AMQP URI \"htp://localhost\" is not valid"));
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    /// The URI does not parse.
    #[error(
        "AMQP URI {uri:?} is not valid: {reason} (expected amqp://user:password@host:port/vhost)"
    )]
    Uri {
        /// The URI as given (password hidden).
        uri: String,
        /// What the parser said.
        reason: String,
    },
    /// No broker answered at the URI's address.
    #[error("cannot reach the broker at {uri}: {reason}")]
    Connect {
        /// The URI (password hidden).
        uri: String,
        /// The I/O error.
        reason: String,
    },
    /// The broker refused the user name or password (or the vhost).
    #[error(
        "the broker at {uri} refused the login: {reason} (check the user, password and vhost in the URI)"
    )]
    Login {
        /// The URI (password hidden).
        uri: String,
        /// The broker's words.
        reason: String,
    },
    /// The queue exists with other arguments than the configured ones.
    #[error("queue {queue:?} exists with a different {setting}: {reason}")]
    QueueMismatch {
        /// The queue.
        queue: String,
        /// The argument that differs, e.g. `x-max-priority`.
        setting: String,
        /// The broker's words.
        reason: String,
    },
    /// A configured setting cannot work with this executor, in the core's
    /// one form for a bad setting.
    #[error("queue {queue:?}: {setting}")]
    Invalid {
        /// The queue.
        queue: String,
        /// The setting (`prefetch`, say), its value and what is allowed.
        setting: InvalidSetting,
    },
    /// A pipeline's stage could not be spawned.
    #[error("the stage cannot start: {0}")]
    Stage(#[from] SpawnError),
    /// A pipeline's inbox executor could not be built.
    #[error("the inbox executor cannot start: {0}")]
    Executor(#[from] BuildError),
    /// The lane a configured priority maps to does not exist.
    #[error(
        "queue {queue:?}: the priority table maps to lane {lane}, which executor {executor:?} does not have (lanes: {lanes})"
    )]
    UnknownLane {
        /// The queue.
        queue: String,
        /// The missing lane.
        lane: Priority,
        /// The executor's name.
        executor: String,
        /// Its lanes.
        lanes: String,
    },
    /// Any other broker or connection error during an operation.
    #[error("{operation}: {reason}")]
    Broker {
        /// What was being done, naming the queue or exchange.
        operation: String,
        /// The client's or broker's words.
        reason: String,
    },
    /// The bridge's own runtime could not be started.
    #[error("cannot start the bridge's runtime thread: {0}")]
    Runtime(String),
}

/// The URI with any password replaced by `***`.
pub(crate) fn redact(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else {
        return uri.to_owned();
    };
    let Some((userinfo, host)) = rest.rsplit_once('@') else {
        return uri.to_owned();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => uri.to_owned(),
    }
}

/// Sorts a connection error into the kind a user can act on.
pub(crate) fn connect_error(uri: &str, error: lapin::Error) -> BridgeError {
    let uri = redact(uri);
    let reason = error.to_string();
    match error.kind() {
        ErrorKind::IOError(_) => BridgeError::Connect { uri, reason },
        ErrorKind::ProtocolError(e)
            if matches!(
                e.kind(),
                AMQPErrorKind::Soft(AMQPSoftError::ACCESSREFUSED)
                    | AMQPErrorKind::Hard(AMQPHardError::NOTALLOWED)
            ) =>
        {
            BridgeError::Login { uri, reason }
        }
        _ if reason.contains("ACCESS_REFUSED")
            || reason.contains("ACCESS-REFUSED")
            || reason.to_lowercase().contains("auth") =>
        {
            BridgeError::Login { uri, reason }
        }
        _ => BridgeError::Connect { uri, reason },
    }
}

/// Sorts an error of declaring `queue`.
pub(crate) fn declare_error(queue: &str, error: lapin::Error) -> BridgeError {
    let reason = error.to_string();
    if let ErrorKind::ProtocolError(e) = error.kind()
        && matches!(
            e.kind(),
            AMQPErrorKind::Soft(AMQPSoftError::PRECONDITIONFAILED)
        )
    {
        // "inequivalent arg 'x-max-priority' for queue 'q' in vhost '/': ..."
        let setting = reason
            .split("inequivalent arg '")
            .nth(1)
            .and_then(|rest| rest.split('\'').next())
            .unwrap_or("argument")
            .to_owned();
        return BridgeError::QueueMismatch {
            queue: queue.to_owned(),
            setting,
            reason,
        };
    }
    BridgeError::Broker {
        operation: format!("declaring queue {queue:?}"),
        reason,
    }
}

/// Any other failed operation.
pub(crate) fn broker_error(operation: impl Into<String>, error: lapin::Error) -> BridgeError {
    BridgeError::Broker {
        operation: operation.into(),
        reason: error.to_string(),
    }
}
