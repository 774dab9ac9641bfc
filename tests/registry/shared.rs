//! A registry shared as `Arc<Registry>`: any holder shuts it down through
//! `&self`, and a name that is not there is an error listing those that
//! are.

use priority_executor::{Message, Priority, Registry};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const FILE: &str = "
[executors.thumbs]
lanes = [{ priority = 10 }, { priority = 1 }]

[executors.mail]
lanes = [{ priority = 1 }]
";

#[test]
fn a_shared_registry_is_shut_down_by_any_holder_after_running_what_it_accepted() {
    let executors = Arc::new(Registry::from_toml_str(FILE).expect("valid file"));
    let ran = Arc::new(AtomicUsize::new(0));
    {
        let ran = ran.clone();
        executors.register_sequence("count", move |_m: Message| {
            ran.fetch_add(1, Ordering::SeqCst);
            Ok::<(), std::io::Error>(())
        });
    }
    for _ in 0..50 {
        let _detached = executors
            .enqueue_sequence("thumbs", "count", Message::new())
            .expect("accepted");
    }
    let holder = Arc::clone(&executors);
    std::thread::spawn(move || holder.shutdown())
        .join()
        .expect("shutdown does not panic");
    assert_eq!(ran.load(Ordering::SeqCst), 50, "accepted jobs ran first");
    let thumbs = executors.get("thumbs").expect("still listed");
    assert!(thumbs.is_shut_down());
    assert!(
        thumbs.enqueue(Priority(10), || ()).is_err(),
        "refused after"
    );
    drop(thumbs);
    // Again: nothing more to do.
    executors.shutdown();
}

#[test]
fn an_unknown_executor_is_an_error_naming_those_there_are() {
    let executors = Registry::from_toml_str(FILE).expect("valid file");
    let err = executors.get("thumb").expect_err("no such executor");
    assert_eq!(err.name, "thumb");
    assert_eq!(err.known, ["mail", "thumbs"]);
    assert_eq!(
        err.to_string(),
        "no executor named \"thumb\" (executors: mail, thumbs)"
    );
}
