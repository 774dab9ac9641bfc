//! What the code adds to the file's executors (`Registry::builder`):
//! builder settings per executor, which executors start, both kept by
//! reloads; names the file lacks are load errors that list what it has.

use crate::temp_file;
use priority_executor::{ConfigErrorKind, ExecutorBuilder, Priority, Registry};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

const FILE: &str = "
[executors.thumbs]
core_threads = 1
max_threads = 1
lanes = [{ priority = 10 }, { priority = 1 }]

[executors.reports]
lanes = [{ priority = 1 }]
";

/// A configure function that names the threads and counts the jobs run.
fn named_and_counted(
    count: Arc<AtomicUsize>,
) -> impl Fn(ExecutorBuilder) -> ExecutorBuilder + Send + Sync {
    move |builder| {
        let count = Arc::clone(&count);
        builder
            .thread_name(|id| format!("thumb-worker-{id}"))
            .after_execute(move |_, _| {
                count.fetch_add(1, Ordering::SeqCst);
            })
    }
}

fn thread_name_on(executors: &Registry, name: &str) -> String {
    let (tx, rx) = mpsc::channel();
    executors
        .get(name)
        .unwrap()
        .enqueue(Priority(1), move || {
            tx.send(std::thread::current().name().map(str::to_owned))
                .unwrap();
        })
        .unwrap()
        .join()
        .unwrap();
    rx.recv().unwrap().unwrap()
}

#[test]
fn a_file_executor_gets_the_hooks_of_its_configure_function() {
    let ran = Arc::new(AtomicUsize::new(0));
    let executors = Registry::builder()
        .configure("thumbs", named_and_counted(Arc::clone(&ran)))
        .load_toml_str(FILE)
        .unwrap();
    assert_eq!(executors.names(), ["reports", "thumbs"]);
    assert!(thread_name_on(&executors, "thumbs").starts_with("thumb-worker-"));
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    // The file's settings stay under what the function sets.
    let thumbs = executors.get("thumbs").unwrap();
    assert_eq!(
        thumbs
            .config()
            .lanes
            .iter()
            .map(|l| l.priority)
            .collect::<Vec<_>>(),
        [Priority(10), Priority(1)]
    );
    assert_eq!(thumbs.config().max_threads, 1);
    drop(thumbs);
    // The other executor is untouched.
    assert!(thread_name_on(&executors, "reports").starts_with("reports-"));
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    executors.shutdown();
}

#[test]
fn only_the_executors_named_start() {
    let executors = Registry::builder()
        .only(["reports"])
        .load_toml_str(FILE)
        .unwrap();
    assert_eq!(executors.names(), ["reports"]);
    let err = executors.get("thumbs").unwrap_err();
    assert_eq!(
        err.to_string(),
        "no executor named \"thumbs\" (executors: reports)"
    );
    // Names add up across calls.
    let both = Registry::builder()
        .only(["reports"])
        .only(vec![String::from("thumbs")])
        .load_toml_str(FILE)
        .unwrap();
    assert_eq!(both.names(), ["reports", "thumbs"]);
}

#[test]
fn a_name_the_file_lacks_is_an_error_listing_the_names_it_has() {
    let path = temp_file("builder-missing-name", FILE);
    for builder in [
        Registry::builder().only(["thumb"]),
        Registry::builder().configure("thumb", |b| b),
    ] {
        let err = builder.load(&path).unwrap_err();
        assert_eq!(err.kind(), ConfigErrorKind::MissingKey);
        assert_eq!(err.executor(), Some("thumb"));
        assert_eq!(
            err.to_string(),
            format!(
                "{}: no [executors.thumb] section (defined: \"reports\", \"thumbs\")",
                path.display()
            )
        );
    }
}

#[test]
fn a_reload_configures_again_what_it_replaces_and_starts_only_the_named() {
    let ran = Arc::new(AtomicUsize::new(0));
    let executors = Registry::builder()
        .configure("thumbs", named_and_counted(Arc::clone(&ran)))
        .only(["thumbs"])
        .load_toml_str(FILE)
        .unwrap();
    // A lane change replaces `thumbs`; a new executor is not named.
    let edited = "
[executors.thumbs]
lanes = [{ priority = 10, weight = 4 }, { priority = 1 }]

[executors.reports]
lanes = [{ priority = 1 }]

[executors.audit]
lanes = [{ priority = 1 }]
";
    let reload = executors.reload_toml_str(edited).unwrap();
    assert_eq!(reload.replaced, ["thumbs"]);
    assert!(reload.added.is_empty());
    reload.wait();
    assert_eq!(executors.names(), ["thumbs"]);
    assert!(thread_name_on(&executors, "thumbs").starts_with("thumb-worker-"));
    assert_eq!(ran.load(Ordering::SeqCst), 1);

    // A file without a named executor is refused; nothing changes.
    let err = executors
        .reload_toml_str("[executors.reports]\nlanes = [{ priority = 1 }]\n")
        .unwrap_err();
    assert_eq!(err.executor(), Some("thumbs"));
    assert_eq!(executors.names(), ["thumbs"]);
    assert!(thread_name_on(&executors, "thumbs").starts_with("thumb-worker-"));
    executors.shutdown();
}

#[test]
fn a_configure_function_that_panics_reaches_the_caller_and_changes_nothing() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let executors = Registry::builder()
        .configure("thumbs", move |builder| {
            if counted.fetch_add(1, Ordering::SeqCst) > 0 {
                panic!("configure: deliberate panic");
            }
            builder
        })
        .load_toml_str(FILE)
        .unwrap();
    let edited = FILE.replace("priority = 10 }", "priority = 10, weight = 4 }");
    let panicked = catch_unwind(AssertUnwindSafe(|| executors.reload_toml_str(&edited)));
    assert!(panicked.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // The registry is as it was, and still takes reloads and jobs.
    let thumbs = executors.get("thumbs").unwrap();
    assert_eq!(thumbs.config().lanes[0].weight, 10);
    drop(thumbs);
    assert!(thread_name_on(&executors, "thumbs").starts_with("thumbs-"));
    executors.shutdown();
}

#[test]
fn a_reload_of_thread_settings_alone_keeps_what_configure_sets() {
    let executors = Registry::builder()
        .configure("a", |b| b.core_threads(3).max_threads(3))
        .load_toml_str("[executors.a]\ncore_threads = 1\nlanes = [{ priority = 1 }]\n")
        .unwrap();
    let a = executors.get("a").unwrap();
    let threads = |a: &priority_executor::Executor| {
        let config = a.config();
        (config.core_threads, config.max_threads, config.keep_alive)
    };
    let (core, max, _) = threads(&a);
    assert_eq!((core, max), (3, 3));

    // Only the keep-alive changes: taken in place, the configured threads
    // stay.
    let reload = executors
        .reload_toml_str(
            "[executors.a]\ncore_threads = 1\nkeep_alive = \"5s\"\nlanes = [{ priority = 1 }]\n",
        )
        .unwrap();
    assert_eq!(reload.resized, ["a"]);
    assert_eq!(threads(&a), (3, 3, Duration::from_secs(5)));

    // The settings judged are the configured ones: core above max in the
    // file alone is overridden, so the reload is taken.
    let reload = executors
        .reload_toml_str(
            "[executors.a]\ncore_threads = 4\nmax_threads = 2\nlanes = [{ priority = 1 }]\n",
        )
        .unwrap();
    assert_eq!(reload.resized, ["a"]);
    assert_eq!(threads(&a), (3, 3, Duration::from_secs(60)));
    assert_eq!(executors.get("a").unwrap().config().max_threads, 3);
    drop(a);
    executors.shutdown();
}

#[test]
fn a_reload_of_thread_settings_alone_refuses_what_configure_makes_invalid() {
    let executors = Registry::builder()
        .configure("a", |b| b.max_threads(2))
        .load_toml_str("[executors.a]\ncore_threads = 1\nlanes = [{ priority = 1 }]\n")
        .unwrap();
    let a = executors.get("a").unwrap();
    assert_eq!((a.config().core_threads, a.config().max_threads), (1, 2));
    // Three core threads are more than the two the code allows.
    let err = executors
        .reload_toml_str("[executors.a]\ncore_threads = 3\nlanes = [{ priority = 1 }]\n")
        .unwrap_err();
    assert_eq!(err.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!(
        (err.executor(), err.field()),
        (Some("a"), Some("core_threads"))
    );
    assert_eq!((a.config().core_threads, a.config().max_threads), (1, 2));
    drop(a);
    executors.shutdown();
}
