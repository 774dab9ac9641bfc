//! The visa-application scenario of the WSO2 priority-executor article, end
//! to end with `executors.toml` from the repository root.
//!
//! Applications pile up during a maintenance window; when it ends they are
//! released at once. Those whose transport header `PRIORITYID` is `ABC`
//! get priority 10 from the rules, the others 1, and the executor serves
//! them ten to one through the sequence `call-external-sequence`.
//!
//! Run with `cargo run --example visa --features esb`.

use priority_executor::{Message, Priority, Registry, Rules, SendOptions};
use std::error::Error;
use std::io;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};

const EXECUTOR: &str = "visa_priority_exec";
const APPLICATIONS: usize = 1000;
/// One application in five carries PRIORITYID=ABC.
const PRIORITY_EVERY: usize = 5;

/// Closed during the maintenance window.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    fn wait(&self) {
        let (open, changed) = &*self.0;
        let mut open = open.lock().unwrap_or_else(|e| e.into_inner());
        while !*open {
            open = changed.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn open(&self) {
        *self.0.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.0.1.notify_all();
    }
}

/// Opens the gate however `main` ends, so that dropping the executors
/// (which drains them) never waits on held workers.
struct OpenOnDrop(Gate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/executors.toml");
    let executors = Registry::from_path(path)?;
    let rules = executors.rules(EXECUTOR);
    let rules = rules.as_deref().map_or("none", Rules::name);
    let lanes = executors
        .get(EXECUTOR)?
        .config()
        .lanes
        .iter()
        .map(|l| l.priority)
        .collect::<Vec<_>>();
    println!("loaded {path}");
    let lane_list: Vec<String> = lanes.iter().map(Priority::to_string).collect();
    println!(
        "  executor {EXECUTOR:?}: lanes {}, rules {rules:?}",
        lane_list.join(", ")
    );

    // The maintenance window: each worker thread the executor can start is
    // held until the gate opens.
    let gate = Gate::default();
    let held = gate.clone();
    // Declared after `executors`, so dropped (and opened) before them.
    let _release = OpenOnDrop(gate.clone());
    let (started_tx, started_rx) = mpsc::channel();
    let started_tx = Mutex::new(started_tx);
    executors.register_sequence("maintenance", move |_m: Message| {
        let _ = started_tx.lock().map(|tx| tx.send(()));
        held.wait();
        Ok::<(), io::Error>(())
    });

    // The sequence each application runs through; it notes the order in
    // which applications reach the external visa service.
    let order = Arc::new(Mutex::new(Vec::with_capacity(APPLICATIONS)));
    let seen = Arc::clone(&order);
    executors.register_sequence("call-external-sequence", move |m: Message| {
        let urgent = m.property("PRIORITYID") == Some("ABC");
        seen.lock()
            .map_err(|_| io::Error::other("order lock poisoned"))?
            .push(urgent);
        Ok::<(), io::Error>(())
    });

    let executor = executors.get(EXECUTOR)?;
    let mut maintenance = Vec::new();
    loop {
        let before = executor.metrics().threads.live;
        maintenance.push(executors.enqueue_sequence_with(
            EXECUTOR,
            "maintenance",
            Message::new(),
            SendOptions::new().priority(lanes[0]),
        )?);
        if executor.metrics().threads.live == before {
            break; // at max_threads: this one waits in its lane
        }
        started_rx.recv()?;
    }
    let threads = executor.metrics().threads.live;
    println!("  maintenance window: {threads} worker threads held");

    // Applications arrive; one in five is a priority application.
    let mut handles = Vec::with_capacity(APPLICATIONS);
    for id in 0..APPLICATIONS {
        let mut application = Message::new()
            .with_property("application-id", id.to_string())
            .with_body(format!("<visa-application id=\"{id}\"/>"));
        if id % PRIORITY_EVERY == 0 {
            application = application.with_property("PRIORITYID", "ABC");
        }
        handles.push(executors.enqueue_sequence(
            EXECUTOR,
            "call-external-sequence",
            application,
        )?);
    }
    let urgent_total = APPLICATIONS.div_ceil(PRIORITY_EVERY);
    println!(
        "  queued {APPLICATIONS} applications: {urgent_total} with PRIORITYID=ABC \
         (priority {}), {} without (priority {})",
        executors
            .priority_for(EXECUTOR, &Message::new().with_property("PRIORITYID", "ABC"))
            .unwrap_or(Priority(0)),
        APPLICATIONS - urgent_total,
        executors
            .priority_for(EXECUTOR, &Message::new())
            .unwrap_or(Priority(0)),
    );

    gate.open();
    for handle in maintenance {
        handle.join()??;
    }
    for handle in handles {
        handle.join()??;
    }

    let order = order.lock().map_err(|_| "order lock poisoned")?.clone();
    let line: String = order
        .iter()
        .take(110)
        .map(|&urgent| if urgent { 'H' } else { 's' })
        .collect();
    println!("\norder in which the service was called (H = PRIORITYID=ABC, s = standard),");
    println!(
        "first 110 of {} (threads run side by side, so neighbours may swap):",
        order.len()
    );
    for chunk in line.as_bytes().chunks(55) {
        println!("  {}", String::from_utf8_lossy(chunk));
    }

    // While both lanes had work: up to the last priority application.
    let last_urgent = order.iter().rposition(|&u| u).map_or(0, |i| i + 1);
    let urgent = order[..last_urgent].iter().filter(|&&u| u).count();
    let standard = last_urgent - urgent;
    println!(
        "\nwhile both lanes had work (the first {last_urgent} calls): {urgent} priority, \
         {standard} standard: {:.1} : 1",
        urgent as f64 / standard.max(1) as f64
    );
    println!(
        "all {urgent_total} priority applications were served within the first {last_urgent} \
         calls, ahead of {} standard ones",
        APPLICATIONS - urgent_total - standard
    );
    let metrics = executors
        .sequence_metrics("call-external-sequence")
        .unwrap_or_default();
    println!("sequence metrics: {metrics:?}");
    drop(executor);
    executors.shutdown();
    Ok(())
}
