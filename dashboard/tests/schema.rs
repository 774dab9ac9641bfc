//! The JSON snapshot's shape: every field, its type, and nothing else. A
//! field added, renamed or retyped fails here until this test (and the
//! page, and `SCHEMA_VERSION` for a change of meaning) follow.

mod support;

use priority_executor::{Capacity, Executor, LaneConfig, Priority};
use priority_executor_dashboard::{Actions, Dashboard, SCHEMA_VERSION};
use serde_json::Value;
use support::call;
use support::shape::{Kind, check};

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
            ("period_ms", Count),
            ("actions_enabled", Bool),
            ("executors", Array),
            ("pipelines", Array),
            ("bridges", Array),
            ("actions", Array),
        ],
        &[],
    );
    assert_eq!(json["version"], SCHEMA_VERSION);
    assert_eq!(json["period_ms"], 1000, "the default period");
    assert_eq!(json["bridges"], serde_json::json!([]), "no bridge added");
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
        ("wait_p50_ms_window", Number),
        ("wait_p99_ms_window", Number),
    ];
    let nullable = [
        "capacity",
        "running",
        "max_running",
        "share",
        "wait_p50_ms",
        "wait_p99_ms",
        "wait_p50_ms_window",
        "wait_p99_ms_window",
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
            ("pipeline", Text),
            ("outcome", Text),
        ],
        &["from", "pipeline"],
    );
    assert_eq!(actions[0]["who"], "ops");
    assert!(actions[0]["pipeline"].is_null(), "a lane's action");
    assert_eq!(actions[0]["outcome"], "ok");
    exec.resume_lane(Priority(1)).unwrap();
    exec.shutdown();
}

/// The lanes' wait percentiles over the window are those of the waits
/// since the previous look, not since start: waits recorded in one lane,
/// a look, then waits in the other lane only, and a second look.
#[tokio::test]
async fn the_window_waits_are_those_since_the_previous_look() {
    let exec = Executor::builder()
        .name("window")
        .record_waits(true)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let run = |priority: u32, n: usize| {
        for _ in 0..n {
            exec.enqueue(Priority(priority), || ())
                .unwrap()
                .join()
                .unwrap();
        }
    };
    let router = Dashboard::new().executor(&exec).router();
    let lane = |json: &Value, i: usize| json["executors"][0]["lanes"][i].clone();

    run(10, 20);
    let (_, first) = call(&router, "GET", "/api/snapshot", None).await;
    let high = lane(&first, 0);
    assert!(high["wait_p50_ms"].is_number(), "waits since start");
    assert!(
        high["wait_p50_ms_window"].is_null(),
        "a first look has no window: {high}"
    );

    run(1, 20);
    let (_, second) = call(&router, "GET", "/api/snapshot", None).await;
    let (high, low) = (lane(&second, 0), lane(&second, 1));
    // The high lane's waits all came before the first look.
    assert!(high["wait_p50_ms"].is_number());
    assert!(high["wait_p50_ms_window"].is_null(), "{high}");
    assert!(high["wait_p99_ms_window"].is_null(), "{high}");
    // The low lane's all came after it: the window holds every one.
    assert!(low["wait_p50_ms_window"].is_number(), "{low}");
    assert_eq!(low["wait_p50_ms_window"], low["wait_p50_ms"]);
    assert_eq!(low["wait_p99_ms_window"], low["wait_p99_ms"]);
    exec.shutdown();
}

/// A pipeline's part of the snapshot: its stages in order, each with its
/// counters, mailbox lanes, and the latest faults and dead letters.
#[cfg(feature = "actor")]
#[tokio::test]
async fn the_pipelines_have_every_field_with_their_type() {
    use priority_executor::SendOptions;
    use priority_executor::actor::{Pipeline, Reason, Stage};
    use support::stages::{HOLD, Pass, gated};

    let (first, gate) = gated("parse");
    let pipeline = Pipeline::builder(first)
        .then(Stage::builder("store", |_| Pass).instances(2))
        .spawn()
        .unwrap();
    let router = Dashboard::new().pipeline(&pipeline).router();
    let addr = pipeline.addr();
    addr.send(HOLD).unwrap();
    gate.wait_held();
    addr.send_with(1, SendOptions::new().priority(Priority::HIGH))
        .unwrap(); // fails
    for n in [2, 4, 6] {
        addr.send(n).unwrap(); // MEDIUM, the default
    }
    addr.kill().unwrap(); // HIGH, behind the 1: the 2, 4 and 6 are dead letters

    let (status, json) = call(&router, "GET", "/api/snapshot", None).await;
    assert!(status.is_success());
    use Kind::*;
    let pipelines = json["pipelines"].as_array().unwrap();
    assert_eq!(pipelines.len(), 1);
    let pipeline_fields = [("name", Text), ("ended", Bool), ("stages", Array)];
    check("pipeline", &pipelines[0], &pipeline_fields, &[]);
    assert_eq!(pipelines[0]["name"], "parse");
    assert_eq!(pipelines[0]["ended"], false);
    let stage_fields = [
        ("name", Text),
        ("instances", Count),
        ("finished", Text),
        ("queued", Count),
        ("running", Count),
        ("offered", Count),
        ("accepted", Count),
        ("handed_back", Count),
        ("performed", Count),
        ("faulted", Count),
        ("dead_lettered", Count),
        ("sent_back", Count),
        ("retried", Count),
        ("performed_per_sec", Number),
        ("accepted_per_sec", Number),
        ("lanes", Array),
        ("latest_faults", Array),
        ("latest_dead_letters", Array),
    ];
    let lane_fields = [
        ("priority", Count),
        ("weight", Count),
        ("capacity", Count),
        ("queued", Count),
        ("accepted", Count),
        ("dispatched", Count),
    ];
    let stages = pipelines[0]["stages"].as_array().unwrap();
    let names: Vec<&str> = stages.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["parse", "store"], "the stages in order");
    for stage in stages {
        check("stage", stage, &stage_fields, &["finished"]);
        for lane in stage["lanes"].as_array().unwrap() {
            check("mailbox lane", lane, &lane_fields, &["capacity"]);
        }
    }
    let parse = &stages[0];
    assert!(parse["finished"].is_null());
    assert_eq!(
        (parse["instances"].as_u64(), stages[1]["instances"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(
        (parse["queued"].as_u64(), parse["running"].as_u64()),
        (Some(5), Some(1))
    );
    let depth = |priority: u32| {
        parse["lanes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["priority"] == priority)
            .map(|l| l["queued"].as_u64().unwrap())
    };
    // The 1 and the kill at HIGH, the 2, 4 and 6 at MEDIUM.
    assert_eq!((depth(300), depth(200)), (Some(2), Some(3)));

    gate.release();
    let exits = pipeline.join();
    assert_eq!(exits[0].reason, Reason::Killed);
    let (_, json) = call(&router, "GET", "/api/snapshot", None).await;
    let pipeline = &json["pipelines"][0];
    assert_eq!(pipeline["ended"], true);
    let parse = &pipeline["stages"][0];
    assert_eq!(parse["finished"], "killed");
    assert_eq!(pipeline["stages"][1]["finished"], "drained");
    assert_eq!(
        (
            parse["performed"].as_u64(),
            parse["faulted"].as_u64(),
            parse["dead_lettered"].as_u64()
        ),
        (Some(1), Some(1), Some(3))
    );
    let faults = parse["latest_faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1);
    check(
        "fault",
        &faults[0],
        &[
            ("instance", Count),
            ("phase", Text),
            ("error", Text),
            ("attempts", Count),
            ("priority", Count),
        ],
        &["priority"],
    );
    assert_eq!(
        (faults[0]["phase"].as_str(), faults[0]["priority"].as_u64()),
        (Some("perform"), Some(300))
    );
    assert!(
        faults[0]["error"]
            .as_str()
            .unwrap()
            .contains("odd number 1")
    );
    let dead = parse["latest_dead_letters"].as_array().unwrap();
    assert_eq!(dead.len(), 3);
    for letter in dead {
        check(
            "dead letter",
            letter,
            &[("priority", Count), ("reason", Text), ("sent_back", Count)],
            &[],
        );
        assert_eq!(
            (letter["priority"].as_u64(), letter["reason"].as_str()),
            (Some(200), Some("killed"))
        );
    }
}

/// A bridge's part of the snapshot, read from a registered function (no
/// broker): each queue's counters as the function returns them, read
/// anew for every snapshot.
#[cfg(feature = "amqp")]
#[tokio::test]
async fn the_bridges_have_every_field_with_their_type() {
    use priority_executor_amqp::ConsumerMetrics;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    let acked = Arc::new(AtomicU64::new(7));
    let counter = acked.clone();
    let router = Dashboard::new()
        .bridge_with("orders", move || {
            let mut visa = ConsumerMetrics::default();
            visa.queue = "visa".to_owned();
            visa.connected = true;
            visa.in_hand = 2;
            visa.max_in_hand = 4;
            visa.delivered = 12;
            visa.acked = counter.load(Ordering::SeqCst);
            visa.requeued = 1;
            visa.dead_lettered = 2;
            visa.retried = 3;
            visa.reconnects = 1;
            let mut idle = ConsumerMetrics::default();
            idle.queue = "idle".to_owned();
            vec![visa, idle]
        })
        .bridge_with("orders", Vec::new)
        .router();

    let (status, json) = call(&router, "GET", "/api/snapshot", None).await;
    assert!(status.is_success());
    use Kind::*;
    let bridges = json["bridges"].as_array().unwrap();
    assert_eq!(bridges.len(), 2);
    for bridge in bridges {
        check("bridge", bridge, &[("name", Text), ("queues", Array)], &[]);
    }
    assert_eq!(
        (bridges[0]["name"].as_str(), bridges[1]["name"].as_str()),
        (Some("orders"), Some("orders#2"))
    );
    assert_eq!(bridges[1]["queues"], serde_json::json!([]));
    let queues = bridges[0]["queues"].as_array().unwrap();
    let queue_fields = [
        ("queue", Text),
        ("connected", Bool),
        ("in_hand", Count),
        ("max_in_hand", Count),
        ("delivered", Count),
        ("acked", Count),
        ("requeued", Count),
        ("dead_lettered", Count),
        ("retried", Count),
        ("reconnects", Count),
    ];
    for queue in queues {
        check("bridge queue", queue, &queue_fields, &[]);
    }
    let (visa, idle) = (&queues[0], &queues[1]);
    assert_eq!(
        (visa["queue"].as_str(), idle["queue"].as_str()),
        (Some("visa"), Some("idle"))
    );
    assert_eq!(
        (visa["connected"].as_bool(), idle["connected"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(
        [
            &visa["in_hand"],
            &visa["max_in_hand"],
            &visa["delivered"],
            &visa["acked"],
            &visa["requeued"],
            &visa["dead_lettered"],
            &visa["retried"],
            &visa["reconnects"],
        ],
        [2, 4, 12, 7, 1, 2, 3, 1]
    );

    // Read anew for the next snapshot.
    acked.store(9, Ordering::SeqCst);
    let (_, json) = call(&router, "GET", "/api/snapshot", None).await;
    assert_eq!(json["bridges"][0]["queues"][0]["acked"], 9);
}
