//! Typed reading of the parsed TOML document, every value with the byte
//! span of its text, every table checked against the keys it may hold.
//!
//! The file is read from `toml_edit`'s parsed document rather than through
//! serde: the document knows where each key and value is (dotted keys and
//! inline tables included), so a type error, an unknown key or a missing
//! key is found, worded and placed here, and no meaning is read out of a
//! deserializer's error text.

use crate::esb::config_error::Issue;
use std::ops::Range;
use toml_edit::{Item, TableLike, Value};

/// "a whole number >= 0": what a count of threads may be.
pub(crate) const WHOLE: &str = "a whole number >= 0";
/// "a whole number >= 1": what `max_threads` may be.
pub(crate) const POSITIVE: &str = "a whole number >= 1";
/// What a priority may be.
pub(crate) const U32: &str = "a whole number from 0 to 4294967295";
/// What a lane's weight may be: at least 1, and no more than the sum of
/// an executor's lane weights may reach.
pub(crate) const WEIGHT: &str = "a whole number from 1 to 65536";
/// What `keep_alive` may be.
pub(crate) const KEEP_ALIVE: &str = "a duration such as \"5s\", \"250ms\" or \"1m 30s\"";
/// What a lane's `promote_after` may be.
pub(crate) const PROMOTE_AFTER: &str = "a duration longer than zero, such as \"2s\" or \"500ms\"";
const _: () = assert!(crate::lane::picker::MAX_CYCLE == 65_536);
/// What a lane's `max_running` may be.
pub(crate) const MAX_RUNNING: &str =
    "a number of threads >= 1 or a percentage of max_threads from 1% to 100%, such as \"20%\"";

/// A value read from the file, with the span of its text.
#[derive(Clone, Debug)]
pub(crate) struct Spanned<T> {
    value: T,
    span: Range<usize>,
}

impl<T> Spanned<T> {
    pub(crate) fn new(value: T, span: Range<usize>) -> Self {
        Spanned { value, span }
    }

    pub(crate) fn get_ref(&self) -> &T {
        &self.value
    }

    pub(crate) fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    pub(crate) fn into_inner(self) -> T {
        self.value
    }
}

/// One value of the document: a table (under a `[header]`, dotted or
/// inline), an array of tables, or any other value.
#[derive(Clone, Copy)]
enum Kind<'a> {
    Table(&'a dyn TableLike),
    Tables(&'a toml_edit::ArrayOfTables),
    Value(&'a Value),
}

/// A value of the document and where it is. A table declared only through
/// dotted keys (`a.b = 1`) has no text of its own: it is placed at its key.
#[derive(Clone)]
pub(crate) struct Node<'a> {
    kind: Kind<'a>,
    span: Range<usize>,
}

impl<'a> Node<'a> {
    /// The document's root table.
    pub(crate) fn root(table: &'a toml_edit::Table) -> Self {
        Node {
            kind: Kind::Table(table),
            span: 0..0,
        }
    }

    /// `item`, placed at its own span or else at `fallback` (its key).
    fn of_item(item: &'a Item, fallback: Range<usize>) -> Option<Self> {
        let kind = match item {
            Item::None => return None,
            Item::Value(value) => Kind::Value(value),
            Item::Table(table) => Kind::Table(table),
            Item::ArrayOfTables(tables) => Kind::Tables(tables),
        };
        Some(Node {
            kind,
            span: item.span().unwrap_or(fallback),
        })
    }

    fn of_value(value: &'a Value, fallback: Range<usize>) -> Self {
        Node {
            kind: Kind::Value(value),
            span: value.span().unwrap_or(fallback),
        }
    }

    pub(crate) fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    /// What the value is, as a reader of the file would name it.
    fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::Table(_) => "a table",
            Kind::Tables(_) => "an array",
            Kind::Value(value) => match value {
                Value::String(_) => "a string",
                Value::Integer(_) => "an integer",
                Value::Float(_) => "a float",
                Value::Boolean(_) => "a boolean",
                Value::Datetime(_) => "a date-time",
                Value::Array(_) => "an array",
                Value::InlineTable(_) => "a table",
            },
        }
    }

    /// A value of another type than `expected`.
    pub(crate) fn wrong_type(&self, expected: &str) -> Issue {
        Issue::wrong_type(
            self.span(),
            format!(
                "has the wrong type: expected {expected}, found {}",
                self.type_name()
            ),
        )
    }

    /// A value of the right type that is not one of `expected`.
    pub(crate) fn not_allowed(&self, expected: &str) -> Issue {
        Issue::not_allowed(self.span(), format!("is not allowed (expected {expected})"))
    }

    /// The integer, if the value is one.
    pub(crate) fn as_integer(&self) -> Option<i64> {
        match self.kind {
            Kind::Value(value) => value.as_integer(),
            _ => None,
        }
    }

    /// The string, if the value is one.
    pub(crate) fn as_str(&self) -> Option<&'a str> {
        match self.kind {
            Kind::Value(value) => value.as_str(),
            _ => None,
        }
    }

    /// A table, whatever keys it holds.
    pub(crate) fn table(&self) -> Result<Fields<'a>, Issue> {
        let table: &'a dyn TableLike = match self.kind {
            Kind::Table(table) => table,
            Kind::Value(Value::InlineTable(table)) => table,
            _ => return Err(self.wrong_type("a table")),
        };
        Ok(Fields {
            table,
            span: self.span(),
        })
    }

    /// A table holding only the keys `allowed`.
    pub(crate) fn fields(&self, allowed: &[&str]) -> Result<Fields<'a>, Issue> {
        let fields = self.table()?;
        fields.only(allowed)?;
        Ok(fields)
    }

    /// An array (`[...]`, or `[[...]]` tables), its elements in order.
    pub(crate) fn array(&self) -> Result<Spanned<Vec<Node<'a>>>, Issue> {
        let elements = match self.kind {
            Kind::Tables(tables) => tables
                .iter()
                .map(|table| Node {
                    kind: Kind::Table(table),
                    span: table.span().unwrap_or_else(|| self.span()),
                })
                .collect(),
            Kind::Value(Value::Array(array)) => array
                .iter()
                .map(|value| Node::of_value(value, self.span()))
                .collect(),
            _ => return Err(self.wrong_type("an array")),
        };
        Ok(Spanned::new(elements, self.span()))
    }

    pub(crate) fn string(&self) -> Result<Spanned<String>, Issue> {
        match self.as_str() {
            Some(text) => Ok(Spanned::new(text.to_owned(), self.span())),
            None => Err(self.wrong_type("a string")),
        }
    }

    pub(crate) fn boolean(&self) -> Result<Spanned<bool>, Issue> {
        match self.kind {
            Kind::Value(Value::Boolean(b)) => Ok(Spanned::new(*b.value(), self.span())),
            _ => Err(self.wrong_type("true or false")),
        }
    }

    /// An integer that fits `T`; `expected` says which ones do.
    pub(crate) fn integer<T: TryFrom<i64>>(&self, expected: &str) -> Result<Spanned<T>, Issue> {
        let Some(n) = self.as_integer() else {
            return Err(self.wrong_type(expected));
        };
        T::try_from(n)
            .map(|n| Spanned::new(n, self.span()))
            .map_err(|_| self.not_allowed(expected))
    }
}

/// The keys of one table.
pub(crate) struct Fields<'a> {
    table: &'a dyn TableLike,
    span: Range<usize>,
}

impl<'a> Fields<'a> {
    /// The table's span: its header and body, or the key of a dotted or
    /// implicit table.
    pub(crate) fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    fn key_span(&self, key: &str) -> Range<usize> {
        self.table
            .key(key)
            .and_then(toml_edit::Key::span)
            .unwrap_or_else(|| self.span())
    }

    /// Refuses the first key not in `allowed`, at the key.
    fn only(&self, allowed: &[&str]) -> Result<(), Issue> {
        match self.table.iter().find(|(key, _)| !allowed.contains(key)) {
            None => Ok(()),
            Some((key, _)) => Err(Issue::unknown_key(
                self.key_span(key),
                format!("unknown key `{key}` (allowed: {})", allowed.join(", ")),
            )),
        }
    }

    /// The value of `key`, if the table has it.
    pub(crate) fn get(&self, key: &str) -> Option<Node<'a>> {
        let item = self.table.get(key)?;
        Node::of_item(item, self.key_span(key))
    }

    /// The span of `key` itself, if the table has it.
    pub(crate) fn key(&self, key: &str) -> Option<Range<usize>> {
        self.table.get(key).map(|_| self.key_span(key))
    }

    /// Every key with its value, in the file's order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (Spanned<String>, Node<'a>)> + '_ {
        self.table.iter().filter_map(|(key, item)| {
            let span = self.key_span(key);
            let node = Node::of_item(item, span.clone())?;
            Some((Spanned::new(key.to_owned(), span), node))
        })
    }

    /// Reads `key` with `read`, if the table has it.
    pub(crate) fn read<T>(
        &self,
        key: &str,
        read: impl FnOnce(&Node<'a>) -> Result<T, Issue>,
    ) -> Result<Option<T>, Issue> {
        self.get(key).as_ref().map(read).transpose()
    }
}
