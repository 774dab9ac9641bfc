//! The message a sequence runs on: named string properties and a body.
//!
//! Property names compare ignoring ASCII case, as HTTP and JMS header names
//! do, so a rule on `PRIORITYID` matches a message carrying `PriorityId`.
//! Values compare exactly (a rule may opt into ignoring case).

use std::fmt;

/// A message: string properties (transport headers and the like) and a body
/// of bytes.
///
/// Property names are looked up ignoring ASCII case; a property keeps the
/// spelling it was first set with, and properties iterate in the order they
/// were first set.
///
/// # Examples
///
/// ```
/// use priority_executor::Message;
///
/// let mut message = Message::new()
///     .with_property("PRIORITYID", "ABC")
///     .with_body("<visa/>");
/// assert_eq!(message.property("priorityId"), Some("ABC"));
/// assert_eq!(message.body(), b"<visa/>");
///
/// message.set_property("Channel", "jms");
/// assert_eq!(message.property("CHANNEL"), Some("jms"));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Message {
    // A handful of properties per message: a vector searched linearly beats
    // a map and keeps insertion order.
    properties: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Message {
    /// An empty message: no properties, an empty body.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Message;
    ///
    /// let message = Message::new();
    /// assert!(message.body().is_empty());
    /// assert_eq!(message.properties().count(), 0);
    /// assert_eq!(message, Message::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The message with the property `name` set to `value`: for building a
    /// message in one expression. Setting the same name twice (ignoring
    /// ASCII case) keeps the last value, as
    /// [`set_property`](Message::set_property) does.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Message;
    ///
    /// let message = Message::new().with_property("a", "1");
    /// assert_eq!(message.property("A"), Some("1"));
    ///
    /// let message = Message::new().with_property("a", "1").with_property("A", "2");
    /// assert_eq!(message.property("a"), Some("2"));
    ///
    /// let message = Message::new()
    ///     .with_property("PRIORITYID", "ABC")
    ///     .with_property("applicant", "embassy")
    ///     .with_body(b"<visa/>".to_vec());
    /// assert_eq!(message.properties().len(), 2);
    /// ```
    #[must_use]
    pub fn with_property(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.set_property(name, value);
        self
    }

    /// The message with this body: for building a message in one
    /// expression.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Message;
    ///
    /// let message = Message::new().with_body("hello");
    /// assert_eq!(message.body(), b"hello");
    /// ```
    #[must_use]
    pub fn with_body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// The value of the property `name`, ignoring ASCII case in the name.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Message;
    ///
    /// let message = Message::new().with_property("PRIORITYID", "ABC");
    /// assert_eq!(message.property("priorityid"), Some("ABC"));
    /// assert_eq!(message.property("missing"), None);
    /// ```
    pub fn property(&self, name: &str) -> Option<&str> {
        self.position(name).map(|i| self.properties[i].1.as_str())
    }

    /// Sets the property `name` to `value` and returns the value it had.
    ///
    /// An existing property (matched ignoring ASCII case) keeps its place
    /// and its spelling; only its value changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Message;
    ///
    /// let mut message = Message::new();
    /// assert_eq!(message.set_property("Tier", "gold"), None);
    /// assert_eq!(message.set_property("TIER", "silver"), Some("gold".to_string()));
    /// assert_eq!(message.properties().collect::<Vec<_>>(), [("Tier", "silver")]);
    /// ```
    pub fn set_property(
        &mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Option<String> {
        let name = name.into();
        let value = value.into();
        match self.position(&name) {
            Some(i) => Some(std::mem::replace(&mut self.properties[i].1, value)),
            None => {
                self.properties.push((name, value));
                None
            }
        }
    }

    /// Removes the property `name` (ignoring ASCII case) and returns its
    /// value.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Message;
    ///
    /// let mut message = Message::new().with_property("a", "1");
    /// assert_eq!(message.remove_property("A"), Some("1".to_string()));
    /// assert_eq!(message.property("a"), None);
    /// ```
    pub fn remove_property(&mut self, name: &str) -> Option<String> {
        self.position(name).map(|i| self.properties.remove(i).1)
    }

    /// The properties as `(name, value)` pairs, in the order they were first
    /// set.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Message;
    ///
    /// let message = Message::new().with_property("b", "2").with_property("a", "1");
    /// let names: Vec<&str> = message.properties().map(|(name, _)| name).collect();
    /// assert_eq!(names, ["b", "a"]);
    /// ```
    pub fn properties(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.properties
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
    }

    /// The body.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Message;
    ///
    /// let message = Message::new().with_body(vec![1, 2, 3]);
    /// assert_eq!(message.body(), &[1, 2, 3]);
    /// ```
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// Replaces the body and returns the old one.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Message;
    ///
    /// let mut message = Message::new().with_body("old");
    /// assert_eq!(message.set_body("new"), b"old");
    /// assert_eq!(message.body(), b"new");
    /// ```
    pub fn set_body(&mut self, body: impl Into<Vec<u8>>) -> Vec<u8> {
        std::mem::replace(&mut self.body, body.into())
    }

    /// Takes the body out of the message.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Message;
    ///
    /// let message = Message::new().with_body("payload");
    /// assert_eq!(message.into_body(), b"payload");
    /// ```
    pub fn into_body(self) -> Vec<u8> {
        self.body
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.properties
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
    }
}

impl fmt::Debug for Message {
    // Bodies can be large or binary: show their length, not their bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Properties<'a>(&'a [(String, String)]);
        impl fmt::Debug for Properties<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_map()
                    .entries(self.0.iter().map(|(k, v)| (k, v)))
                    .finish()
            }
        }
        f.debug_struct("Message")
            .field("properties", &Properties(&self.properties))
            .field("body_len", &self.body.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_ignores_ascii_case_only_in_names() {
        let message = Message::new().with_property("PriorityId", "ABC");
        assert_eq!(message.property("PRIORITYID"), Some("ABC"));
        assert_eq!(message.property("priorityid"), Some("ABC"));
        assert_ne!(message.property("priorityid"), Some("abc"));
    }

    #[test]
    fn set_keeps_first_spelling_and_order() {
        let mut message = Message::new()
            .with_property("A", "1")
            .with_property("b", "2");
        message.set_property("a", "3");
        let all: Vec<_> = message.properties().collect();
        assert_eq!(all, [("A", "3"), ("b", "2")]);
    }

    #[test]
    fn debug_shows_body_length_not_bytes() {
        let message = Message::new()
            .with_property("k", "v")
            .with_body(vec![0u8; 4096]);
        let debug = format!("{message:?}");
        assert!(debug.contains("body_len: 4096"), "{debug}");
        assert!(debug.contains("\"k\": \"v\""), "{debug}");
    }
}
