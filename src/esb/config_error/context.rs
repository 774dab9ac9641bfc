//! Which executor, lane, rule, `when` entry and key a byte offset of the
//! file is in, from the TOML parser's spans.

use std::ops::Range;

/// One step of the path from the document root to an offset.
#[derive(Debug)]
enum Step {
    Key(String),
    /// An array element, with the `priority` it declares (to name a lane).
    Index(usize, Option<i64>),
}

/// Where an offset lies: the executor or rule, the lane or `when` entry,
/// and the key.
#[derive(Debug, Default)]
pub(super) struct Context {
    pub(super) executor: Option<String>,
    pub(super) rule: Option<String>,
    pub(super) mailbox: Option<String>,
    /// A table that another crate reads, such as `amqp "visa"` for
    /// `[amqp.visa]`.
    section: Option<String>,
    /// "lane priority 1", "when #2, all #1" and the like.
    inner: Vec<String>,
    pub(super) field: Option<String>,
}

impl Context {
    /// The context of `offset` in `source`, from the parser's spans of
    /// every key and value (a table's own span misses implicit tables such as
    /// `executors` in `[executors.x]`).
    pub(super) fn find(source: &str, offset: usize) -> Option<Context> {
        let document = toml_edit::ImDocument::parse(source).ok()?;
        let mut path = Vec::new();
        walk_table(document.as_table(), offset, &mut path);
        Some(Context::from_path(&path))
    }

    fn from_path(path: &[Step]) -> Context {
        let mut context = Context::default();
        let mut steps = path.iter();
        match (steps.next(), steps.next()) {
            (Some(Step::Key(top)), Some(Step::Key(name))) if top == "executors" => {
                context.executor = Some(name.clone());
            }
            (Some(Step::Key(top)), Some(Step::Key(name))) if top == "rules" => {
                context.rule = Some(name.clone());
            }
            (Some(Step::Key(top)), Some(Step::Key(name))) if top == "mailboxes" => {
                // The seed's settings are dotted (`priority.poison-pill`):
                // the field is the whole dotted key.
                context.mailbox = Some(name.clone());
                let keys: Vec<&str> = steps
                    .filter_map(|step| match step {
                        Step::Key(key) => Some(key.as_str()),
                        Step::Index(..) => None,
                    })
                    .collect();
                context.field = (!keys.is_empty()).then(|| keys.join("."));
                return context;
            }
            (Some(Step::Key(top)), Some(Step::Key(name))) => {
                // Debug: a name with a control character shows it escaped.
                context.section = Some(format!("{top} {name:?}"));
            }
            (Some(Step::Key(key)), _) => {
                context.field = Some(key.clone());
                return context;
            }
            _ => return context,
        }
        let mut last_key: Option<&str> = None;
        for step in steps {
            match step {
                Step::Key(key) => {
                    // A key followed by another key names a table on the
                    // way, such as `not = { ... }`.
                    if let Some(table) = last_key.replace(key) {
                        context.inner.push(table.to_owned());
                    }
                }
                Step::Index(i, priority) => {
                    let label = match (last_key, priority) {
                        (Some("lanes"), Some(p)) => format!("lane priority {p}"),
                        (Some("lanes"), None) => format!("lane #{}", i + 1),
                        (Some(key), _) => format!("{key} #{}", i + 1),
                        (None, _) => format!("#{}", i + 1),
                    };
                    context.inner.push(label);
                    last_key = None;
                }
            }
        }
        context.field = last_key.map(str::to_owned);
        context
    }

    pub(super) fn scope(&self, executor_override: Option<&str>) -> String {
        let mut parts = Vec::new();
        if let Some(rule) = &self.rule {
            // Debug: a name with a control character shows it escaped.
            parts.push(format!("rule {rule:?}"));
        } else if let Some(mailbox) = &self.mailbox {
            parts.push(format!("mailbox {mailbox:?}"));
        } else if let Some(executor) = executor_override.or(self.executor.as_deref()) {
            parts.push(format!("executor {executor:?}"));
        } else if let Some(section) = &self.section {
            parts.push(section.clone());
        }
        parts.extend(self.inner.iter().cloned());
        parts.join(", ")
    }
}

fn contains(span: Option<Range<usize>>, offset: usize) -> bool {
    span.is_some_and(|s| s.contains(&offset) || (s.is_empty() && s.start == offset))
}

fn item_contains(item: &toml_edit::Item, offset: usize) -> bool {
    use toml_edit::Item;
    if contains(item.span(), offset) {
        return true;
    }
    // An implicit table has no span of its own, and a table's span does not
    // cover sub-tables declared under their own headers (`[[x.lanes]]`):
    // look at what it holds.
    match item {
        Item::Table(table) => table.iter().any(|(key, child)| {
            contains(table.key(key).and_then(toml_edit::Key::span), offset)
                || item_contains(child, offset)
        }),
        Item::ArrayOfTables(tables) => tables.iter().any(|t| contains(t.span(), offset)),
        Item::Value(_) | Item::None => false,
    }
}

/// As [`item_contains`], for a value: a table declared by dotted keys
/// inside an inline table (`not.header = "x"`) has no span of its own.
fn value_contains(value: &toml_edit::Value, offset: usize) -> bool {
    if contains(value.span(), offset) {
        return true;
    }
    match value {
        toml_edit::Value::InlineTable(table) => table.iter().any(|(key, child)| {
            contains(table.key(key).and_then(toml_edit::Key::span), offset)
                || value_contains(child, offset)
        }),
        _ => false,
    }
}

fn walk_table(table: &toml_edit::Table, offset: usize, path: &mut Vec<Step>) {
    for (key, item) in table.iter() {
        if contains(table.key(key).and_then(toml_edit::Key::span), offset) {
            path.push(Step::Key(key.to_owned()));
            return;
        }
        if item_contains(item, offset) {
            path.push(Step::Key(key.to_owned()));
            walk_item(item, offset, path);
            return;
        }
    }
}

fn walk_item(item: &toml_edit::Item, offset: usize, path: &mut Vec<Step>) {
    use toml_edit::Item;
    match item {
        Item::Table(table) => walk_table(table, offset, path),
        Item::ArrayOfTables(tables) => {
            for (i, table) in tables.iter().enumerate() {
                if contains(table.span(), offset) {
                    let priority = table.get("priority").and_then(Item::as_integer);
                    path.push(Step::Index(i, priority));
                    walk_table(table, offset, path);
                    return;
                }
            }
        }
        Item::Value(value) => walk_value(value, offset, path),
        Item::None => {}
    }
}

fn walk_value(value: &toml_edit::Value, offset: usize, path: &mut Vec<Step>) {
    use toml_edit::Value;
    match value {
        Value::Array(array) => {
            for (i, element) in array.iter().enumerate() {
                if contains(element.span(), offset) {
                    let priority = element
                        .as_inline_table()
                        .and_then(|t| t.get("priority"))
                        .and_then(Value::as_integer);
                    path.push(Step::Index(i, priority));
                    walk_value(element, offset, path);
                    return;
                }
            }
        }
        Value::InlineTable(table) => {
            for (key, element) in table.iter() {
                if contains(table.key(key).and_then(toml_edit::Key::span), offset) {
                    path.push(Step::Key(key.to_owned()));
                    return;
                }
                if value_contains(element, offset) {
                    path.push(Step::Key(key.to_owned()));
                    walk_value(element, offset, path);
                    return;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_names_lane_by_priority() {
        let text = "[executors.x]\n[[executors.x.lanes]]\npriority = 7\nweight = 0\n";
        let offset = text.find("0\n").expect("present");
        let context = Context::find(text, offset).expect("valid toml");
        assert_eq!(context.executor.as_deref(), Some("x"));
        assert_eq!(context.field.as_deref(), Some("weight"));
        assert_eq!(context.scope(None), "executor \"x\", lane priority 7");
    }

    #[test]
    fn context_in_a_table_another_crate_reads() {
        let text = "[amqp.visa]\nqueue = \"v\"\npriorities = { \"0-4\" = 1 }\n";
        let offset = text.find("1 }").expect("present");
        let context = Context::find(text, offset).expect("valid toml");
        assert_eq!(context.executor, None);
        assert_eq!(context.field.as_deref(), Some("0-4"));
        assert_eq!(context.scope(None), "amqp \"visa\", priorities");
    }

    #[test]
    fn context_in_dotted_keys_of_an_inline_table() {
        let text = "[rules.r]\nwhen = [{priority = 1, not.header = \"a\", not.equals = 3}]\n";
        let offset = text.find('3').expect("present");
        let context = Context::find(text, offset).expect("valid toml");
        assert_eq!(context.rule.as_deref(), Some("r"));
        assert_eq!(context.field.as_deref(), Some("equals"));
        assert_eq!(context.scope(None), "rule \"r\", when #1, not");
    }

    #[test]
    fn context_in_inline_tables_and_nested_conditions() {
        let text = "[rules.r]\nwhen = [{priority = 1, any = [{header = \"a\", equals = 3}]}]\n";
        let offset = text.find('3').expect("present");
        let context = Context::find(text, offset).expect("valid toml");
        assert_eq!(context.rule.as_deref(), Some("r"));
        assert_eq!(context.field.as_deref(), Some("equals"));
        assert_eq!(context.scope(None), "rule \"r\", when #1, any #1");
    }
}
