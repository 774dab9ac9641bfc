//! The publisher's connection: a confirm channel on a connection of its
//! own, and publishing one message on it up to the broker's confirm.

use crate::error::{BridgeError, broker_error};
use crate::liveness;
use crate::outgoing::Outgoing;
use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
use lapin::types::ShortString;
use lapin::uri::AMQPUri;
use lapin::{Channel, Connection, ConnectionProperties, PublisherConfirm};

/// An open connection and its confirm channel.
pub(super) struct Link {
    pub(super) connection: Connection,
    pub(super) channel: Channel,
}

impl Link {
    /// Opens a connection to `target` (`uri` with its heartbeat and
    /// connection timeout) and a confirm channel on it.
    pub(super) async fn open(uri: &str, target: AMQPUri) -> Result<Link, BridgeError> {
        let properties = ConnectionProperties::default()
            .with_connection_name("priority-executor-publisher".into());
        let connection = liveness::connect(uri, target, properties).await?;
        let channel = connection
            .create_channel()
            .await
            .map_err(|e| broker_error("publisher: opening a channel", e))?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| broker_error("publisher: turning publisher confirms on", e))?;
        Ok(Link {
            connection,
            channel,
        })
    }

    /// Whether the channel can still be used.
    pub(super) fn usable(&self) -> bool {
        self.channel.status().connected()
    }

    /// Closes the channel and the connection (errors ignored: the broker
    /// lets go of a connection that went away on its own).
    pub(super) async fn close(self) {
        let _ = self.channel.close(200, "closed".into()).await;
        let _ = self.connection.close(200, "closed".into()).await;
    }
}

/// Publishes `message` (mandatory: a message no queue takes comes back).
pub(super) async fn send(
    channel: &Channel,
    message: &Outgoing,
) -> Result<PublisherConfirm, BridgeError> {
    channel
        .basic_publish(
            ShortString::from(message.exchange.as_str()),
            ShortString::from(message.routing_key.as_str()),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            &message.body,
            message.properties(),
        )
        .await
        .map_err(|e| broker_error(format!("publishing to {}", message.target()), e))
}

/// Waits for the broker's confirm of `message`: an error if it was nacked
/// or came back unroutable.
pub(super) async fn settle(
    confirm: PublisherConfirm,
    message: &Outgoing,
) -> Result<(), BridgeError> {
    let confirmation = confirm
        .await
        .map_err(|e| broker_error(format!("publishing to {}", message.target()), e))?;
    if confirmation.is_nack() {
        return Err(BridgeError::Broker {
            operation: format!("publishing to {}", message.target()),
            reason: "the broker nacked the message".to_owned(),
        });
    }
    if let Some(returned) = confirmation.take_message() {
        return Err(BridgeError::Broker {
            operation: format!("publishing to {}", message.target()),
            reason: format!(
                "no queue took it ({} {}): declare the queue first",
                returned.reply_code, returned.reply_text
            ),
        });
    }
    Ok(())
}
