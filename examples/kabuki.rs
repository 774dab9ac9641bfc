//! Kabuki's demo pipeline (seed 003) in one process: Download -> Index (2
//! instances) -> Write. Download is the seed's WRITE_ONLY actor: it
//! produces its documents in `init`, with no input, then shuts the
//! pipeline down itself; the drain marker follows its documents through
//! every stage (no 5 s sleep). Write opens its file in `init` and closes it
//! in `destroy`. Each instance says what it did when it is destroyed.
//!
//! `cargo run --example kabuki --features actor [-- DOCUMENTS [OUTPUT_FILE]]`

use priority_executor::actor::{Actor, ActorError, Outbox, Pipeline, Reason, Stage, StageContext};
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What each instance reports at `destroy`, printed at the end.
type Report = Arc<Mutex<Vec<String>>>;

/// Kabuki's WRITE_ONLY DownloadActor: it generates the documents in
/// `init`, then calls `shutdown()` on itself. Its inbox is never used.
struct Download {
    documents: u32,
    report: Report,
    sent: usize,
}

impl Actor for Download {
    type In = ();
    type Out = String;

    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        let mut out = ctx.outbox()?;
        for i in 0..self.documents {
            let doc = format!("Download Document-#:{i}");
            println!("{doc}");
            out.send(doc)?;
            self.sent += 1;
        }
        // Kabuki's shutdown(): the marker goes behind every document sent.
        out.drain_pipeline();
        Ok(())
    }

    fn perform(&mut self, (): (), _: &mut Outbox<'_, String>) -> Result<(), ActorError> {
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        if let Ok(mut r) = self.report.lock() {
            r.push(format!(
                "download#0 sent {} documents ({reason})",
                self.sent
            ));
        }
    }
}

/// Kabuki's READ_WRITE IndexActor; two of them share one inbox.
struct Index {
    id: usize,
    report: Report,
    indexed: Vec<String>,
}

impl Actor for Index {
    type In = String;
    type Out = String;

    fn perform(&mut self, input: String, out: &mut Outbox<'_, String>) -> Result<(), ActorError> {
        let output = input.replace("Download", "Index");
        println!("  {output} (index#{})", self.id);
        self.indexed
            .push(output.rsplit(':').next().unwrap_or("?").to_owned());
        out.send(output)?;
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        if let Ok(mut r) = self.report.lock() {
            r.push(format!(
                "index#{} indexed {} documents [{}] ({reason})",
                self.id,
                self.indexed.len(),
                self.indexed.join(", ")
            ));
        }
    }
}

/// Kabuki's READ_ONLY WriteActor: the file is opened in `init`, closed in
/// `destroy`.
struct Write {
    path: PathBuf,
    file: Option<BufWriter<File>>,
    written: usize,
    report: Report,
}

impl Actor for Write {
    type In = String;
    type Out = ();

    fn init(&mut self, _: &StageContext<'_>) -> Result<(), ActorError> {
        self.file = Some(BufWriter::new(File::create(&self.path)?));
        Ok(())
    }

    fn perform(&mut self, input: String, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        let output = input.replace("Index", "Write");
        println!("    {output}");
        let file = self.file.as_mut().ok_or("the file is not open")?;
        writeln!(file, "{output}")?;
        self.written += 1;
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        let flushed = match self.file.take() {
            Some(mut file) => file.flush().is_ok(),
            None => false,
        };
        if let Ok(mut r) = self.report.lock() {
            r.push(format!(
                "write#0 wrote {} lines to {} and closed it (flushed: {flushed}) ({reason})",
                self.written,
                self.path.display()
            ));
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let documents: u32 = match args.next() {
        Some(n) => n
            .parse()
            .map_err(|e| format!("DOCUMENTS must be a number: {e}"))?,
        None => 10,
    };
    let path = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("kabuki-demo.txt"));
    let report: Report = Arc::default();

    let (r1, r2, r3) = (report.clone(), report.clone(), report.clone());
    let write_path = path.clone();
    // -a DownloadActor -i download -o index
    let download = Stage::builder("download", move |_| Download {
        documents,
        report: r1.clone(),
        sent: 0,
    });
    // -a IndexActor -i index -o write, started twice
    let index = Stage::builder("index", move |id| Index {
        id,
        report: r2.clone(),
        indexed: Vec::new(),
    })
    .instances(2);
    // -a WriteActor -i write
    let write = Stage::builder("write", move |_| Write {
        path: write_path.clone(),
        file: None,
        written: 0,
        report: r3.clone(),
    })
    .on_fault(|fault| eprintln!("write failed: {}", fault.error));

    let pipeline = Pipeline::builder(download)
        .then(index)
        .then(write)
        .spawn()?;
    // Download has produced in `init` and asked for the drain: the marker
    // follows the payload through every stage, and join returns once
    // Write has closed its file.
    let exits = pipeline.join();

    println!("\nWhat each instance did:");
    for line in report.lock().map_err(|_| "report lock")?.iter() {
        println!("  {line}");
    }
    println!("\nStages:");
    for exit in &exits {
        let m = &exit.metrics;
        println!(
            "  {:<9} {}: offered {}, performed {}, faulted {}, dead-lettered {}, handed back {}",
            m.name, exit.reason, m.offered, m.performed, m.faulted, m.dead_lettered, m.handed_back
        );
    }
    let written = std::fs::read_to_string(&path)?;
    println!("\n{} ({} lines):", path.display(), written.lines().count());
    print!("{written}");
    if written.lines().count() != documents as usize {
        return Err("not every document reached the file".into());
    }
    Ok(())
}
