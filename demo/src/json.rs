//! `--json PATH`: the per-class results of both runs, for scripts.
//!
//! The document is serde-derived and written by serde_json. Only its layout
//! is set here: serde_json's pretty layout, with each class's results on a
//! line of its own (`{"class": "priority", "lane": 10, "jobs": 80, ...}`)
//! so that a script can grep a class's line.

use std::io;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::ser::Formatter;

use crate::cli::Options;
use crate::stats::LaneStats;
use crate::timeline::Class;

/// One run as written: what ran it, and each class's lane (none for the
/// FIFO pool) and statistics.
pub struct Run<'a> {
    pub target: &'a str,
    pub executor: Option<&'a str>,
    pub picker: Option<&'a str>,
    pub lanes: [Option<u32>; 2],
    pub stats: &'a [LaneStats; 2],
}

/// The document `--json` writes.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize, PartialEq))]
struct Document {
    jobs: usize,
    ratio: usize,
    work_us: u128,
    threads: usize,
    runs: Vec<RunResults>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize, PartialEq))]
struct RunResults {
    target: String,
    /// The executor's name; null for the FIFO pool.
    executor: Option<String>,
    /// The executor's picker; null for the FIFO pool.
    picker: Option<String>,
    /// Priority first, then standard.
    classes: Vec<ClassResults>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize, PartialEq))]
struct ClassResults {
    class: String,
    /// The class's lane; null for the FIFO pool.
    lane: Option<u32>,
    jobs: usize,
    /// Share of the dispatches made while both classes had applications
    /// waiting, to 4 decimals.
    share: f64,
    /// Waits and the class's end, in milliseconds to the microsecond.
    p50_wait_ms: f64,
    p95_wait_ms: f64,
    p99_wait_ms: f64,
    done_at_ms: f64,
}

/// The document `--json` writes, as text.
pub fn document(options: &Options, runs: &[Run<'_>]) -> Result<String, String> {
    let document = Document {
        jobs: options.jobs,
        ratio: options.ratio,
        work_us: options.work.as_micros(),
        threads: options.threads,
        runs: runs.iter().map(run_results).collect(),
    };
    let mut out = Vec::new();
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut out, ClassPerLine::new(CLASS_DEPTH));
    document
        .serialize(&mut serializer)
        .map_err(|e| format!("the JSON results: {e}"))?;
    out.push(b'\n');
    String::from_utf8(out).map_err(|e| format!("the JSON results: {e}"))
}

fn run_results(run: &Run<'_>) -> RunResults {
    RunResults {
        target: run.target.to_owned(),
        executor: run.executor.map(str::to_owned),
        picker: run.picker.map(str::to_owned),
        classes: [Class::Priority, Class::Standard]
            .into_iter()
            .zip(run.lanes.iter().zip(run.stats))
            .map(|(class, (&lane, s))| ClassResults {
                class: class.label().to_owned(),
                lane,
                jobs: s.jobs,
                share: round(s.contended_share, 4),
                p50_wait_ms: ms(s.p50),
                p95_wait_ms: ms(s.p95),
                p99_wait_ms: ms(s.p99),
                done_at_ms: ms(s.done_at),
            })
            .collect(),
    }
}

/// Writes the document to `path`.
pub fn write(path: &Path, document: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create the folder: {e}", dir.display()))?;
    }
    std::fs::write(path, document).map_err(|e| format!("{}: {e}", path.display()))
}

fn ms(d: Duration) -> f64 {
    round(d.as_secs_f64() * 1e3, 3)
}

/// `x` to `decimals` places, so serde_json writes no more digits than that.
fn round(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// How deep the classes' objects are: document, runs, a run, its classes,
/// a class.
const CLASS_DEPTH: usize = 5;

/// serde_json's pretty layout (two-space indents, `": "`) for objects and
/// arrays above `inline_depth`; those at `inline_depth` or deeper are
/// written on one line, their members separated by `", "`.
struct ClassPerLine {
    inline_depth: usize,
    /// How many objects and arrays are open.
    depth: usize,
    /// Whether the innermost open one has a member yet.
    has_value: bool,
}

impl ClassPerLine {
    fn new(inline_depth: usize) -> Self {
        Self {
            inline_depth,
            depth: 0,
            has_value: false,
        }
    }

    fn inline(&self) -> bool {
        self.depth >= self.inline_depth
    }

    fn open<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        let inline = self.inline();
        self.depth -= 1;
        if self.has_value && !inline {
            self.newline(w)?;
        }
        w.write_all(bracket)
    }

    /// Before a member (an array's value, an object's key).
    fn member<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        if self.inline() {
            if !first {
                w.write_all(b" ")?;
            }
            Ok(())
        } else {
            self.newline(w)
        }
    }

    fn newline<W: ?Sized + io::Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl Formatter for ClassPerLine {
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.member(w, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.member(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_args;

    fn lane(jobs: usize, share: f64, waits_us: [u64; 4]) -> LaneStats {
        let [p50, p95, p99, done_at] = waits_us.map(Duration::from_micros);
        LaneStats {
            jobs,
            contended_share: share,
            p50,
            p95,
            p99,
            done_at,
            curve: vec![(0.0, 0.0)],
        }
    }

    /// The document of the CI's command line, for two runs with made-up
    /// statistics.
    fn sample(executor: &str) -> String {
        let options = parse_args([
            "floodgate",
            "--jobs",
            "400",
            "--work-us",
            "200",
            "--threads",
            "2",
        ])
        .expect("valid flags");
        let ours = [
            lane(80, 0.919_54, [13_270, 27_218, 28_009, 38_427]),
            lane(320, 0.080_46, [58_376, 92_259, 94_651, 109_467]),
        ];
        let fifo = [
            lane(80, 0.199, [31_825, 102_524, 107_631, 111_507]),
            lane(320, 0.801, [31_813, 102_252, 106_825, 107_772]),
        ];
        let runs = [
            Run {
                target: "priority executor",
                executor: Some(executor),
                picker: Some("smooth"),
                lanes: [Some(10), Some(1)],
                stats: &ours,
            },
            Run {
                target: "FIFO pool",
                executor: None,
                picker: None,
                lanes: [None, None],
                stats: &fifo,
            },
        ];
        document(&options, &runs).expect("a document")
    }

    #[test]
    fn the_document_round_trips_through_serde_json() {
        let parsed: Document =
            serde_json::from_str(&sample("visa_priority_exec")).expect("valid JSON");
        assert_eq!(
            (parsed.jobs, parsed.ratio, parsed.work_us, parsed.threads),
            (400, 4, 200, 2)
        );
        assert_eq!(parsed.runs.len(), 2);
        let ours = &parsed.runs[0];
        assert_eq!(ours.target, "priority executor");
        assert_eq!(ours.executor.as_deref(), Some("visa_priority_exec"));
        assert_eq!(ours.picker.as_deref(), Some("smooth"));
        assert_eq!(
            ours.classes[0],
            ClassResults {
                class: "priority".into(),
                lane: Some(10),
                jobs: 80,
                share: 0.9195,
                p50_wait_ms: 13.27,
                p95_wait_ms: 27.218,
                p99_wait_ms: 28.009,
                done_at_ms: 38.427,
            }
        );
        assert_eq!(ours.classes[1].class, "standard");
        assert_eq!(ours.classes[1].lane, Some(1));
        assert_eq!(ours.classes[1].share, 0.0805);
        let fifo = &parsed.runs[1];
        assert_eq!(
            (fifo.executor.as_deref(), fifo.picker.as_deref()),
            (None, None)
        );
        assert_eq!(
            fifo.classes
                .iter()
                .map(|c| (c.class.as_str(), c.lane, c.jobs))
                .collect::<Vec<_>>(),
            [("priority", None, 80), ("standard", None, 320)]
        );
        assert_eq!(fifo.classes[0].done_at_ms, 111.507);
    }

    #[test]
    fn each_class_is_one_line_a_script_can_grep() {
        let text = sample("visa_priority_exec");
        assert_eq!(
            text,
            r#"{
  "jobs": 400,
  "ratio": 4,
  "work_us": 200,
  "threads": 2,
  "runs": [
    {
      "target": "priority executor",
      "executor": "visa_priority_exec",
      "picker": "smooth",
      "classes": [
        {"class": "priority", "lane": 10, "jobs": 80, "share": 0.9195, "p50_wait_ms": 13.27, "p95_wait_ms": 27.218, "p99_wait_ms": 28.009, "done_at_ms": 38.427},
        {"class": "standard", "lane": 1, "jobs": 320, "share": 0.0805, "p50_wait_ms": 58.376, "p95_wait_ms": 92.259, "p99_wait_ms": 94.651, "done_at_ms": 109.467}
      ]
    },
    {
      "target": "FIFO pool",
      "executor": null,
      "picker": null,
      "classes": [
        {"class": "priority", "lane": null, "jobs": 80, "share": 0.199, "p50_wait_ms": 31.825, "p95_wait_ms": 102.524, "p99_wait_ms": 107.631, "done_at_ms": 111.507},
        {"class": "standard", "lane": null, "jobs": 320, "share": 0.801, "p50_wait_ms": 31.813, "p95_wait_ms": 102.252, "p99_wait_ms": 106.825, "done_at_ms": 107.772}
      ]
    }
  ]
}
"#
        );
        // The line `.ci/run` greps.
        assert!(text.contains(r#""class": "priority", "lane": 10, "jobs": 80,"#));
    }

    #[test]
    fn names_are_escaped() {
        let name = "a\"b\\c\n\u{1}";
        let parsed: Document = serde_json::from_str(&sample(name)).expect("valid JSON");
        assert_eq!(parsed.runs[0].executor.as_deref(), Some(name));
    }
}
