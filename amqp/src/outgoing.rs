//! A message to publish, with its broker priority.

use crate::table::PriorityTable;
use lapin::BasicProperties;
use lapin::types::{AMQPValue, FieldTable, LongString};
use priority_executor::Priority;
use std::fmt;

/// A message to publish.
///
/// # Examples
///
/// ```
/// use priority_executor::Priority;
/// use priority_executor_amqp::{Outgoing, PriorityTable};
///
/// let table = PriorityTable::new().map(0..=4, Priority(1)).map(5..=9, Priority(10));
/// let msg = Outgoing::to_queue("visa", "application 42")
///     .lane(&table, Priority(10)) // broker priority 9, the highest that maps to lane 10
///     .message_id("42")
///     .header("PRIORITYID", "ABC");
/// assert_eq!(msg.broker_priority(), Some(9));
/// ```
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub(crate) exchange: String,
    pub(crate) routing_key: String,
    pub(crate) body: Vec<u8>,
    priority: Option<u8>,
    message_id: Option<String>,
    headers: FieldTable,
}

impl Outgoing {
    /// To the queue `queue`, through the default exchange.
    pub fn to_queue(queue: impl Into<String>, body: impl Into<Vec<u8>>) -> Outgoing {
        Outgoing::to_exchange("", queue, body)
    }

    /// To `exchange` with `routing_key`.
    pub fn to_exchange(
        exchange: impl Into<String>,
        routing_key: impl Into<String>,
        body: impl Into<Vec<u8>>,
    ) -> Outgoing {
        Outgoing {
            exchange: exchange.into(),
            routing_key: routing_key.into(),
            body: body.into(),
            priority: None,
            message_id: None,
            headers: FieldTable::default(),
        }
    }

    /// The broker priority (0-255; the queue's `x-max-priority` caps it).
    pub fn priority(mut self, priority: u8) -> Outgoing {
        self.priority = Some(priority);
        self
    }

    /// The broker priority that lands the message in `lane` through
    /// `table` (the highest one mapped to it); unchanged if none is.
    pub fn lane(mut self, table: &PriorityTable, lane: Priority) -> Outgoing {
        if let Some(p) = table.broker_priority(lane) {
            self.priority = Some(p);
        }
        self
    }

    /// The broker priority that lands `value` in the lane of its own
    /// priority ([`Prioritized`](priority_executor::actor::Prioritized))
    /// through `table`; unchanged if it has none (the default) or the
    /// table maps no broker priority to it.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Priority;
    /// use priority_executor::actor::Prioritized;
    /// use priority_executor_amqp::{Outgoing, PriorityTable};
    ///
    /// struct Visa {
    ///     diplomatic: bool,
    /// }
    /// impl Prioritized for Visa {
    ///     fn priority(&self) -> Option<Priority> {
    ///         self.diplomatic.then_some(Priority(10))
    ///     }
    /// }
    /// let table = PriorityTable::new().map(0..=4, Priority(1)).map(5..=9, Priority(10));
    /// let urgent = Outgoing::to_queue("visa", "1").prioritized(&table, &Visa { diplomatic: true });
    /// assert_eq!(urgent.broker_priority(), Some(9));
    /// let plain = Outgoing::to_queue("visa", "2").prioritized(&table, &Visa { diplomatic: false });
    /// assert_eq!(plain.broker_priority(), None); // the queue's lowest, 0
    /// ```
    pub fn prioritized(
        self,
        table: &PriorityTable,
        value: &impl priority_executor::actor::Prioritized,
    ) -> Outgoing {
        match value.priority() {
            Some(lane) => self.lane(table, lane),
            None => self,
        }
    }

    /// A [`Message`](priority_executor::Message) of the ESB layer to
    /// `queue`: its body, its properties as headers, and the broker priority
    /// that lands it in the lane the `executor`'s rules of `executors` give
    /// it (`PRIORITYID=ABC` -> 10), through `table`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message, Priority};
    /// use priority_executor_amqp::{Outgoing, PriorityTable};
    ///
    /// let executors = Registry::from_toml_str(r#"
    /// [executors.visa]
    /// rules = "visa"
    /// lanes = [{ priority = 10 }, { priority = 1 }]
    /// [rules.visa]
    /// when = [{ priority = 10, header = "PRIORITYID", equals = "ABC" }]
    /// "#)?;
    /// let table = PriorityTable::new().map(0..=4, Priority(1)).map(5..=9, Priority(10));
    /// let msg = Message::new().with_property("PRIORITYID", "ABC").with_body("application 7");
    /// let out = Outgoing::from_message("visa", &msg, &executors, "visa", &table);
    /// assert_eq!(out.broker_priority(), Some(9));
    /// let plain = Outgoing::from_message("visa", &Message::new(), &executors, "visa", &table);
    /// assert_eq!(plain.broker_priority(), Some(4)); // the lowest lane, 1
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    #[cfg(feature = "executors-toml")]
    pub fn from_message(
        queue: impl Into<String>,
        message: &priority_executor::Message,
        executors: &priority_executor::Registry,
        executor: &str,
        table: &PriorityTable,
    ) -> Outgoing {
        let mut out = Outgoing::to_queue(queue, message.body().to_vec());
        for (name, value) in message.properties() {
            out = out.header(name, value);
        }
        match executors.priority_for(executor, message) {
            Some(lane) => out.lane(table, lane),
            None => out,
        }
    }

    /// The broker priority set, if any.
    pub fn broker_priority(&self) -> Option<u8> {
        self.priority
    }

    /// The `message-id` property.
    pub fn message_id(mut self, id: impl Into<String>) -> Outgoing {
        self.message_id = Some(id.into());
        self
    }

    /// A header, sent as text.
    pub fn header(mut self, name: &str, value: impl fmt::Display) -> Outgoing {
        self.headers.insert(
            name.into(),
            AMQPValue::LongString(LongString::from(value.to_string().into_bytes())),
        );
        self
    }

    /// The headers set so far.
    #[cfg(test)]
    pub(crate) fn headers(&self) -> &FieldTable {
        &self.headers
    }

    pub(crate) fn properties(&self) -> BasicProperties {
        let mut p = BasicProperties::default().with_delivery_mode(2); // persistent
        if let Some(priority) = self.priority {
            p = p.with_priority(priority);
        }
        if let Some(id) = &self.message_id {
            p = p.with_message_id(id.as_str().into());
        }
        if !self.headers.inner().is_empty() {
            p = p.with_headers(self.headers.clone());
        }
        p
    }

    /// Where it goes, as an error names it.
    pub(crate) fn target(&self) -> String {
        if self.exchange.is_empty() {
            format!("queue {:?}", self.routing_key)
        } else {
            format!(
                "exchange {:?} (routing key {:?})",
                self.exchange, self.routing_key
            )
        }
    }
}
