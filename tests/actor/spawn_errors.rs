//! `spawn` refuses sizes out of range before it allocates anything, and a
//! factory that panics makes `spawn` fail with the instances already made
//! destroyed, instead of hanging.

use super::common::quiet_panics;
use super::support::{Event, Hold, Log, probes, within};
use priority_executor::actor::{MailboxConfig, Reason, SpawnError, Stage};
use priority_executor::{Capacity, LaneConfig, MaxRunning, Priority};

#[test]
fn too_many_instances_is_a_spawn_error_naming_the_setting_and_its_range() {
    within("instances(1 << 40)", || {
        let (log, hold) = (Log::default(), Hold::default());
        let err = probes("huge", &log, &hold)
            .instances(1 << 40)
            .spawn()
            .unwrap_err();
        let SpawnError::Invalid(invalid) = &err else {
            panic!("{err:?}")
        };
        assert_eq!((invalid.lane, invalid.setting), (None, "instances"));
        assert_eq!(invalid.value, (1u64 << 40).to_string());
        let text = err.to_string();
        assert!(
            text.contains("instances") && text.contains("1099511627776"),
            "{text}"
        );
        assert!(log.events().is_empty(), "no instance was made");
    });
}

#[test]
fn a_capacity_out_of_range_is_a_spawn_error_naming_the_lane() {
    within("capacities", || {
        let (log, hold) = (Log::default(), Hold::default());
        let huge = usize::MAX;
        let err = probes("lane", &log, &hold)
            .mailbox(MailboxConfig::new().lane(Priority::HIGH, Capacity::Bounded(huge)))
            .spawn()
            .unwrap_err();
        let SpawnError::Invalid(invalid) = &err else {
            panic!("{err:?}")
        };
        assert_eq!(
            (invalid.lane, invalid.setting),
            (Some(Priority::HIGH), "capacity")
        );
        assert_eq!(invalid.value, huge.to_string());
        let err = probes("default", &log, &hold)
            .mailbox(MailboxConfig::new().default_capacity(Capacity::Bounded(huge)))
            .spawn()
            .unwrap_err();
        assert!(
            matches!(&err, SpawnError::Invalid(invalid) if invalid.setting == "default_capacity"),
            "{err:?}"
        );
    });
}

/// A stage of `n` probes whose factory panics for instance `bad`.
fn spawn_with_bad_factory(n: usize, bad: usize) -> (Result<(), SpawnError>, Log) {
    quiet_panics("factory: deliberate panic");
    let log = Log::default();
    let (l, hold) = (log.clone(), Hold::default());
    let spawned = Stage::builder("factory", move |id| {
        assert!(id != bad, "factory: deliberate panic for instance {id}");
        super::support::Probe {
            id,
            log: l.clone(),
            hold: hold.clone(),
        }
    })
    .instances(n)
    .spawn()
    .map(drop);
    (spawned, log)
}

#[test]
fn a_factory_panic_for_a_later_instance_fails_spawn_and_destroys_those_made() {
    let (spawned, log) = within("factory panics for instance 1 of 2", || {
        spawn_with_bad_factory(2, 1)
    });
    assert_eq!(
        spawned.unwrap_err(),
        SpawnError::FactoryPanicked {
            instance: 1,
            message: "factory: deliberate panic for instance 1".to_owned(),
        }
    );
    let events = log.events();
    assert_eq!(
        events,
        vec![Event::Init(0), Event::Destroy(0, Reason::FailedInit)],
        "instance 0 was made, initialised and destroyed; instance 1 never was"
    );

    let (spawned, log) = within("factory panics for instance 2 of 3", || {
        spawn_with_bad_factory(3, 2)
    });
    assert!(matches!(
        spawned,
        Err(SpawnError::FactoryPanicked { instance: 2, .. })
    ));
    let mut destroyed: Vec<usize> = log
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::Destroy(id, Reason::FailedInit) => Some(*id),
            _ => None,
        })
        .collect();
    destroyed.sort_unstable();
    assert_eq!(destroyed, vec![0, 1]);
}

#[test]
fn a_factory_panic_for_the_first_instance_fails_spawn() {
    let (spawned, log) = within("factory panics for instance 0", || {
        spawn_with_bad_factory(2, 0)
    });
    assert!(matches!(
        spawned,
        Err(SpawnError::FactoryPanicked { instance: 0, .. })
    ));
    assert!(log.events().is_empty());
}

#[test]
fn a_mailbox_lane_refuses_the_settings_only_an_executor_lane_has() {
    within("executor-only lane settings", || {
        let (log, hold) = (Log::default(), Hold::default());
        let lane = LaneConfig::new(Priority::HIGH).weight(3);
        let err = probes("named", &log, &hold)
            .mailbox(MailboxConfig::new().lane_config(lane.clone().name("interactive")))
            .spawn()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "lane 300: name = \"interactive\" is not allowed (expected unset: a mailbox's lane \
             has a priority, a weight and a capacity)"
        );
        let err = probes("capped", &log, &hold)
            .mailbox(
                MailboxConfig::new().lane_config(lane.clone().max_running(MaxRunning::Threads(2))),
            )
            .spawn()
            .unwrap_err();
        assert!(
            matches!(&err, SpawnError::Invalid(invalid) if invalid.setting == "max_running"),
            "{err:?}"
        );
        // Priority, weight and capacity are a mailbox lane's own.
        let stage = probes("weighted", &log, &hold)
            .mailbox(MailboxConfig::new().lane_config(lane.capacity(Capacity::Bounded(4))))
            .spawn()
            .expect("a weighted bounded lane");
        assert_eq!(stage.metrics().lanes[0].weight, 3);
        stage.addr().kill().unwrap();
        stage.join();
        assert_eq!(log.events().len(), 2, "init and destroy of the last stage");
    });
}
