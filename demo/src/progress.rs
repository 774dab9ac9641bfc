//! Progress bars, one per class and run, on the terminal only.

use std::io::IsTerminal;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::flood::Class;

/// Where the bars go: stdout if `enabled` and stdout is a terminal, else
/// nowhere.
pub fn multi_progress(enabled: bool) -> MultiProgress {
    MultiProgress::with_draw_target(if enabled && std::io::stdout().is_terminal() {
        ProgressDrawTarget::stdout()
    } else {
        ProgressDrawTarget::hidden()
    })
}

/// One bar per class, titled `title`, under `multi`.
pub fn progress_bars(multi: &MultiProgress, title: &str, counts: [usize; 2]) -> [ProgressBar; 2] {
    let style = ProgressStyle::with_template(
        "{prefix:<28} [{bar:36.cyan/blue}] {pos:>6}/{len:<6} {elapsed_precise}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    [Class::Priority, Class::Standard].map(|class| {
        let bar = multi.add(ProgressBar::new(counts[class as usize] as u64));
        bar.set_style(style.clone());
        bar.set_prefix(format!("{title}: {}", class.label()));
        bar
    })
}
