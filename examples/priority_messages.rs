//! Seed 002, the priority-message system, in one process: one broker,
//! three producers that set the transmission-control information of each
//! message (its priority, its TTL), and consumers with the predicate,
//! priority-threshold and TTL strategies that register and leave while
//! the broker runs. The broker hands out batches round robin every cycle,
//! passing over a consumer still busy with its last batch, and ceases
//! after a number of cycles with an empty queue. It prints who processed
//! what, what was sent back and why, what was turned away, and why the
//! broker stopped.
//!
//! `cargo run --example priority_messages --features actor`

use priority_executor::actor::{
    Actor, ActorError, Broker, DeadLetter, LetterInfo, Outbox, Reason, Strategy,
};
use priority_executor::{Priority, SendOptions};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

/// A message: data the system is agnostic to, and the control
/// information its producer set.
#[derive(Clone, Debug)]
struct Message {
    id: u32,
    producer: usize,
    data: String,
    /// The priority the producer gave it.
    sent_at: Priority,
    /// Its time to live, in trips to the broker.
    ttl: u32,
}

/// A consumer: records what it processed with the letter's control
/// information.
struct Consumer {
    name: &'static str,
    log: mpsc::Sender<(String, Message, LetterInfo)>,
    /// Told once this consumer has processed this many messages.
    milestone: Option<(u32, mpsc::Sender<()>)>,
}

impl Actor for Consumer {
    type In = Message;
    type Out = ();

    fn perform(&mut self, m: Message, out: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        let who = format!("{}#{}", self.name, out.instance());
        self.log.send((who, m, out.letter()))?;
        if let Some((left, tell)) = &mut self.milestone {
            *left -= 1;
            if *left == 0 {
                let _ = tell.send(());
                self.milestone = None;
            }
        }
        Ok(())
    }
}

/// Why a processed message had been sent back, read from its control
/// information.
fn why(m: &Message, info: &LetterInfo) -> String {
    if info.sent_back == 0 {
        return "first try".to_owned();
    }
    let mut why = Vec::new();
    if info.predicate_runs > 0 {
        why.push(format!("predicate refused {}x", info.predicate_runs));
    }
    if info.priority > m.sent_at {
        why.push(format!("too low, aged {} -> {}", m.sent_at, info.priority));
    }
    if let Some(ttl) = info.ttl
        && ttl < m.ttl
    {
        why.push(format!("TTL too high, {} -> {ttl}", m.ttl));
    }
    if why.is_empty() {
        why.push("sent back by a consumer".to_owned());
    }
    format!("sent back {}x: {}", info.sent_back, why.join(", "))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (log, processed) = mpsc::channel();
    let dead: Arc<Mutex<Vec<DeadLetter<Message>>>> = Arc::default();
    let dead_sink = dead.clone();
    let broker = Broker::builder("broker")
        .cycle(Duration::from_millis(2))
        .batch(4)
        // A consumer still at work on its last batch is passed over, so a
        // slow one collects no batches while the others idle (seed 002's
        // strict rotation is the default).
        .skip_busy(true)
        // Ceases after 25 cycles in a row with an empty queue.
        .end_after(25)
        .on_dead_letter(move |d| dead_sink.lock().expect("dead letters").push(d))
        .spawn()?;
    let consumer = |name| Consumer {
        name,
        log: log.clone(),
        milestone: None,
    };

    // The predicate consumer is there from the start: it processes only
    // messages whose data mentions "even", or that it refused twice.
    let (tell, busy) = mpsc::channel();
    let predicate = broker
        .register(
            Consumer {
                milestone: Some((4, tell)),
                ..consumer("predicate")
            },
            Strategy::predicate(|m: &Message| m.data.contains("even"), 2),
        )
        .ok_or("the predicate consumer did not start")?;

    // Three producers, each setting priority and TTL per message.
    let producers: Vec<_> = (0..3)
        .map(|p| {
            let addr = broker.addr();
            thread::spawn(move || {
                for i in 0..12u32 {
                    let id = p as u32 * 100 + i;
                    let sent_at =
                        [Priority::LOW, Priority::MEDIUM, Priority::HIGH][(i % 3) as usize];
                    let parity = if i % 2 == 0 { "even" } else { "odd" };
                    let m = Message {
                        id,
                        producer: p,
                        data: format!("{parity} payload {id}"),
                        sent_at,
                        ttl: i % 6,
                    };
                    if let Err(e) = addr.send_with(m, SendOptions::new().priority(sent_at)) {
                        eprintln!("producer {p}: {e}");
                    }
                }
            })
        })
        .collect();
    busy.recv_timeout(Duration::from_secs(30))
        .map_err(|_| "the predicate consumer processed nothing")?;

    // Once the predicate consumer is at work, two more consumers register
    // while the broker runs: one processes only
    // HIGH and above (it ages what it refuses), one only TTLs 1 to 3 (it
    // drops TTL 0, sends higher ones back with the TTL lowered).
    broker
        .register(
            consumer("threshold"),
            Strategy::priority_threshold(Priority::HIGH),
        )
        .ok_or("the threshold consumer did not start")?;
    broker
        .register(
            consumer("ttl"),
            Strategy::ttl_range(1..=3, |m: &Message| m.ttl),
        )
        .ok_or("the ttl consumer did not start")?;
    for p in producers {
        p.join().map_err(|_| "a producer panicked")?;
    }
    // The predicate consumer leaves while the others go on.
    broker.unregister(predicate);
    println!(
        "consumers after the predicate consumer left: {:?}",
        broker.consumers()
    );
    // Every message processed, sent back for good or turned away: nothing
    // queued, no batch still at work.
    if !broker.wait_quiet(Duration::from_secs(30)) {
        return Err("the broker did not settle".into());
    }
    println!(
        "quiet after {} messages processed",
        broker.metrics().performed
    );

    // Nothing more to send: the broker ceases after its empty cycles.
    let exit = broker.join();
    drop(log);

    println!("\nProcessed:");
    let mut count = 0;
    for (who, m, info) in processed.try_iter() {
        count += 1;
        println!(
            "  {who:<12} #{:<3} from producer {} at {:>3} ({}): {}",
            m.id,
            m.producer,
            info.priority,
            m.data,
            why(&m, &info)
        );
    }
    println!("\nTurned away:");
    let dead = dead.lock().map_err(|_| "dead letters")?;
    for d in dead.iter() {
        println!(
            "  #{:<3} {} (priority {}, TTL {:?}, sent back {}x)",
            d.message.id,
            d.reason.as_str(),
            d.info.priority,
            d.info.ttl,
            d.info.sent_back
        );
    }
    let m = &exit.metrics;
    println!(
        "\nThe broker stopped: {} ({}). Offered {}, processed {}, sent back {} times, turned away {}, faults {}.",
        exit.reason,
        match exit.reason {
            Reason::Idle => "25 cycles in a row with an empty queue",
            Reason::NoConsumers => "no consumer registered",
            _ => "asked to",
        },
        m.offered,
        m.performed,
        m.sent_back,
        m.dead_lettered,
        m.faulted
    );
    if !m.is_balanced() || count as u64 != m.performed || m.offered != 36 {
        return Err("a message is unaccounted for".into());
    }
    Ok(())
}
