//! The parser's errors: an integer too large for TOML told apart from a
//! syntax error.

use super::{ConfigErrorKind, Issue};

impl Issue {
    /// The parser's error. An integer too large (or small) for TOML is a
    /// parse error too; it is told apart by the text at the error, not by
    /// the error's wording, and placed in its executor or rule and key.
    pub(crate) fn syntax(err: &toml_edit::TomlError, source: &str) -> Self {
        if let Some(issue) = err
            .span()
            .and_then(|span| out_of_range_integer(source, span.start))
        {
            return issue;
        }
        Issue {
            kind: ConfigErrorKind::Syntax,
            span: err.span(),
            // Parse errors are several lines (found, expected); keep one.
            detail: err.message().trim().replace('\n', "; "),
            executor: None,
            field: None,
            quote_value: false,
            placed_in: None,
            source: None,
        }
    }
}

/// The integer literal starting at `offset`, if it is one TOML cannot hold
/// (beyond 64 bits signed): an issue placed at the literal, with the
/// context found in a copy of `source` that has `0` in its place.
fn out_of_range_integer(source: &str, offset: usize) -> Option<Issue> {
    let rest = source.get(offset..)?;
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-')))
        .unwrap_or(rest.len());
    let literal = &rest[..len];
    let negative = literal.starts_with('-');
    let unsigned = literal.trim_start_matches(['+', '-']);
    let (radix, digits) = match unsigned.get(..2) {
        Some("0x") => (16, &unsigned[2..]),
        Some("0o") => (8, &unsigned[2..]),
        Some("0b") => (2, &unsigned[2..]),
        _ => (10, unsigned),
    };
    // TOML's integer grammar: digits, single underscores between them, no
    // sign on a prefixed integer, no leading zero on a decimal one.
    let well_formed = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.chars().all(|c| c == '_' || c.is_digit(radix))
        && (radix == 10 || unsigned.len() == literal.len())
        && !(radix == 10 && digits.len() > 1 && digits.starts_with('0'));
    if !well_formed {
        return None;
    }
    let magnitude = u128::from_str_radix(&digits.replace('_', ""), radix).unwrap_or(u128::MAX);
    let limit = if negative {
        u128::from(i64::MIN.unsigned_abs())
    } else {
        u128::from(i64::MAX.unsigned_abs())
    };
    if magnitude <= limit {
        return None;
    }
    let detail = if negative {
        format!("is too small (TOML integers go down to {})", i64::MIN)
    } else {
        format!("is too large (TOML integers go up to {})", i64::MAX)
    };
    let span = offset..offset + len;
    let placed_in = format!("{}0{}", &source[..offset], &source[span.end..]);
    Some(Issue {
        quote_value: true,
        placed_in: Some(placed_in.into()),
        ..Issue::invalid(span, detail)
    })
}
