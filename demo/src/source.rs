//! Where the executor under test comes from: `--config`, else the
//! repository's `executors.toml`, else a built-in one, with the command
//! line's threads, picker and reserved workers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use priority_executor::{Capacity, Executor, LaneConfig, MaxRunning, Picker, Priority, Registry};

use crate::cli::{DEFAULT_EXECUTOR, Options};

/// The built-in `visa_priority_exec`: the seed's two lanes, priority 10 and
/// 1, on `threads` threads. The lanes are unbounded
/// so the whole backlog is queued at once, as it is in the seed.
fn default_executor(
    picker: Option<Picker>,
    threads: usize,
    reserve: Option<usize>,
) -> Result<Executor, String> {
    let mut low = LaneConfig::new(Priority(1));
    if let Some(reserve) = reserve {
        low = low.max_running(MaxRunning::Threads(threads - reserve));
    }
    Executor::builder()
        .name(DEFAULT_EXECUTOR)
        .core_threads(threads)
        .max_threads(threads)
        .keep_alive(Duration::from_secs(5))
        .picker(picker.unwrap_or_default())
        .lane(Priority(10), Capacity::Unbounded)
        .lane_config(low)
        .record_waits(true)
        .build()
        .map_err(|e| format!("built-in executor {DEFAULT_EXECUTOR}: {e}"))
}

/// The executor the flood goes to, and what owns it.
pub enum Source {
    BuiltIn(Executor),
    File { executors: Registry, name: String },
}

impl Source {
    /// A clone of the executor the flood goes to.
    pub fn executor(&self) -> Executor {
        match self {
            Source::BuiltIn(executor) => executor.clone(),
            Source::File { executors, name } => executors
                .get(name)
                .expect("the name was looked up when the file was loaded"),
        }
    }

    pub fn shutdown(self) {
        match self {
            Source::BuiltIn(executor) => executor.shutdown(),
            Source::File { executors, .. } => executors.shutdown(),
        }
    }
}

/// `--config PATH`, else `executors.toml` at the repository root if there is
/// one, else the built-in executor. Returns the executor and where it came
/// from.
pub fn executor_for(options: &Options) -> Result<(Source, String), String> {
    let file = match &options.config {
        Some(path) => Some(path.clone()),
        None => Some(repository_config()).filter(|path| path.is_file()),
    };
    let Some(path) = file else {
        if options.executor != DEFAULT_EXECUTOR {
            return Err(format!(
                "--executor: no executor named '{}' (no executors file; built-in: {DEFAULT_EXECUTOR})",
                options.executor
            ));
        }
        return Ok((
            Source::BuiltIn(default_executor(
                options.picker,
                options.threads,
                options.reserve,
            )?),
            "built-in".to_string(),
        ));
    };
    let executors = Registry::from_path(&path).map_err(|e| e.to_string())?;
    if executors.get(&options.executor).is_err() {
        let names = executors.names();
        let message = format!(
            "--executor: {} has no executor named '{}' (it has: {})",
            path.display(),
            options.executor,
            names.join(", ")
        );
        executors.shutdown();
        return Err(message);
    }
    // The file is valid as it stands; run its executor with the thread
    // count (and picker) of the command line, so the flood meets a pool
    // that is busy, as after a holiday, and the FIFO pool gets as many.
    executors.shutdown();
    let executors = with_overrides(
        &path,
        &options.executor,
        options.picker,
        options.threads,
        options.reserve,
    )?;
    Ok((
        Source::File {
            executors,
            name: options.executor.clone(),
        },
        path.display().to_string(),
    ))
}

/// `executors.toml` at the repository root: the demo's package is the
/// folder `demo/` in it.
fn repository_config() -> PathBuf {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR"));
    demo.parent().unwrap_or(demo).join("executors.toml")
}

/// The executors file at `path` with executor `name` set to `threads`
/// threads (core and max) and, if given, `picker`.
fn with_overrides(
    path: &Path,
    name: &str,
    picker: Option<Picker>,
    threads: usize,
    reserve: Option<usize>,
) -> Result<Registry, String> {
    let at = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{at}: {e}"))?;
    let mut doc: toml::Table = text.parse().map_err(|e| format!("{at}: {e}"))?;
    let table = doc
        .get_mut("executors")
        .and_then(|e| e.get_mut(name))
        .and_then(toml::Value::as_table_mut)
        .ok_or_else(|| format!("{at}: no table [executors.{name}]"))?;
    let threads =
        i64::try_from(threads).map_err(|_| format!("--threads: {threads} is too many"))?;
    table.insert("core_threads".into(), toml::Value::Integer(threads));
    table.insert("max_threads".into(), toml::Value::Integer(threads));
    if let Some(picker) = picker {
        table.insert("picker".into(), toml::Value::String(picker.as_str().into()));
    }
    if let Some(reserve) = reserve {
        // Cap the lowest lane so `reserve` threads stay for the others.
        let cap = threads - i64::try_from(reserve).unwrap_or(threads);
        let lowest = table
            .get_mut("lanes")
            .and_then(toml::Value::as_array_mut)
            .and_then(|lanes| {
                lanes.iter_mut().min_by_key(|lane| {
                    lane.get("priority")
                        .and_then(toml::Value::as_integer)
                        .unwrap_or(i64::MAX)
                })
            })
            .and_then(toml::Value::as_table_mut)
            .ok_or_else(|| format!("{at}: executor {name} has no lanes to cap"))?;
        lowest.insert("max_running".into(), toml::Value::Integer(cap));
    }
    // Waits recorded per lane, for the dashboard's wait percentiles.
    Registry::builder()
        .configure(name, |builder| builder.record_waits(true))
        .load_toml_str(&doc.to_string())
        .map_err(|e| format!("{at} with the command line's threads and picker: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_sets_the_files_picker_and_threads() {
        let path = repository_config();
        let executors =
            match with_overrides(&path, DEFAULT_EXECUTOR, Some(Picker::Classic), 3, Some(1)) {
                Ok(executors) => executors,
                Err(e) => panic!("{e}"),
            };
        let executor = executors.get(DEFAULT_EXECUTOR).expect("the visa executor");
        let config = executor.config();
        assert_eq!(config.picker, Picker::Classic);
        let priorities: Vec<Priority> = config.lanes.iter().map(|lane| lane.priority).collect();
        assert_eq!(priorities, [Priority(10), Priority(1)]);
        // --reserve 1 on 3 threads caps the lowest lane at 2 running jobs.
        let metrics = executor.metrics();
        assert_eq!(
            metrics.lane(Priority(1)).and_then(|l| l.max_running),
            Some(2)
        );
        assert_eq!(metrics.lane(Priority(10)).and_then(|l| l.max_running), None);
        drop(executor);
        executors.shutdown();
        let err = with_overrides(&path, "nope", None, 2, None)
            .err()
            .unwrap_or_default();
        assert!(err.contains("no table [executors.nope]"), "{err}");
    }
}
