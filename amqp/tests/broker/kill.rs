//! Kill a consumer process mid-flood: its unacked messages go to the
//! other; every message is processed; only the killed one's in-hand
//! messages run twice.

use crate::common::{unique, uri, wait_until};
use priority_executor_amqp::{ConsumerConfig, Outgoing};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// (message id, redelivered) of every `done` line, and the last other line.
type Lines = Arc<Mutex<(Vec<(String, bool)>, Vec<String>)>>;

fn worker(queue: &str, prefetch: u16) -> (Child, Lines) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_amqp-worker"))
        .args([
            "--uri",
            &uri(),
            "--queue",
            queue,
            "--threads",
            "2",
            "--work-us",
            "500",
        ])
        .args(["--prefetch", &prefetch.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start amqp-worker");
    let lines: Lines = Arc::default();
    let l = lines.clone();
    let stdout = child.stdout.take().expect("stdout");
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let mut parts = line.split(' ');
            let mut l = l.lock().unwrap();
            if parts.next() == Some("done") {
                let id = parts.next().unwrap_or("").to_owned();
                l.0.push((id, parts.next() == Some("1")));
            } else {
                l.1.push(line);
            }
        }
    });
    (child, lines)
}

#[test]
fn a_killed_consumer_process_loses_nothing_and_duplicates_only_its_in_hand() {
    let publisher = crate::broker_or_skip!();
    const N: usize = 3000;
    const PREFETCH: u16 = 8;
    let queue = unique("kill");
    let config = ConsumerConfig::new(&queue).max_priority(10);
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all((0..N).map(|i| {
            Outgoing::to_queue(&queue, "x")
                .message_id(i.to_string())
                .priority(0)
        }))
        .expect("publish");

    let (mut victim, victim_lines) = worker(&queue, PREFETCH);
    let (mut survivor, survivor_lines) = worker(&queue, PREFETCH);
    wait_until(Duration::from_secs(60), "the victim to get going", || {
        victim_lines.lock().unwrap().0.len() >= 300
    });
    victim.kill().expect("SIGKILL"); // std's kill is SIGKILL on Unix
    let status = victim.wait().expect("wait");
    assert!(!status.success());
    wait_until(Duration::from_secs(120), "every message", || {
        let mut ids: Vec<String> = victim_lines
            .lock()
            .unwrap()
            .0
            .iter()
            .map(|l| l.0.clone())
            .collect();
        ids.extend(survivor_lines.lock().unwrap().0.iter().map(|l| l.0.clone()));
        ids.sort();
        ids.dedup();
        ids.len() == N
    });
    wait_until(Duration::from_secs(30), "the queue to empty", || {
        publisher.queue_len(&queue).expect("len") == 0
    });
    drop(survivor.stdin.take()); // graceful stop
    let status = survivor.wait().expect("wait");
    assert!(status.success(), "the survivor exits 0");

    let victim = victim_lines.lock().unwrap();
    let survivor = survivor_lines.lock().unwrap();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (id, _) in victim.0.iter().chain(&survivor.0) {
        *count.entry(id).or_default() += 1;
    }
    let by_victim: HashMap<&str, ()> = victim.0.iter().map(|(id, _)| (id.as_str(), ())).collect();
    let redelivered_to_survivor: HashMap<&str, bool> =
        survivor.0.iter().map(|(id, r)| (id.as_str(), *r)).collect();
    let duplicates: Vec<&str> = count
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| *id)
        .collect();
    let redelivered = survivor.0.iter().filter(|(_, r)| *r).count();
    eprintln!(
        "victim finished {}, survivor {}; {} redelivered to the survivor, {} ran twice: {:?}; survivor said {:?}",
        victim.0.len(),
        survivor.0.len(),
        redelivered,
        duplicates.len(),
        duplicates,
        survivor.1.last()
    );
    assert_eq!(count.len(), N, "every message processed at least once");
    assert!(count.values().all(|n| *n <= 2));
    for id in &duplicates {
        assert!(
            by_victim.contains_key(id),
            "{id} ran twice but not in the killed process"
        );
        assert_eq!(
            redelivered_to_survivor.get(id),
            Some(&true),
            "{id}: the second run is a redelivery"
        );
    }
    assert!(
        duplicates.len() <= usize::from(PREFETCH),
        "duplicates are the killed process's in-hand messages: at most its prefetch"
    );
    assert!(
        redelivered <= usize::from(PREFETCH),
        "only the victim's in-hand came back"
    );
    publisher.delete_queue(&queue).expect("delete");
}
