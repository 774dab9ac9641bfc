use super::*;

fn names_the_nul_byte(message: &str) -> bool {
    message.to_lowercase().contains("nul")
}

/// `.name("bad\0name")`: refused by `build` with an error about the
/// NUL byte, or it works (a job runs, no phantom thread, the drop
/// returns).
#[test]
fn a_nul_byte_in_a_built_name() {
    let built = Executor::builder()
        .name("bad\0name")
        .core_threads(1)
        .max_threads(1)
        .lane(P, Capacity::Unbounded)
        .build();
    let exec = match built {
        Err(err) => {
            assert!(names_the_nul_byte(&err.to_string()), "unclear error: {err}");
            return;
        }
        Ok(exec) => Owned::new(exec),
    };
    let queued = catch_unwind(AssertUnwindSafe(|| exec.enqueue(P, || "ran")))
        .unwrap_or_else(|payload| {
            panic!(
                "build accepted the name, then enqueue panicked in the caller: {}",
                panic_text(payload.as_ref())
            )
        })
        .expect("accepted");
    let outcome = within("a job on the NUL-named executor", LIMIT, move || {
        queued.join()
    });
    assert_eq!(outcome, Ok("ran"));
    let threads = exec.metrics().threads;
    assert!(threads.live <= 1, "phantom threads: {threads:?}");
}

/// `[executors."a\u0000b"]`: refused at load with an error about the
/// NUL byte, or it works.
#[cfg(feature = "esb")]
#[test]
fn a_nul_byte_in_a_configured_name() {
    let toml = "[executors.\"a\\u0000b\"]\ncore_threads = 1\nmax_threads = 1\n\
                lanes = [{ priority = 1 }]\n";
    let executors = match Registry::from_toml_str(toml) {
        Err(err) => {
            assert!(names_the_nul_byte(&err.to_string()), "unclear error: {err}");
            return;
        }
        Ok(executors) => executors,
    };
    executors.register_sequence("noop", |_m: Message| Ok::<(), std::io::Error>(()));
    let executors = Owned::new(executors);
    let queued = catch_unwind(AssertUnwindSafe(|| {
        executors.enqueue_sequence("a\0b", "noop", Message::new())
    }))
    .unwrap_or_else(|payload| {
        panic!(
            "the file loaded, then enqueue_sequence panicked in the caller: {}",
            panic_text(payload.as_ref())
        )
    })
    .expect("accepted");
    let outcome = within("a sequence on the NUL-named executor", LIMIT, move || {
        queued.join()
    });
    assert!(matches!(outcome, Ok(Ok(()))), "got {outcome:?}");
}
