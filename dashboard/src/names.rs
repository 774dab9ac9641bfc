//! Names on the dashboard: one taken twice gets `#2`, `#3`… appended.

/// `wanted`, or `wanted#2`, `wanted#3`… whichever is not `taken` first.
pub(crate) fn unique_name(wanted: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut name = wanted.to_owned();
    let mut n = 1;
    while taken(&name) {
        n += 1;
        name = format!("{wanted}#{n}");
    }
    name
}
