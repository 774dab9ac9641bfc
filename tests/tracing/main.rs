//! Feature `tracing`: each attempt of a job runs in its own span, whose
//! parent is the span that was current at `enqueue`.
//!
//! A small layer records every span's name, fields and parent. Workers are
//! threads of their own, so the subscriber is the global default, set once
//! for this binary; each test finds its spans by the executor's name.

use priority_executor::{Capacity, Executor, Priority, RetryPolicy};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Span, Subscriber, info_span};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::{LookupSpan, Registry};

/// A span as the layer saw it.
#[derive(Clone, Debug)]
struct Seen {
    name: &'static str,
    parent: Option<Id>,
    fields: HashMap<&'static str, String>,
}

#[derive(Clone, Default)]
struct Spans(Arc<Mutex<HashMap<Id, Seen>>>);

struct Fields<'a>(&'a mut HashMap<&'static str, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        // The registry resolves the parent: explicit, or the current span.
        let parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.id());
        let mut fields = HashMap::new();
        attrs.record(&mut Fields(&mut fields));
        let seen = Seen {
            name: attrs.metadata().name(),
            parent,
            fields,
        };
        self.0.lock().unwrap().insert(id.clone(), seen);
    }

    fn on_enter(&self, id: &Id, _ctx: Context<'_, S>) {
        self.panic_if_told(id, "entering");
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        self.panic_if_told(id, "leaving");
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        self.panic_if_told(&id, "closing");
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        if let Some(seen) = self.0.lock().unwrap().get_mut(id) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }
}

/// The recording layer, installed as the global subscriber on first use.
fn spans() -> &'static Spans {
    static SPANS: OnceLock<Spans> = OnceLock::new();
    SPANS.get_or_init(|| {
        let spans = Spans::default();
        tracing::subscriber::set_global_default(Registry::default().with(spans.clone()))
            .expect("the only subscriber of this binary");
        spans
    })
}

/// Spans whose `executor` or `stage` field starts with this make the layer
/// panic, as a subscriber with a bug would; a `close` field that does,
/// only when the span closes.
const PANICKY: &str = "panicky";

impl Spans {
    fn get(&self, id: &Id) -> Seen {
        self.0.lock().unwrap()[id].clone()
    }

    fn panic_if_told(&self, id: &Id, what: &'static str) {
        // A span whose `close` field names it panics only as it closes.
        let fields: &[&str] = if what == "closing" {
            &["executor", "stage", "close"]
        } else {
            &["executor", "stage"]
        };
        let told = self.0.lock().unwrap().get(id).and_then(|seen| {
            fields
                .iter()
                .filter_map(|field| seen.fields.get(field))
                .find(|name| name.starts_with(PANICKY))
                .cloned()
        });
        if let Some(name) = told {
            // Counted first, so a test sees the panic happened. Not under
            // the map's lock: the other tests go on using it.
            *PANICS.lock().unwrap().entry((name, what)).or_default() += 1;
            panic!("the subscriber panics {what} a span");
        }
    }
}

/// The layer's panics so far, by the span's executor or stage and what the
/// layer was doing ("entering", "leaving", "closing").
static PANICS: Mutex<BTreeMap<(String, &'static str), usize>> = Mutex::new(BTreeMap::new());

fn panics(name: &str, what: &'static str) -> usize {
    PANICS
        .lock()
        .unwrap()
        .get(&(name.to_owned(), what))
        .copied()
        .unwrap_or(0)
}

fn executor(name: &str) -> Executor {
    Executor::builder()
        .name(name)
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap()
}

#[test]
fn a_job_runs_in_a_span_whose_parent_is_the_span_at_enqueue() {
    let spans = spans();
    let exec = executor("traced");
    // Each job returns the span it ran in: holding it keeps its id from
    // being reused by another span before the test reads it.
    let request = info_span!("request", id = 7);
    let request_id = request.id().unwrap();
    let handle = request
        .in_scope(|| exec.enqueue(Priority(10), Span::current))
        .unwrap();
    // The request's span may be gone before its job runs: the job holds
    // it until then.
    drop(request);
    let job = handle.join().unwrap();
    exec.shutdown();

    let seen = spans.get(&job.id().expect("the job ran in a span"));
    assert_eq!(seen.name, "job");
    assert_eq!(seen.parent, Some(request_id));
    assert_eq!(seen.fields["executor"], "traced");
    assert_eq!(seen.fields["priority"], "10");
    assert_eq!(seen.fields["attempt"], "1");
    let wait: u64 = seen.fields["wait_ns"].parse().unwrap();
    assert!(wait < 60_000_000_000);
}

#[test]
fn each_retry_runs_in_a_span_of_its_own() {
    let spans = spans();
    let exec = executor("traced-retries");
    let runs = Arc::new(Mutex::new(Vec::new()));
    let seen = runs.clone();
    let request = info_span!("retried request");
    let handle = request
        .in_scope(|| {
            exec.enqueue_retrying(
                Priority(1),
                move |attempt| {
                    seen.lock().unwrap().push(Span::current());
                    if attempt.number < 3 {
                        Err("not yet")
                    } else {
                        Ok(attempt.number)
                    }
                },
                RetryPolicy::new(5),
            )
        })
        .unwrap();
    assert_eq!(handle.join(), Ok(3));
    exec.shutdown();

    let runs: Vec<Id> = runs
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.id().unwrap())
        .collect();
    assert_eq!(runs.len(), 3);
    for (n, id) in runs.iter().enumerate() {
        let job = spans.get(id);
        assert_eq!(job.parent, request.id(), "attempt {}", n + 1);
        assert_eq!(job.fields["attempt"], (n + 1).to_string());
        assert_eq!(job.fields["executor"], "traced-retries");
    }
    assert!(runs[0] != runs[1] && runs[1] != runs[2]);
}

#[test]
fn a_job_enqueued_outside_any_span_gets_a_root_span() {
    let spans = spans();
    let exec = executor("traced-root");
    let handle = exec.enqueue(Priority(1), Span::current).unwrap();
    let job = handle.join().unwrap();
    exec.shutdown();
    let seen = spans.get(&job.id().expect("the job ran in a span"));
    assert_eq!((seen.name, seen.parent), ("job", None));
}

#[cfg(feature = "esb")]
#[test]
fn a_sequence_names_itself_in_its_span() {
    use priority_executor::{Message, Registry};

    let spans = spans();
    let executors =
        Registry::from_toml_str("[executors.traced-esb]\nlanes = [{ priority = 1 }]\n").unwrap();
    let ran_in = Arc::new(Mutex::new(None));
    let seen = ran_in.clone();
    executors.register_sequence("submit-visa", move |_m: Message| {
        *seen.lock().unwrap() = Some(Span::current());
        Ok::<(), std::io::Error>(())
    });
    let request = info_span!("esb request");
    let handle = request
        .in_scope(|| executors.enqueue_sequence("traced-esb", "submit-visa", Message::new()))
        .unwrap();
    assert!(handle.join().unwrap().is_ok());
    executors.shutdown();

    let ran_in = ran_in.lock().unwrap().clone().expect("the sequence ran");
    let job = spans.get(&ran_in.id().expect("in a span"));
    assert_eq!(job.parent, request.id());
    assert_eq!(job.fields["sequence"], "submit-visa");
    assert_eq!(job.fields["executor"], "traced-esb");
}

#[cfg(feature = "actor")]
#[test]
fn an_actor_stage_performs_in_spans_naming_the_stage_and_the_message_priority() {
    use priority_executor::SendOptions;
    use priority_executor::actor::{Actor, ActorError, Outbox, Reason, Stage};

    /// Keeps the span each perform ran in; `fail` fails its first attempt.
    struct Recorder(Arc<Mutex<Vec<(u32, Span)>>>);
    impl Actor for Recorder {
        type In = u32;
        type Out = ();
        fn perform(&mut self, n: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
            let mut ran = self.0.lock().unwrap();
            let first = !ran.iter().any(|(m, _)| *m == n);
            ran.push((n, Span::current()));
            if n == 2 && first {
                return Err("first attempt fails".into());
            }
            Ok(())
        }
    }

    let spans = spans();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let log = ran.clone();
    let stage = Stage::builder("traced-stage", move |_| Recorder(log.clone()))
        .retry(RetryPolicy::new(1))
        .spawn()
        .unwrap();
    let addr = stage.addr();
    addr.send_with(1, SendOptions::new().priority(Priority::URGENT))
        .unwrap();
    addr.send_with(2, SendOptions::new().priority(Priority::LOW))
        .unwrap();
    assert_eq!(stage.drain().reason, Reason::Drained);

    let ran = ran.lock().unwrap();
    let seen: Vec<(u32, Seen)> = ran
        .iter()
        .map(|(n, span)| (*n, spans.get(&span.id().expect("performed in a span"))))
        .collect();
    let fields = |s: &Seen, key: &str| s.fields.get(key).cloned().unwrap_or_default();
    let summary: Vec<(u32, &str, String, String, String, String)> = seen
        .iter()
        .map(|(n, s)| {
            (
                *n,
                s.name,
                fields(s, "stage"),
                fields(s, "priority"),
                fields(s, "instance"),
                fields(s, "attempt"),
            )
        })
        .collect();
    let row = |n, priority: u32, attempt: u32| {
        (
            n,
            "perform",
            "traced-stage".to_owned(),
            priority.to_string(),
            "0".to_owned(),
            attempt.to_string(),
        )
    };
    assert_eq!(
        summary,
        [row(1, 400, 1), row(2, 100, 1), row(2, 100, 2)],
        "one span per attempt, each naming the stage and the message's priority"
    );
    // Each perform's parent is the instance's job, which names the stage
    // as its executor.
    for (_, s) in &seen {
        let parent = spans.get(s.parent.as_ref().expect("a parent span"));
        assert_eq!(
            (parent.name, parent.fields["executor"].as_str()),
            ("job", "traced-stage")
        );
    }
}

/// The subscriber is the application's code: its panics while entering,
/// leaving or closing an attempt's span cost the subscriber those calls,
/// not the job, the worker or the letter.
#[test]
fn a_subscriber_that_panics_around_the_spans_loses_no_job() {
    spans();
    let name = "panicky-pool";
    let exec = executor(name);
    let handles: Vec<_> = (0..3)
        .map(|n| exec.enqueue(Priority(10), move || n * 2).unwrap())
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
    assert_eq!(results, [Ok(0), Ok(2), Ok(4)]);
    // The worker that ran them is still there.
    assert_eq!(exec.enqueue(Priority(1), || 7).unwrap().join(), Ok(7));
    exec.shutdown();
    for what in ["entering", "leaving", "closing"] {
        assert!(panics(name, what) >= 3, "the layer panicked {what}");
    }
}

/// A job whose request span is gone holds the last reference to it: the
/// attempt's span closing must not close it in the middle of the panic of
/// that close (tracing's registry releases the parent while it unwinds,
/// and a second panic there would abort).
#[test]
fn a_parent_span_closed_after_its_job_by_a_panicking_subscriber_loses_nothing() {
    spans();
    let name = "panicky-parent";
    let exec = executor(name);
    let (ran, runs) = std::sync::mpsc::channel();
    for n in 0..3 {
        let request = info_span!("request", close = name);
        let (go, gate) = std::sync::mpsc::channel::<()>();
        let ran = ran.clone();
        let job = move || {
            // Until the request's code has let its span go: the job then
            // holds the last reference to it.
            gate.recv().unwrap();
            ran.send(n).unwrap();
        };
        // The handle dropped: the job's cell, with its parent, goes as
        // soon as the job has run, inside the attempt.
        drop(request.in_scope(|| exec.enqueue(Priority(10), job)));
        drop(request);
        go.send(()).unwrap();
        assert_eq!(runs.recv().unwrap(), n);
    }
    assert_eq!(exec.enqueue(Priority(1), || 7).unwrap().join(), Ok(7));
    exec.shutdown();
    assert!(
        panics(name, "closing") >= 6,
        "the layer panicked closing both spans"
    );
}

#[cfg(feature = "actor")]
#[test]
fn a_subscriber_that_panics_around_a_perform_loses_no_letter() {
    use priority_executor::actor::{Actor, ActorError, Outbox, Reason, Stage};
    use std::sync::atomic::{AtomicU32, Ordering};

    struct Count(Arc<AtomicU32>);
    impl Actor for Count {
        type In = u32;
        type Out = ();
        fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    spans();
    let name = "panicky-stage";
    let performed = Arc::new(AtomicU32::new(0));
    let count = performed.clone();
    let stage = Stage::builder(name, move |_| Count(count.clone()))
        .spawn()
        .unwrap();
    for n in 0..3 {
        stage.addr().send(n).unwrap();
    }
    let report = stage.drain();
    assert_eq!(report.reason, Reason::Drained);
    assert_eq!(performed.load(Ordering::SeqCst), 3);
    for what in ["entering", "leaving", "closing"] {
        assert!(panics(name, what) >= 3, "the layer panicked {what}");
    }
}
