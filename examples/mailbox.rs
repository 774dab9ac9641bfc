//! The seed's prioritized mailbox (seed 000) in one process: URGENT, HIGH,
//! MEDIUM and LOW messages, one message with no priority of its own (it
//! gets the default), a level between HIGH and URGENT that needed no
//! change anywhere else, and a stop (Akka's PoisonPill) whose priority comes
//! from `executors.toml` (`[mailboxes.mailbox]`), as the seed sets
//! `priority.poison-pill` in its config.
//!
//! `cargo run --example mailbox --features actor,esb`

use priority_executor::Priority;
use priority_executor::actor::{
    Actor, ActorError, MailboxConfig, Outbox, Prioritized, PriorityGenerator, Reason, Stage,
};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

enum Message {
    /// Holds the actor until every other message is queued, so the order
    /// below is the mailbox's, not the sender's.
    Hold(Arc<Mutex<mpsc::Receiver<()>>>),
    Urgent(&'static str),
    High(&'static str),
    /// The seed's point: a new level between HIGH (300) and URGENT (400).
    Escalated(&'static str),
    Medium(&'static str),
    Low(&'static str),
    /// No priority of its own: the mailbox's default (`priority.default`).
    Unmarked(&'static str),
}

impl Prioritized for Message {
    fn priority(&self) -> Option<Priority> {
        match self {
            Message::Hold(_) => Some(Priority(1000)),
            Message::Urgent(_) => Some(Priority::URGENT),
            Message::Escalated(_) => Some(Priority(350)),
            Message::High(_) => Some(Priority::HIGH),
            Message::Medium(_) => Some(Priority::MEDIUM),
            Message::Low(_) => Some(Priority::LOW),
            Message::Unmarked(_) => None,
        }
    }
}

impl Message {
    fn text(&self) -> &str {
        match self {
            Message::Hold(_) => "hold",
            Message::Urgent(t)
            | Message::High(t)
            | Message::Escalated(t)
            | Message::Medium(t)
            | Message::Low(t)
            | Message::Unmarked(t) => t,
        }
    }
}

struct Printer;

impl Actor for Printer {
    type In = Message;
    type Out = ();

    fn perform(&mut self, msg: Message, out: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        match msg {
            Message::Hold(release) => {
                release.lock().map_err(|_| "hold lock")?.recv()?;
            }
            other => println!(
                "  performed at {:>3}: {}",
                out.letter().priority.0,
                other.text()
            ),
        }
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        println!("  destroyed: {reason}");
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The seed's priority.default, priority.poison-pill and
    // priority.kill-pill, read from [mailboxes.mailbox] of executors.toml.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/executors.toml");
    let config = MailboxConfig::from_path(path, "mailbox")?;
    let (dead_tx, dead_letters) = mpsc::channel();
    let stage = Stage::builder("mailbox", |_| Printer)
        .generator(PriorityGenerator::prioritized())
        .mailbox(config)
        .on_dead_letter(move |letter| {
            let _ = dead_tx.send(letter);
        })
        .spawn()?;
    let mailbox = stage.addr();

    let (release, held) = mpsc::channel();
    mailbox.send(Message::Hold(Arc::new(Mutex::new(held))))?;
    println!("sent, in this order:");
    let sends = [
        Message::Low("low 1"),
        Message::Medium("medium 1"),
        Message::Unmarked("unmarked 1"),
        Message::High("high 1"),
        Message::Urgent("urgent 1"),
        Message::Low("low 2"),
        Message::Escalated("escalated 1"),
        Message::Medium("medium 2"),
    ];
    for msg in sends {
        println!("  {}", msg.text());
        mailbox.send(msg)?;
    }
    println!("  stop (at priority.poison-pill)");
    mailbox.stop()?;
    let late = Message::Urgent("urgent 2, sent after the stop");
    println!("  {}", late.text());
    mailbox.send(late)?;

    println!("\nthe mailbox's order:");
    release.send(())?;
    let exit = stage.join();
    println!("\ndead letters (at or below the stop, FIFO):");
    for letter in dead_letters.try_iter() {
        println!(
            "  {} at {} ({})",
            letter.message.text(),
            letter.priority,
            letter.reason.as_str()
        );
    }
    let m = &exit.metrics;
    println!(
        "\n{}: offered {} = performed {} + dead-lettered {} + handed back {}",
        exit.reason, m.offered, m.performed, m.dead_lettered, m.handed_back
    );
    if !m.is_balanced() || exit.reason != Reason::Stopped {
        return Err("the mailbox lost track of a message".into());
    }
    Ok(())
}
