//! How a connection finds out that the broker stopped answering: the
//! heartbeat and the connection timeout, one setting for the bridge and
//! the publisher.

use crate::error::{BridgeError, connect_error, redact};
use lapin::uri::AMQPUri;
use lapin::{Connection, ConnectionProperties};
use std::time::Duration;

/// The heartbeat asked of the broker unless the URI or a builder sets
/// one: 10 s. A connection that has heard nothing from the broker for two
/// heartbeats is closed as lost, so a broker that stops answering without
/// closing the connection (a partition, a stalled proxy) is found out
/// within 20 s.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(10);

/// The time allowed to open a connection (the TCP connect and the AMQP
/// handshake) unless the URI or a builder sets one: 10 s. A peer that
/// accepts the connection and then says nothing (a stalled proxy) is
/// given up on after it.
pub const DEFAULT_CONNECTION_TIMEOUT: Duration = Duration::from_secs(10);

/// The heartbeat and connection timeout of a connection: each as set on a
/// builder, else as the URI sets it (`?heartbeat=S&connection_timeout=MS`),
/// else the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Liveness {
    heartbeat: Option<Duration>,
    connection_timeout: Option<Duration>,
}

impl Liveness {
    pub(crate) fn heartbeat(mut self, every: Duration) -> Self {
        self.heartbeat = Some(every);
        self
    }

    pub(crate) fn connection_timeout(mut self, limit: Duration) -> Self {
        self.connection_timeout = Some(limit);
        self
    }

    /// `uri` parsed, with the heartbeat and connection timeout in force.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Uri`] if `uri` does not parse.
    pub(crate) fn uri(&self, uri: &str) -> Result<AMQPUri, BridgeError> {
        let mut parsed = uri.parse::<AMQPUri>().map_err(|reason| BridgeError::Uri {
            uri: redact(uri),
            reason,
        })?;
        let query = &mut parsed.query;
        match self.heartbeat {
            Some(every) => query.heartbeat = Some(heartbeat_secs(every)),
            None => {
                query
                    .heartbeat
                    .get_or_insert(heartbeat_secs(DEFAULT_HEARTBEAT));
            }
        }
        match self.connection_timeout {
            Some(limit) => query.connection_timeout = Some(timeout_millis(limit)),
            None => {
                query
                    .connection_timeout
                    .get_or_insert(timeout_millis(DEFAULT_CONNECTION_TIMEOUT));
            }
        }
        Ok(parsed)
    }
}

/// Checks that a URI parses, before anything connects.
pub(crate) fn check_uri(uri: &str) -> Result<(), BridgeError> {
    parse_uri(uri).map(|_| ())
}

/// The URI, with the default heartbeat and connection timeout unless it
/// sets them (`?heartbeat=S&connection_timeout=MS`, see
/// [`DEFAULT_HEARTBEAT`](crate::DEFAULT_HEARTBEAT)): the heartbeat is what
/// finds a connection that died without a word.
pub(crate) fn parse_uri(uri: &str) -> Result<lapin::uri::AMQPUri, BridgeError> {
    Liveness::default().uri(uri)
}

/// Opens a connection to `target` (`uri` as made by [`Liveness::uri`];
/// errors name `uri`, without its password) within its connection
/// timeout: the client applies that one to the TCP connect at most, not
/// to a handshake that a stalled peer never answers.
pub(crate) async fn connect(
    uri: &str,
    target: AMQPUri,
    properties: ConnectionProperties,
) -> Result<Connection, BridgeError> {
    let limit = open_timeout(&target);
    match tokio::time::timeout(limit, Connection::connect_uri(target, properties)).await {
        Ok(connection) => connection.map_err(|e| connect_error(uri, e)),
        Err(_) => Err(BridgeError::Connect {
            uri: redact(uri),
            reason: format!("no answer within the connection timeout ({limit:?})"),
        }),
    }
}

/// The connection timeout in force for a URI made by [`Liveness::uri`].
fn open_timeout(uri: &AMQPUri) -> Duration {
    uri.query
        .connection_timeout
        .map_or(DEFAULT_CONNECTION_TIMEOUT, Duration::from_millis)
}

/// A heartbeat in the protocol's whole seconds: rounded up, from 1 (0
/// would turn the client's own off) to `u16::MAX` (about 18 hours).
fn heartbeat_secs(every: Duration) -> u16 {
    let secs = every
        .as_secs()
        .saturating_add(u64::from(every.subsec_nanos() > 0));
    u16::try_from(secs).unwrap_or(u16::MAX).max(1)
}

/// A timeout in whole milliseconds: rounded up, at least 1 (a zero
/// timeout would fail every connect), at most `u64::MAX`.
fn timeout_millis(limit: Duration) -> u64 {
    let millis = limit
        .as_nanos()
        .div_ceil(1_000_000)
        .clamp(1, u128::from(u64::MAX));
    u64::try_from(millis).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const URI: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";

    #[test]
    fn the_builder_wins_over_the_uri_which_wins_over_the_default() {
        let defaults = Liveness::default().uri(URI).expect("parses");
        assert_eq!(defaults.query.heartbeat, Some(10));
        assert_eq!(defaults.query.connection_timeout, Some(10_000));
        let from_uri = Liveness::default()
            .uri(&format!("{URI}?heartbeat=3&connection_timeout=500"))
            .expect("parses");
        assert_eq!(from_uri.query.heartbeat, Some(3));
        assert_eq!(open_timeout(&from_uri), Duration::from_millis(500));
        let built = Liveness::default()
            .heartbeat(Duration::from_secs(2))
            .connection_timeout(Duration::from_millis(1500))
            .uri(&format!("{URI}?heartbeat=3&connection_timeout=500"))
            .expect("parses");
        assert_eq!(built.query.heartbeat, Some(2));
        assert_eq!(open_timeout(&built), Duration::from_millis(1500));
    }

    #[test]
    fn extreme_durations_saturate_instead_of_wrapping() {
        assert_eq!(heartbeat_secs(Duration::MAX), u16::MAX);
        assert_eq!(heartbeat_secs(Duration::from_secs(70_000)), u16::MAX);
        assert_eq!(heartbeat_secs(Duration::ZERO), 1);
        assert_eq!(heartbeat_secs(Duration::from_millis(1500)), 2);
        assert_eq!(timeout_millis(Duration::MAX), u64::MAX);
        assert_eq!(timeout_millis(Duration::ZERO), 1);
        assert_eq!(timeout_millis(Duration::from_micros(1500)), 2);
    }
}
