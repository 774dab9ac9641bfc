//! The parser's errors: an integer too large for TOML told apart from a
//! syntax error, and a syntax error told with what the line should look
//! like.

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
        // Parse errors are several lines (found, expected); keep one.
        let mut detail = err.message().trim().replace('\n', "; ");
        if let (false, Some(span)) = (detail.is_empty(), err.span()) {
            detail = format!("{detail} ({})", shape(&detail, source, span.start));
        }
        Issue {
            kind: ConfigErrorKind::Syntax,
            span: err.span(),
            detail,
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

/// What the text at a syntax error should look like, from the parser's
/// `message` and the line the error is on (`offset`).
fn shape(message: &str, source: &str, offset: usize) -> &'static str {
    let offset = (0..=offset.min(source.len()))
        .rev()
        .find(|&i| source.is_char_boundary(i))
        .unwrap_or(0);
    let line_start = source[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = source[line_start..].lines().next().unwrap_or("");
    let before = &source[line_start..offset];
    let header = line.trim_start().starts_with('[') && !before.contains('=');
    // The parser names what it was reading first ("invalid array").
    let reading = message.split(';').next().unwrap_or("");
    if message.contains("duplicate key") {
        "each key is set once in its table, and each `[section]` header once"
    } else if reading.contains("table header") || header {
        if line.trim_start().starts_with("[[") {
            "an array-of-tables header is `[[name]]` alone on its line, such as \
             `[[executors.NAME.lanes]]`"
        } else {
            "a table header is `[name]` alone on its line, such as `[executors.NAME]`"
        }
    } else if reading.contains("escape") {
        "in a \"string\" a backslash starts an escape such as \\n or \\\\; write text with \
         backslashes, such as a regex, in 'single quotes'"
    } else if reading == "invalid string" {
        VALUE
    } else if reading.contains("string") {
        "a string ends on the line it starts: \"text\" or 'text'; \"\"\"text\"\"\" may span lines"
    } else if reading.contains("inline table") {
        "an inline table is `{ key = value, key = value }` on one line, with no comma after \
         the last value"
    } else if reading.contains("array") {
        "an array is `[value, value]`, closed with `]`"
    } else if reading.contains("integer") || reading.contains("number") {
        "a number is written such as 4, -1, 1_000 or 0.5"
    } else if message.contains("expected newline") {
        "a line holds one `key = value`, then at most a `# comment`; text is quoted: \
         `key = \"text\"`"
    } else if before.contains('=') {
        VALUE
    } else {
        "a line is `key = value`, a `[section]` header or a `# comment`"
    }
}

/// What may follow `key =`.
const VALUE: &str = "a value is a number, true or false, a \"quoted string\", an [array] or an \
                     { inline table }";
