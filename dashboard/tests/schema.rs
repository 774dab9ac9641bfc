//! The JSON snapshot's shape: every field, its type, and nothing else. A
//! field added, renamed or retyped fails here until this test (and the
//! page, and `SCHEMA_VERSION` for a change of meaning) follow.

mod support;

use priority_executor::{Capacity, Executor, LaneConfig, Priority};
use priority_executor_dashboard::{Actions, Dashboard, SCHEMA_VERSION};
use serde_json::Value;
use support::call;

#[derive(Clone, Copy, Debug)]
enum Kind {
    Bool,
    /// A whole number, at least 0.
    Count,
    /// Any number.
    Number,
    Text,
    Array,
    Object,
}

fn is(value: &Value, kind: Kind) -> bool {
    match kind {
        Kind::Bool => value.is_boolean(),
        Kind::Count => value.is_u64(),
        Kind::Number => value.is_number(),
        Kind::Text => value.is_string(),
        Kind::Array => value.is_array(),
        Kind::Object => value.is_object(),
    }
}

/// `object` has exactly the `fields`, each of its kind; `nullable` ones may
/// also be `null`.
fn check(what: &str, object: &Value, fields: &[(&str, Kind)], nullable: &[&str]) {
    let map = object
        .as_object()
        .unwrap_or_else(|| panic!("{what} is not an object"));
    let mut names: Vec<&str> = map.keys().map(String::as_str).collect();
    let mut expected: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    expected.sort_unstable();
    assert_eq!(names, expected, "the fields of {what}");
    for &(name, kind) in fields {
        let value = &map[name];
        let ok = is(value, kind) || (value.is_null() && nullable.contains(&name));
        assert!(ok, "{what}.{name} is {value}, expected {kind:?}");
    }
}

#[tokio::test]
async fn the_snapshot_has_every_field_with_its_type() {
    let exec = Executor::builder()
        .name("schema")
        .record_waits(true)
        .lane(Priority(10), Capacity::Unbounded)
        .lane_config(LaneConfig::new(Priority(1)).capacity(Capacity::Bounded(8)))
        .build()
        .unwrap();
    for _ in 0..5 {
        exec.enqueue(Priority(10), || ()).unwrap().join().unwrap();
    }
    exec.pause_lane(Priority(1)).unwrap();
    let _waiting = exec.enqueue(Priority(1), || ()).unwrap();
    let board = Dashboard::new()
        .executor(&exec)
        .actions(Actions::with_token("ops", "t"))
        .on_action(|_| {});
    let router = board.router();
    // One action, so the log has a record to check.
    let (status, _) = call(
        &router,
        "POST",
        "/api/executors/schema/lanes/10/resume",
        Some("t"),
    )
    .await;
    assert!(status.is_success());

    let (status, json) = call(&router, "GET", "/api/snapshot", None).await;
    assert!(status.is_success());
    use Kind::*;
    check(
        "snapshot",
        &json,
        &[
            ("version", Count),
            ("taken_at_ms", Count),
            ("window_secs", Number),
            ("actions_enabled", Bool),
            ("executors", Array),
            ("actions", Array),
        ],
        &[],
    );
    assert_eq!(json["version"], SCHEMA_VERSION);
    assert_eq!(json["actions_enabled"], true);
    let executor = &json["executors"][0];
    check(
        "executor",
        executor,
        &[
            ("name", Text),
            ("picker", Text),
            ("shut_down", Bool),
            ("threads", Object),
            ("lanes", Array),
        ],
        &[],
    );
    assert_eq!(executor["name"], "schema");
    assert_eq!(executor["picker"], "smooth");
    check(
        "threads",
        &executor["threads"],
        &[
            ("live", Count),
            ("busy", Count),
            ("idle", Count),
            ("sleeping", Count),
            ("peak", Count),
        ],
        &[],
    );
    let lane_fields = [
        ("priority", Count),
        ("weight", Count),
        ("capacity", Count),
        ("paused", Bool),
        ("queued", Count),
        ("running", Count),
        ("max_running", Count),
        ("submitted", Count),
        ("dispatched", Count),
        ("completed", Count),
        ("panicked", Count),
        ("rejected", Count),
        ("expired", Count),
        ("discarded", Count),
        ("retried", Count),
        ("dead_lettered", Count),
        ("cancelled", Count),
        ("handed_back", Count),
        ("dispatched_per_sec", Number),
        ("completed_per_sec", Number),
        ("share", Number),
        ("weight_share", Number),
        ("wait_p50_ms", Number),
        ("wait_p99_ms", Number),
    ];
    let nullable = [
        "capacity",
        "running",
        "max_running",
        "share",
        "wait_p50_ms",
        "wait_p99_ms",
    ];
    let lanes = executor["lanes"].as_array().unwrap();
    assert_eq!(lanes.len(), 2);
    for lane in lanes {
        check("lane", lane, &lane_fields, &nullable);
    }
    let (high, low) = (&lanes[0], &lanes[1]);
    assert_eq!(
        (high["priority"].as_u64(), low["priority"].as_u64()),
        (Some(10), Some(1))
    );
    assert_eq!(high["completed"], 5);
    assert!(high["capacity"].is_null());
    assert_eq!(low["capacity"], 8);
    assert_eq!(
        (low["paused"].as_bool(), low["queued"].as_u64()),
        (Some(true), Some(1))
    );
    // Waits are recorded: the high lane's jobs have a median.
    assert!(high["wait_p50_ms"].is_number());
    // 10:1 by default weights.
    let weight_share = high["weight_share"].as_f64().unwrap();
    assert!((weight_share - 10.0 / 11.0).abs() < 1e-9);

    let actions = json["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 1);
    check(
        "action",
        &actions[0],
        &[
            ("at_ms", Count),
            ("who", Text),
            ("from", Text),
            ("action", Text),
            ("executor", Text),
            ("priority", Count),
            ("outcome", Text),
        ],
        &["from"],
    );
    assert_eq!(actions[0]["who"], "ops");
    assert_eq!(actions[0]["outcome"], "ok");
    exec.resume_lane(Priority(1)).unwrap();
    exec.shutdown();
}
