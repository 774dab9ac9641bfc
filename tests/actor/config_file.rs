//! A mailbox whose default, stop and kill priorities come from a
//! `[mailboxes.NAME]` section of `executors.toml` (the seed's
//! `priority.default`, `priority.poison-pill`, `priority.kill-pill`).

use super::support::{Event, Hold, Log, assert_balanced, held, msg, probes, within};
use priority_executor::actor::{MailboxConfig, Reason};
use priority_executor::{Priority, SendOptions};

const FILE: &str = r#"
[mailboxes.graceful]
priority.default = "low"
priority.poison-pill = "LOW"

[mailboxes.urgent-kill]
priority.kill-pill = 400
"#;

#[test]
fn a_stop_at_the_files_poison_pill_priority_waits_for_unmarked_messages_at_its_default() {
    within("graceful stop from the file", || {
        let config = MailboxConfig::from_toml_str(FILE, "graceful").expect("loads");
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("graceful", &log, &hold)
            .mailbox(config)
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        for i in 0..20 {
            addr.send(msg('D', i)).unwrap(); // no priority: the file's default
        }
        addr.send_with(msg('M', 0), SendOptions::new().priority(Priority::MEDIUM))
            .unwrap();
        addr.stop().unwrap(); // at LOW, behind the 20 sent before it
        hold.open();
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Stopped);
        assert_balanced(&exit.metrics);
        let mut expected = vec![msg('M', 0)];
        expected.extend((0..20).map(|i| msg('D', i)));
        assert_eq!(
            log.performed(),
            expected,
            "MEDIUM first, the unmarked ones at LOW in order, then the stop"
        );
        assert_eq!(exit.metrics.dead_lettered, 0);
    });
}

#[test]
fn a_kill_at_the_files_kill_pill_priority_overtakes_a_stop_sent_before_it() {
    within("kill from the file", || {
        let config = MailboxConfig::from_toml_str(FILE, "urgent-kill").expect("loads");
        assert_eq!(
            config,
            MailboxConfig::new().kill_priority(Priority::URGENT),
            "what the section leaves out keeps its default"
        );
        let (log, hold) = (Log::default(), Hold::default());
        let stage = probes("urgent-kill", &log, &hold)
            .mailbox(config)
            .spawn()
            .expect("spawn");
        let addr = held(&stage, &hold);
        addr.stop().unwrap(); // HIGH
        addr.kill().unwrap(); // URGENT, from the file: dispatched first
        hold.open();
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Killed);
        assert_balanced(&exit.metrics);
        assert_eq!(
            log.count(|e| matches!(e, Event::Destroy(_, Reason::Killed))),
            1
        );
    });
}

#[test]
fn a_missing_section_and_a_bad_setting_are_errors_not_defaults() {
    let err = MailboxConfig::from_toml_str(FILE, "printer").unwrap_err();
    assert_eq!(err.mailbox(), Some("printer"));
    assert_eq!(
        err.detail(),
        "no [mailboxes.printer] section (defined: \"graceful\", \"urgent-kill\")"
    );
    let err = MailboxConfig::from_toml_str("[mailboxes.m]\npriority.default = \"normal\"\n", "m")
        .unwrap_err();
    assert_eq!(
        (err.line(), err.field()),
        (Some(2), Some("priority.default"))
    );
}

#[test]
fn the_shipped_file_sets_the_mailbox_example_s_priorities() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/executors.toml");
    let config = MailboxConfig::from_path(path, "mailbox").expect("executors.toml loads");
    assert_eq!(
        config,
        MailboxConfig::new()
            .default_priority(Priority::MEDIUM)
            .stop_priority(Priority::MEDIUM)
            .kill_priority(Priority::URGENT)
    );
}

#[test]
fn a_running_registry_gives_the_mailbox_settings_of_the_file_it_last_loaded() {
    let executors = priority_executor::Registry::from_toml_str(&format!(
        "[executors.a]\nlanes = [{{ priority = 1 }}]\n{FILE}"
    ))
    .expect("loads");
    assert_eq!(
        MailboxConfig::from_registry(&executors, "graceful"),
        Some(MailboxConfig::from_toml_str(FILE, "graceful").expect("loads"))
    );
    assert_eq!(MailboxConfig::from_registry(&executors, "writer"), None);

    // A reload replaces the sections with the new file's.
    executors
        .reload_toml_str(
            "[executors.a]\nlanes = [{ priority = 1 }]\n\
             [mailboxes.writer]\npriority.poison-pill = \"urgent\"\n",
        )
        .expect("reloads")
        .wait();
    assert_eq!(MailboxConfig::from_registry(&executors, "graceful"), None);
    assert_eq!(
        MailboxConfig::from_registry(&executors, "writer"),
        Some(MailboxConfig::new().stop_priority(Priority::URGENT))
    );
    executors.shutdown();
}
