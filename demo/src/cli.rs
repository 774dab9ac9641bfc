//! The command line: its flags, their defaults and the usage text.

use std::path::PathBuf;
use std::time::Duration;

use priority_executor::Picker;

use crate::source::DEFAULT_EXECUTOR;

pub const USAGE: &str = "\
usage: floodgate [OPTIONS]

Floods a priority executor with standard and priority visa applications,
then runs the same flood on a plain FIFO pool for contrast.

options:
  --jobs N           applications in the flood (default 4000)
  --ratio N          standard applications per priority one (default 4)
  --work-us N        microseconds each application takes (default 2000)
  --picker NAME      smooth | classic | strict (default: the executor's own)
  --threads N        worker threads, for the executor (its core and max) and
                     for the FIFO pool (default: one per core)
  --reserve N        reserved workers: keep N threads for the higher lanes by
                     capping the lowest lane at threads - N running jobs
                     (max_running); default: no cap
  --config PATH      executors file (default: executors.toml at the repository
                     root if present, else a built-in visa_priority_exec:
                     lanes 10 and 1, unbounded)
  --executor NAME    executor to use from the file (default visa_priority_exec);
                     its lanes and picker are the file's, its threads --threads
  --svg PATH         where to write the chart (default floodgate.svg)
  --json PATH        also write the per-class results of both runs as JSON
  --no-progress      no progress bars (also off when stdout is not a terminal)
  -h, --help         this text";

#[derive(Debug)]
pub struct Options {
    pub jobs: usize,
    pub ratio: usize,
    pub work: Duration,
    pub picker: Option<Picker>,
    pub threads: usize,
    pub reserve: Option<usize>,
    pub config: Option<PathBuf>,
    pub executor: String,
    pub svg: PathBuf,
    pub json: Option<PathBuf>,
    pub progress: bool,
}

/// A command line that could not be understood: the message names the flag.
#[derive(Debug)]
pub struct UsageError(pub String);

pub enum Parsed {
    Run(Options),
    Help,
}

pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Parsed, UsageError> {
    let mut options = Options {
        jobs: 4000,
        ratio: 4,
        work: Duration::from_micros(2000),
        picker: None,
        threads: cores(),
        reserve: None,
        config: None,
        executor: DEFAULT_EXECUTOR.to_string(),
        svg: PathBuf::from("floodgate.svg"),
        json: None,
        progress: true,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // Both `--flag value` and `--flag=value`.
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_string(), Some(value.to_string()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<String, UsageError> {
            match inline.clone().or_else(|| args.next()) {
                Some(v) => Ok(v),
                None => Err(UsageError(format!("{flag} needs a value ({what})"))),
            }
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--jobs" => options.jobs = positive(&flag, &value("a whole number of applications")?)?,
            "--ratio" => {
                options.ratio = positive(&flag, &value("standard applications per priority one")?)?
            }
            "--work-us" => {
                let raw = value("microseconds")?;
                let us: u64 = raw.parse().map_err(|_| {
                    UsageError(format!(
                        "{flag}: '{raw}' is not a whole number of microseconds"
                    ))
                })?;
                options.work = Duration::from_micros(us);
            }
            "--picker" => {
                let raw = value("smooth, classic or strict")?;
                let picker = raw
                    .parse::<Picker>()
                    .map_err(|e| UsageError(format!("{flag}: {e}")))?;
                options.picker = Some(picker);
            }
            "--threads" => options.threads = positive(&flag, &value("a thread count")?)?,
            "--reserve" => options.reserve = Some(positive(&flag, &value("a thread count")?)?),
            "--config" => options.config = Some(PathBuf::from(value("a file path")?)),
            "--executor" => options.executor = value("an executor name")?,
            "--svg" => options.svg = PathBuf::from(value("a file path")?),
            "--json" => options.json = Some(PathBuf::from(value("a file path")?)),
            "--no-progress" if inline.is_none() => options.progress = false,
            "--no-progress" => {
                return Err(UsageError(format!("{flag} takes no value")));
            }
            _ => return Err(UsageError(format!("unknown argument '{arg}'"))),
        }
    }
    if let Some(reserve) = options.reserve
        && reserve >= options.threads
    {
        return Err(UsageError(format!(
            "--reserve: {reserve} must be fewer than the {} threads, or the lowest lane could never run",
            options.threads
        )));
    }
    Ok(Parsed::Run(options))
}

fn positive(flag: &str, raw: &str) -> Result<usize, UsageError> {
    match raw.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(UsageError(format!(
            "{flag}: '{raw}' is not a whole number greater than zero"
        ))),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Parsed, UsageError> {
        parse_args(args.iter().map(|a| a.to_string()))
    }

    fn error(args: &[&str]) -> String {
        match parse(args) {
            Err(UsageError(e)) => e,
            Ok(_) => panic!("{args:?} should be refused"),
        }
    }

    #[test]
    fn flags_and_defaults() {
        let Ok(Parsed::Run(o)) = parse(&[
            "--jobs",
            "10",
            "--ratio=3",
            "--picker",
            "strict",
            "--no-progress",
        ]) else {
            panic!("valid flags refused");
        };
        assert_eq!(
            (o.jobs, o.ratio, o.picker, o.progress),
            (10, 3, Some(Picker::Strict), false)
        );
        assert_eq!(o.work, Duration::from_micros(2000));
        assert_eq!(o.executor, DEFAULT_EXECUTOR);
        assert_eq!(o.json, None);
        assert!(matches!(parse(&["-h"]), Ok(Parsed::Help)));
        match parse(&["--json", "out/r.json"]) {
            Ok(Parsed::Run(o)) => assert_eq!(o.json, Some(PathBuf::from("out/r.json"))),
            _ => panic!("--json refused"),
        }
    }

    #[test]
    fn usage_errors_name_the_flag_and_value() {
        assert!(error(&["--jobs"]).starts_with("--jobs needs a value"));
        assert!(error(&["--jobs", "0"]).contains("--jobs: '0'"));
        assert!(error(&["--ratio", "x"]).contains("--ratio: 'x'"));
        assert!(error(&["--work-us", "-5"]).contains("--work-us: '-5'"));
        assert!(error(&["--picker", "fair"]).contains("--picker"));
        assert!(error(&["--no-progress=yes"]).contains("--no-progress takes no value"));
        assert!(error(&["--frobnicate"]).contains("'--frobnicate'"));
    }

    #[test]
    fn reserve_must_leave_the_lowest_lane_a_thread() {
        assert!(error(&["--threads", "2", "--reserve", "2"]).contains("--reserve"));
        assert!(error(&["--reserve", "0"]).contains("--reserve"));
        match parse(&["--threads", "4", "--reserve", "1"]) {
            Ok(Parsed::Run(o)) => assert_eq!(o.reserve, Some(1)),
            Ok(Parsed::Help) => panic!("parsed as --help"),
            Err(UsageError(e)) => panic!("{e}"),
        }
    }
}
