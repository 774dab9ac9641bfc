//! Progress bars, on the terminal only: one per class (its lane) with the
//! applications done, those still queued and the p99 wait so far, and a
//! line for the threads; refreshed from the target's figures while the
//! flood runs.

use std::io::IsTerminal;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::stats::fmt_duration;
use crate::timeline::{Class, Live, Timeline};

/// Where the bars go: stdout if `enabled` and stdout is a terminal, else
/// nowhere.
pub fn multi_progress(enabled: bool) -> MultiProgress {
    MultiProgress::with_draw_target(if enabled && std::io::stdout().is_terminal() {
        ProgressDrawTarget::stdout()
    } else {
        ProgressDrawTarget::hidden()
    })
}

/// The bars of one run: one per class, and the threads.
pub struct Bars {
    lanes: [ProgressBar; 2],
    threads: ProgressBar,
    shown: bool,
}

/// Bars for a run titled `title` (a word or two: they fit 80 columns),
/// under `multi`.
pub fn progress_bars(multi: &MultiProgress, title: &str, counts: [usize; 2]) -> Bars {
    let style =
        ProgressStyle::with_template("{prefix:17} [{bar:18.cyan/blue}] {pos:>5}/{len:<5} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    let lanes = [Class::Priority, Class::Standard].map(|class| {
        let bar = multi.add(ProgressBar::new(counts[class as usize] as u64));
        bar.set_style(style.clone());
        bar.set_prefix(format!("{title:<8} {}", class.label()));
        bar
    });
    let threads = multi.add(ProgressBar::new(0));
    threads.set_style(
        ProgressStyle::with_template("{prefix:17} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    threads.set_prefix(format!("{title:<8} threads"));
    Bars {
        lanes,
        threads,
        shown: !multi.is_hidden(),
    }
}

impl Bars {
    /// Are the bars drawn anywhere?
    pub fn shown(&self) -> bool {
        self.shown
    }

    /// Shows the target's figures now.
    pub fn show(&self, live: &Live, timeline: &Timeline, classes: &[Class]) {
        for class in [Class::Priority, Class::Standard] {
            let c = class as usize;
            let bar = &self.lanes[c];
            bar.set_position(live.done[c]);
            bar.set_message(format!(
                "queued {}, p99 wait {}",
                live.queued[c],
                fmt_duration(timeline.p99_wait_so_far(classes, class))
            ));
        }
        self.threads
            .set_message(format!("{} live, {} busy", live.threads, live.busy));
    }

    /// The last figures, and the bars stay as they are.
    pub fn finish(&self, live: &Live, timeline: &Timeline, classes: &[Class]) {
        if !self.shown {
            return;
        }
        self.show(live, timeline, classes);
        for bar in self.lanes.iter().chain([&self.threads]) {
            bar.finish();
        }
    }
}
