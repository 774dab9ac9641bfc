//! Who may act through the dashboard: [`Actions`], named bearer tokens,
//! and the check of a request's token against them.

use axum::http::{HeaderMap, header};

/// Who may act through the dashboard: named bearer tokens.
///
/// # Examples
///
/// ```
/// use priority_executor_dashboard::{Actions, Dashboard};
///
/// let token = std::env::var("DASHBOARD_TOKEN").unwrap_or_else(|_| "change-me".into());
/// let dashboard = Dashboard::new().actions(Actions::with_token("ops", token).token("oncall", "t2"));
/// # drop(dashboard);
/// ```
#[derive(Clone)]
pub struct Actions {
    tokens: Vec<(String, String)>,
}

impl std::fmt::Debug for Actions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The tokens themselves are never printed.
        let names: Vec<&str> = self.tokens.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Actions").field("tokens", &names).finish()
    }
}

impl Actions {
    /// Actions for the holder of `token`, logged as `name`.
    ///
    /// The token is taken without surrounding whitespace (a token read
    /// from a file or an environment variable may end in a newline), as
    /// the token of a request is.
    ///
    /// # Panics
    ///
    /// If the token is blank (empty, or only whitespace), or holds a
    /// character an `Authorization` header cannot carry (anything but
    /// visible ASCII, spaces and tabs): no request could ever match it.
    /// The message names the token's holder, never the token.
    pub fn with_token(name: impl Into<String>, token: impl Into<String>) -> Actions {
        Actions { tokens: Vec::new() }.token(name, token)
    }

    /// One more token, logged as `name`; taken as
    /// [`with_token`](Actions::with_token) takes it.
    ///
    /// # Panics
    ///
    /// As [`with_token`](Actions::with_token).
    pub fn token(mut self, name: impl Into<String>, token: impl Into<String>) -> Actions {
        let name = name.into();
        let token = token.into();
        let token = token.trim();
        assert!(
            !token.is_empty(),
            "Actions: the token of {name:?} is blank (empty or only whitespace): \
             no request could carry it"
        );
        assert!(
            token.bytes().all(sendable),
            "Actions: the token of {name:?} holds a character an Authorization header \
             cannot carry (allowed: visible ASCII, spaces and tabs)"
        );
        self.tokens.push((name, token.to_owned()));
        self
    }

    /// The name of the token the request carries, if it carries one.
    pub(crate) fn holder(&self, headers: &HeaderMap) -> Option<&str> {
        let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
        let (scheme, given) = value.trim().split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let given = given.trim().as_bytes();
        // Every token is compared in full, so the time taken does not
        // tell how much of one matched.
        let mut found = None;
        for (name, token) in &self.tokens {
            if same(given, token.as_bytes()) && found.is_none() {
                found = Some(name.as_str());
            }
        }
        found
    }
}

/// Whether a header value can carry the byte, so that
/// [`holder`](Actions::holder) can read it.
fn sendable(b: u8) -> bool {
    b == b'\t' || (b' '..=b'~').contains(&b)
}

/// Equal bytes, compared without an early exit.
fn same(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, &x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(!x));
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn tokens_compare_in_full() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"ab", b"abc"));
        assert!(!same(b"abc", b"ab"));
        assert!(!same(b"", b"a"));
    }

    #[test]
    fn the_holder_is_named_by_the_bearer_token() {
        let actions = Actions::with_token("ops", "s3cret").token("oncall", "t2");
        let mut headers = HeaderMap::new();
        assert_eq!(actions.holder(&headers), None);
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer t2"));
        assert_eq!(actions.holder(&headers), Some("oncall"));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Basic s3cret"),
        );
        assert_eq!(actions.holder(&headers), None);
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer s3cret"),
        );
        assert_eq!(actions.holder(&headers), Some("ops"));
        assert!(!format!("{actions:?}").contains("s3cret"));
    }
}
