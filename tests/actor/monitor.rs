//! A stage monitor reads a stage it does not own: counters, the latest
//! faults and dead letters without taking them, and a drain that performs
//! everything accepted before the stage ends.

use super::support::{Hold, Log, assert_balanced, held, msg, probes, within};
use priority_executor::actor::{DeadReason, Phase, Pipeline, Reason};
use priority_executor::{Priority, SendOptions};

#[test]
fn a_monitor_shows_faults_and_dead_letters_without_taking_them() {
    within("monitor faults and dead letters", || {
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("watched", &log, &hold).spawn().expect("spawn");
        let monitor = stage.monitor();
        let addr = held(&stage, &hold);
        addr.send_with(msg('E', 1), SendOptions::new().priority(Priority::HIGH))
            .unwrap();
        for i in 0..3 {
            addr.send_with(msg('M', i), SendOptions::new().priority(Priority::LOW))
                .unwrap();
        }
        addr.kill().unwrap(); // HIGH, behind the failing letter
        assert_eq!(monitor.metrics().queued, 5);
        hold.open();
        // Keep the stage to read what it kept after it ended.
        while stage.finished().is_none() {
            std::thread::yield_now();
        }
        assert_eq!(monitor.finished(), Some(Reason::Killed));
        let faults = monitor.latest_faults(10);
        assert_eq!(faults.len(), 1);
        assert_eq!(
            (faults[0].phase, faults[0].priority),
            (Phase::Perform, Some(Priority::HIGH))
        );
        assert!(faults[0].error.contains("deliberate error"));
        let dead = monitor.latest_dead_letters(2);
        assert_eq!(dead.len(), 2, "the last two of three");
        assert!(dead.iter().all(|d| d.reason == DeadReason::Killed));
        // Read, not taken: the stage still hands them out.
        assert_eq!(stage.take_dead_letters().len(), 3);
        assert_eq!(stage.take_faults().len(), 1);
        assert!(monitor.latest_dead_letters(10).is_empty());
        let m = monitor.metrics();
        assert_eq!((m.faulted, m.dead_lettered), (1, 3));
        assert_balanced(&stage.join().metrics);
    });
}

#[test]
fn a_monitor_drains_the_pipeline_behind_what_it_accepted() {
    within("monitor drain", || {
        let (log, hold) = (Log::default(), Hold::default());
        let (log2, hold2) = (Log::default(), Hold::default());
        let pipeline = Pipeline::builder(probes("first", &log, &hold))
            .then(probes("second", &log2, &hold2))
            .spawn()
            .expect("spawn");
        let monitors = pipeline.monitors();
        let names: Vec<&str> = monitors.iter().map(|m| m.name()).collect();
        assert_eq!(names, ["first", "second"]);
        let addr = pipeline.addr();
        for i in 0..20 {
            addr.send(msg('M', i)).unwrap();
        }
        monitors[1].drain(); // begins at the first stage
        monitors[1].drain(); // again: nothing more
        assert!(addr.is_shut_down(), "the first stage accepts nothing more");
        let exits = pipeline.join();
        assert!(exits.iter().all(|e| e.reason == Reason::Drained));
        for monitor in &monitors {
            let m = monitor.metrics();
            assert_eq!((m.performed, m.dead_lettered), (20, 0), "{}", m.name);
            assert_balanced(&m);
        }
        assert_eq!(log2.performed().len(), 20);
    });
}
