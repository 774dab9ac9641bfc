//! The command line: its flags, their defaults and validation, derived with
//! clap (which also writes `--help`). A numeric flag reads `-5` as its
//! value, and refuses it naming the flag, rather than taking it for an
//! unknown flag.

use std::path::PathBuf;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};
use priority_executor::Picker;

/// The executor of the built-in pool, and of `executors.toml`, the demo
/// floods unless `--executor` names another.
pub const DEFAULT_EXECUTOR: &str = "visa_priority_exec";

/// Floods a priority executor with standard and priority visa applications,
/// then runs the same flood on a plain FIFO pool for contrast.
//
// The help of the flags whose text takes more than a line is kept as written
// here (`verbatim_doc_comment`), wrapped to fit 80 columns.
#[derive(Debug, Parser)]
#[command(name = "floodgate", verbatim_doc_comment)]
pub struct Options {
    /// Applications in the flood [default: 4000; with
    /// --serve, 40000]
    #[arg(
        verbatim_doc_comment,
        long,
        value_name = "N",
        allow_negative_numbers = true,
        default_value = "4000",
        hide_default_value = true,
        value_parser = positive,
    )]
    pub jobs: usize,

    /// Seconds over which the applications arrive, evenly
    /// spread (0: all at once, the seed's backlog)
    /// [default: 0; with --serve, 20, so that the page
    /// shows the standard lane growing while the priority
    /// lane stays short]
    #[arg(
        verbatim_doc_comment,
        long = "arrive-over",
        value_name = "SECS",
        allow_negative_numbers = true,
        default_value = "0",
        hide_default_value = true,
        value_parser = seconds,
    )]
    pub arrive_over: Duration,

    /// Standard applications per priority one
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        default_value = "4",
        value_parser = positive,
    )]
    pub ratio: usize,

    /// Microseconds each application takes
    #[arg(
        long = "work-us",
        value_name = "N",
        allow_negative_numbers = true,
        default_value = "2000",
        value_parser = micros,
    )]
    pub work: Duration,

    /// smooth | classic | strict [default: the executor's own]
    #[arg(long, value_name = "NAME")]
    pub picker: Option<Picker>,

    /// Worker threads, for the executor (its core and max)
    /// and for the FIFO pool: one per core
    #[arg(
        verbatim_doc_comment,
        long,
        value_name = "N",
        allow_negative_numbers = true,
        default_value_t = cores(),
        value_parser = positive,
    )]
    pub threads: usize,

    /// Reserved workers: keep N threads for the higher
    /// lanes by capping the lowest lane at threads - N
    /// running jobs (max_running); N below --threads
    /// [default: no cap]
    #[arg(
        verbatim_doc_comment,
        long,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = positive,
    )]
    pub reserve: Option<usize>,

    /// Executors file [default: executors.toml at the
    /// repository root if present, else a built-in
    /// visa_priority_exec: lanes 10 and 1, unbounded]
    #[arg(verbatim_doc_comment, long, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Executor to use from the file; its lanes and
    /// picker are the file's, its threads are
    /// --threads
    #[arg(
        verbatim_doc_comment,
        long,
        value_name = "NAME",
        default_value = DEFAULT_EXECUTOR
    )]
    pub executor: String,

    /// Where to write the chart
    #[arg(long, value_name = "PATH", default_value = "floodgate.svg")]
    pub svg: PathBuf,

    /// Also write the per-class results of both runs as JSON
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// No progress bars (also off when stdout is not a
    /// terminal)
    #[arg(verbatim_doc_comment, long = "no-progress", action = ArgAction::SetFalse)]
    pub progress: bool,
    /// Serve the live dashboard on ADDR (a loopback
    /// address, e.g. 127.0.0.1:8080) while the flood
    /// runs; on a terminal it stays up until Enter
    #[arg(verbatim_doc_comment, long, value_name = "ADDR")]
    pub serve: Option<String>,
    /// With --serve: allow pausing and resuming lanes
    /// from the page, for holders of this bearer token
    /// [default: read-only]
    #[arg(
        verbatim_doc_comment,
        long,
        value_name = "TOKEN",
        requires = "serve",
        value_parser = token
    )]
    pub token: Option<String>,
}

/// Parses a command line (the program's name first, as in `std::env::args`)
/// and checks what no single flag can: that `--reserve` leaves the lowest
/// lane a thread. `--help` comes back as an error of kind
/// [`ErrorKind::DisplayHelp`]; `Error::exit` prints either as clap does.
pub fn parse_args<I, T>(args: I) -> Result<Options, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = Options::command().try_get_matches_from(args)?;
    let mut options = Options::from_arg_matches(&matches)?;
    if options.serve.is_some() {
        // Served, the flood is one a viewer can watch: arriving faster than
        // the threads serve it, but over time rather than all at once.
        let defaulted = |id: &str| matches.value_source(id) == Some(ValueSource::DefaultValue);
        if defaulted("jobs") {
            options.jobs = SERVED_JOBS;
        }
        if defaulted("arrive_over") {
            options.arrive_over = SERVED_ARRIVAL;
        }
    }
    if let Some(reserve) = options.reserve
        && reserve >= options.threads
    {
        return Err(Options::command().error(
            ErrorKind::ValueValidation,
            format!(
                "invalid value '{reserve}' for '--reserve <N>': must be fewer than the {} threads, \
                 or the lowest lane could never run",
                options.threads
            ),
        ));
    }
    Ok(options)
}

/// `--jobs` with `--serve` unless given.
const SERVED_JOBS: usize = 40_000;
/// `--arrive-over` with `--serve` unless given.
const SERVED_ARRIVAL: Duration = Duration::from_secs(20);

fn seconds(raw: &str) -> Result<Duration, String> {
    raw.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| "not a number of seconds, 0 or more".to_string())
}

/// A bearer token as the dashboard takes it: without the whitespace around
/// it (a token read from a file keeps its newline), and one a request's
/// `Authorization` header can carry (not blank, visible ASCII and spaces).
fn token(raw: &str) -> Result<String, String> {
    let token = raw.trim();
    if token.is_empty() {
        return Err("blank: no request could carry it".to_string());
    }
    if !token.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
        return Err("not visible ASCII: an Authorization header cannot carry it".to_string());
    }
    Ok(token.to_string())
}

fn positive(raw: &str) -> Result<usize, String> {
    match raw.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err("not a whole number greater than zero".to_string()),
    }
}

fn micros(raw: &str) -> Result<Duration, String> {
    raw.parse::<u64>()
        .map(Duration::from_micros)
        .map_err(|_| "not a whole number of microseconds".to_string())
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        parse_args(std::iter::once("floodgate").chain(args.iter().copied()))
    }

    fn ok(args: &[&str]) -> Options {
        parse(args).unwrap_or_else(|e| panic!("{args:?} refused: {e}"))
    }

    /// The error a refused command line gets, as clap prints it.
    fn error(args: &[&str]) -> (ErrorKind, String) {
        match parse(args) {
            Err(e) => (e.kind(), e.to_string()),
            Ok(o) => panic!("{args:?} should be refused, parsed as {o:?}"),
        }
    }

    #[test]
    fn the_derived_command_is_consistent() {
        Options::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let o = ok(&[]);
        assert_eq!((o.jobs, o.ratio), (4000, 4));
        assert_eq!(o.arrive_over, Duration::ZERO);
        assert_eq!(o.work, Duration::from_micros(2000));
        assert_eq!(o.picker, None);
        assert_eq!(o.threads, cores());
        assert_eq!(o.reserve, None);
        assert_eq!(o.config, None);
        assert_eq!(o.executor, DEFAULT_EXECUTOR);
        assert_eq!(o.svg, PathBuf::from("floodgate.svg"));
        assert_eq!(o.json, None);
        assert!(o.progress);
        assert_eq!((o.serve, o.token), (None, None));
    }

    #[test]
    fn each_flag_sets_its_option() {
        assert_eq!(ok(&["--jobs", "10"]).jobs, 10);
        assert_eq!(ok(&["--ratio=3"]).ratio, 3);
        assert_eq!(ok(&["--work-us", "250"]).work, Duration::from_micros(250));
        assert_eq!(ok(&["--work-us", "0"]).work, Duration::ZERO);
        assert_eq!(ok(&["--picker", "strict"]).picker, Some(Picker::Strict));
        assert_eq!(ok(&["--picker=classic"]).picker, Some(Picker::Classic));
        assert_eq!(ok(&["--threads", "7"]).threads, 7);
        let o = ok(&["--threads", "4", "--reserve", "1"]);
        assert_eq!((o.threads, o.reserve), (4, Some(1)));
        assert_eq!(
            ok(&["--config", "a/b.toml"]).config,
            Some(PathBuf::from("a/b.toml"))
        );
        assert_eq!(ok(&["--executor", "other"]).executor, "other");
        assert_eq!(
            ok(&["--svg", "/tmp/f.svg"]).svg,
            PathBuf::from("/tmp/f.svg")
        );
        assert_eq!(
            ok(&["--json", "out/r.json"]).json,
            Some(PathBuf::from("out/r.json"))
        );
        assert!(!ok(&["--no-progress"]).progress);
        let served = ok(&["--serve", "127.0.0.1:8080", "--token", "t"]);
        assert_eq!(served.serve.as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(served.token.as_deref(), Some("t"));
        assert_eq!(
            ok(&["--arrive-over", "2.5"]).arrive_over,
            Duration::from_millis(2500)
        );
        assert!(
            error(&["--arrive-over", "-1"])
                .1
                .contains("not a number of seconds")
        );
        // A token is taken as a request carries it, or refused.
        let trimmed = ok(&["--serve", "127.0.0.1:8080", "--token", "t\n"]);
        assert_eq!(trimmed.token.as_deref(), Some("t"));
        let blank = error(&["--serve", "127.0.0.1:8080", "--token", "  "]);
        assert_eq!(blank.0, ErrorKind::ValueValidation);
        assert!(blank.1.contains("blank"), "{}", blank.1);
        let unsendable = error(&["--serve", "127.0.0.1:8080", "--token", "s\u{e9}cret"]);
        assert!(unsendable.1.contains("Authorization"), "{}", unsendable.1);
        // A token means nothing without the dashboard.
        assert_eq!(
            error(&["--token", "t"]).0,
            ErrorKind::MissingRequiredArgument
        );
    }

    #[test]
    fn served_the_flood_is_larger_and_arrives_over_time_unless_told_otherwise() {
        let served = ok(&["--serve", "127.0.0.1:0"]);
        assert_eq!(
            (served.jobs, served.arrive_over),
            (40_000, Duration::from_secs(20))
        );
        let told = ok(&[
            "--serve",
            "127.0.0.1:0",
            "--jobs",
            "100",
            "--arrive-over",
            "0",
        ]);
        assert_eq!((told.jobs, told.arrive_over), (100, Duration::ZERO));
    }

    #[test]
    fn the_ci_command_line_parses() {
        let o = ok(&[
            "--jobs",
            "400",
            "--work-us",
            "200",
            "--no-progress",
            "--svg",
            "target/x.svg",
            "--json",
            "target/x.json",
        ]);
        assert_eq!((o.jobs, o.ratio), (400, 4));
        assert_eq!(o.work, Duration::from_micros(200));
        assert!(!o.progress);
        assert_eq!(o.svg, PathBuf::from("target/x.svg"));
        assert_eq!(o.json, Some(PathBuf::from("target/x.json")));
    }

    #[test]
    fn a_bad_value_is_refused_naming_the_flag_the_value_and_what_is_allowed() {
        for (args, flag, value, allowed) in [
            (&["--jobs", "0"][..], "--jobs", "'0'", "greater than zero"),
            (&["--jobs", "many"], "--jobs", "'many'", "greater than zero"),
            (&["--ratio", "x"], "--ratio", "'x'", "greater than zero"),
            (&["--work-us", "-5"], "--work-us", "'-5'", "microseconds"),
            (
                &["--threads", "-1"],
                "--threads",
                "'-1'",
                "greater than zero",
            ),
            (
                &["--picker", "fair"],
                "--picker",
                "'fair'",
                "smooth, classic, strict",
            ),
            (&["--threads", "0"], "--threads", "'0'", "greater than zero"),
            (&["--reserve", "0"], "--reserve", "'0'", "greater than zero"),
        ] {
            let (kind, message) = error(args);
            assert_eq!(kind, ErrorKind::ValueValidation, "{message}");
            for part in [flag, value, allowed] {
                assert!(message.contains(part), "{args:?}: no {part} in: {message}");
            }
        }
    }

    #[test]
    fn reserve_must_leave_the_lowest_lane_a_thread() {
        let (kind, message) = error(&["--threads", "2", "--reserve", "2"]);
        assert_eq!(kind, ErrorKind::ValueValidation);
        assert!(message.contains("'2' for '--reserve"), "{message}");
        assert!(message.contains("fewer than the 2 threads"), "{message}");
        // The check runs after every flag is read, in either order.
        assert!(parse(&["--reserve", "3", "--threads", "3"]).is_err());
        assert_eq!(ok(&["--reserve", "2", "--threads", "3"]).reserve, Some(2));
    }

    #[test]
    fn malformed_command_lines_are_refused() {
        let (kind, message) = error(&["--jobs"]);
        assert_eq!(kind, ErrorKind::InvalidValue);
        assert!(message.contains("--jobs"), "{message}");
        let (kind, message) = error(&["--no-progress=yes"]);
        assert_eq!(kind, ErrorKind::TooManyValues);
        assert!(message.contains("--no-progress"), "{message}");
        let (kind, message) = error(&["--frobnicate"]);
        assert_eq!(kind, ErrorKind::UnknownArgument);
        assert!(message.contains("'--frobnicate'"), "{message}");
    }

    #[test]
    fn help_lists_every_flag_with_its_explanation_and_default() {
        for flag in ["-h", "--help"] {
            let (kind, help) = error(&[flag]);
            assert_eq!(kind, ErrorKind::DisplayHelp);
            for line in [
                "Floods a priority executor",
                "Usage: floodgate [OPTIONS]",
                "--jobs <N>",
                "Applications in the flood [default: 4000; with",
                "--arrive-over <SECS>",
                "[default: 0; with --serve, 20,",
                "Standard applications per priority one [default: 4]",
                "Microseconds each application takes [default: 2000]",
                "--picker <NAME>",
                "smooth | classic | strict",
                "--threads <N>",
                "--reserve <N>",
                "max_running",
                "--config <PATH>",
                "executors.toml",
                "--executor <NAME>",
                "[default: visa_priority_exec]",
                "--svg <PATH>",
                "[default: floodgate.svg]",
                "--json <PATH>",
                "--no-progress",
                "also off when stdout is not a",
                "--serve <ADDR>",
                "--token <TOKEN>",
            ] {
                assert!(help.contains(line), "{flag}: no {line:?} in:\n{help}");
            }
        }
    }
}
