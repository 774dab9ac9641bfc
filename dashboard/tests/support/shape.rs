//! The JSON's shape: which fields an object has, and of what kind.

use serde_json::Value;

#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Bool,
    /// A whole number, at least 0.
    Count,
    /// Any number.
    Number,
    Text,
    Array,
    Object,
}

fn is(value: &Value, kind: Kind) -> bool {
    match kind {
        Kind::Bool => value.is_boolean(),
        Kind::Count => value.is_u64(),
        Kind::Number => value.is_number(),
        Kind::Text => value.is_string(),
        Kind::Array => value.is_array(),
        Kind::Object => value.is_object(),
    }
}

/// `object` has exactly the `fields`, each of its kind; `nullable` ones may
/// also be `null`.
pub fn check(what: &str, object: &Value, fields: &[(&str, Kind)], nullable: &[&str]) {
    let map = object
        .as_object()
        .unwrap_or_else(|| panic!("{what} is not an object"));
    let mut names: Vec<&str> = map.keys().map(String::as_str).collect();
    let mut expected: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    expected.sort_unstable();
    assert_eq!(names, expected, "the fields of {what}");
    for &(name, kind) in fields {
        let value = &map[name];
        let ok = is(value, kind) || (value.is_null() && nullable.contains(&name));
        assert!(ok, "{what}.{name} is {value}, expected {kind:?}");
    }
}
