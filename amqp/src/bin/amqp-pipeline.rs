//! Kabuki's pipeline (seed 003) across processes: Download -> Index x N ->
//! Write, each stage a process of its own reading and writing broker
//! queues, ended by the drain marker rather than a fixed wait.
//!
//! One stage (Kabuki's `Actor -a ACTOR -i INBOX -o OUTBOX`):
//!
//! ```text
//! amqp-pipeline -a download -o OUTBOX [--documents N]
//! amqp-pipeline -a index -i INBOX -o OUTBOX [-n INSTANCES] [--work-us N]
//! amqp-pipeline -a write -i INBOX [--output FILE]
//!               [--uri URI]
//! ```
//!
//! A stage with an inbox prints `ready` once it consumes; `write` prints
//! `wrote LINE` per document; every stage prints `drained ...` when the
//! drain has passed it, and exits 0.
//!
//! The whole pipeline in one command (starts the broker if none answers):
//!
//! ```text
//! cargo run --release -p priority-executor-amqp --bin amqp-pipeline -- demo
//!     [--documents N] [--index-processes N] [--instances N] [--work-us N]
//! ```

#[path = "shared/broker.rs"]
mod broker;

use priority_executor::actor::{Actor, ActorError, Outbox, Reason, StageContext};
use priority_executor_amqp::StageProcess;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write as _};
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Kabuki's WRITE_ONLY DownloadActor: one request in, N documents out.
struct Download;

impl Actor for Download {
    type In = u32;
    type Out = String;

    fn perform(&mut self, documents: u32, out: &mut Outbox<'_, String>) -> Result<(), ActorError> {
        for i in 0..documents {
            out.send(format!("Download Document-#:{i}"))?;
        }
        Ok(())
    }
}

/// Kabuki's READ_WRITE IndexActor.
struct Index {
    work: Duration,
}

impl Actor for Index {
    type In = String;
    type Out = String;

    fn perform(&mut self, input: String, out: &mut Outbox<'_, String>) -> Result<(), ActorError> {
        if !self.work.is_zero() {
            std::thread::sleep(self.work); // the indexing work
        }
        out.send(input.replace("Download", "Index"))?;
        Ok(())
    }
}

/// Kabuki's READ_ONLY WriteActor: prints each line, and writes it to the
/// file opened in `init` and closed in `destroy`.
struct Write {
    path: Option<PathBuf>,
    file: Option<BufWriter<File>>,
}

impl Actor for Write {
    type In = String;
    type Out = ();

    fn init(&mut self, _: &StageContext<'_>) -> Result<(), ActorError> {
        if let Some(path) = &self.path {
            self.file = Some(BufWriter::new(File::create(path)?));
        }
        Ok(())
    }

    fn perform(&mut self, input: String, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        let output = input.replace("Index", "Write");
        if let Some(file) = &mut self.file {
            writeln!(file, "{output}")?;
        }
        std::io::stdout()
            .lock()
            .write_all(format!("wrote {output}\n").as_bytes())?;
        Ok(())
    }

    fn destroy(&mut self, _: Reason) {
        if let Some(mut file) = self.file.take() {
            let _ = file.flush();
        }
    }
}

struct Args {
    uri: String,
    actor: String,
    inbox: Option<String>,
    outbox: Option<String>,
    instances: usize,
    documents: u32,
    output: Option<PathBuf>,
    work_us: u64,
    index_processes: usize,
}

const USAGE: &str = "usage: amqp-pipeline -a download|index|write [-i INBOX] [-o OUTBOX] [-n INSTANCES] [--documents N] [--output FILE] [--work-us N] [--uri URI]
       amqp-pipeline demo [--documents N] [--index-processes N] [--instances N] [--work-us N] [--uri URI]";

fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args {
        uri: broker::default_uri(),
        actor: String::new(),
        inbox: None,
        outbox: None,
        instances: 1,
        documents: 10,
        output: None,
        work_us: 0,
        index_processes: 2,
    };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-a" | "--actor" => a.actor = value("-a")?,
            "-i" | "--inbox" => a.inbox = Some(value("-i")?),
            "-o" | "--outbox" => a.outbox = Some(value("-o")?),
            "-n" | "--instances" => a.instances = number(&value("-n")?, "-n")?,
            "-u" | "--uri" => a.uri = value("--uri")?,
            "--documents" => a.documents = number(&value("--documents")?, "--documents")?,
            "--output" => a.output = Some(PathBuf::from(value("--output")?)),
            "--work-us" => a.work_us = number(&value("--work-us")?, "--work-us")?,
            "--index-processes" => {
                a.index_processes = number(&value("--index-processes")?, "--index-processes")?
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if a.instances == 0 || a.index_processes == 0 {
        return Err("-n and --index-processes must be at least 1".to_owned());
    }
    Ok(a)
}

fn number<T: std::str::FromStr>(text: &str, name: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{name} = {text:?} is not a whole number"))
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let (demo, rest) = match argv.first().map(String::as_str) {
        Some("demo") => (true, &argv[1..]),
        _ => (false, &argv[..]),
    };
    let args = match parse(rest) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("amqp-pipeline: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = if demo {
        run_demo(&args)
    } else {
        run_stage(&args)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("amqp-pipeline: {e}");
            ExitCode::from(1)
        }
    }
}

/// Runs one stage until the drain has passed it.
fn run_stage(a: &Args) -> Result<(), String> {
    let report = match a.actor.as_str() {
        "download" => {
            let outbox = a.outbox.as_deref().ok_or("download needs -o OUTBOX")?;
            let stage = StageProcess::builder(a.uri.as_str(), "download", |_| Download)
                .outbox(outbox)
                .start()
                .map_err(|e| e.to_string())?;
            stage
                .send(a.documents)
                .map_err(|_| "the download stage refused its request")?;
            // Kabuki's shutdown(): the marker follows the documents.
            stage.drain()
        }
        "index" => {
            let (inbox, outbox) = match (&a.inbox, &a.outbox) {
                (Some(i), Some(o)) => (i, o),
                _ => return Err("index needs -i INBOX and -o OUTBOX".to_owned()),
            };
            let work = Duration::from_micros(a.work_us);
            let stage = StageProcess::builder(a.uri.as_str(), "index", move |_| Index { work })
                .inbox(inbox)
                .outbox(outbox)
                .instances(a.instances)
                .start()
                .map_err(|e| e.to_string())?;
            println!("ready");
            stage.drain()
        }
        "write" => {
            let inbox = a.inbox.as_deref().ok_or("write needs -i INBOX")?;
            let path = a.output.clone();
            let stage = StageProcess::builder(a.uri.as_str(), "write", move |_| Write {
                path: path.clone(),
                file: None,
            })
            .inbox(inbox)
            .start()
            .map_err(|e| e.to_string())?;
            println!("ready");
            stage.drain()
        }
        other => return Err(format!("-a {other:?}: expected download, index or write")),
    }
    .map_err(|e| e.to_string())?;
    println!("drained {report}");
    if !report.faults.is_empty() {
        return Err(format!(
            "{} faults: {:?}",
            report.faults.len(),
            report.faults
        ));
    }
    Ok(())
}

/// A line of a child process, with which process said it.
struct Line {
    process: String,
    text: String,
}

/// What the reader of a child's output tells: a line, or that the child
/// closed its output (it exited).
enum Said {
    Line(Line),
    Closed(String),
}

/// The demo's child processes: killed (and reaped) when dropped, so an
/// early return leaves none running.
struct Children(Vec<(String, Child)>);

impl Children {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn push(&mut self, label: String, child: Child) {
        self.0.push((label, child));
    }

    /// Waits for the child `label`, which closed its output, and says how
    /// it ended.
    fn exited(&mut self, label: &str) -> Result<std::process::ExitStatus, String> {
        let (_, child) = self
            .0
            .iter_mut()
            .find(|(l, _)| l == label)
            .ok_or_else(|| format!("no child {label}"))?;
        child
            .wait()
            .map_err(|e| format!("waiting for {label}: {e}"))
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for (_, child) in &mut self.0 {
            // An exited (and reaped) child is not killed again.
            if let Ok(None) = child.try_wait() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

fn spawn(label: &str, args: &[String], lines: &mpsc::Sender<Said>) -> Result<Child, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {label}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let tx = lines.clone();
    let process = label.to_owned();
    std::thread::spawn(move || {
        for text in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(Said::Line(Line {
                process: process.clone(),
                text,
            }));
        }
        let _ = tx.send(Said::Closed(process));
    });
    Ok(child)
}

/// Starts the broker if needed, then Write, the Index processes and
/// Download, and shows the drain passing through them.
fn run_demo(a: &Args) -> Result<(), String> {
    let publisher = broker::publisher(&a.uri)?;
    let prefix = format!("kabuki-{}", std::process::id());
    let (index_q, write_q) = (format!("{prefix}.index"), format!("{prefix}.write"));
    // Every child has exited, or was killed, by now.
    let result = run_children(a, &prefix, &index_q, &write_q);
    for q in [&index_q, &write_q] {
        for name in [q.clone(), format!("{q}.drain"), format!("{q}.dead")] {
            let _ = publisher.delete_queue(&name);
        }
    }
    result
}

/// Runs the stage processes of the demo and follows them to their end;
/// one that fails stops the others.
fn run_children(a: &Args, prefix: &str, index_q: &str, write_q: &str) -> Result<(), String> {
    let output = a
        .output
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("{prefix}.txt")));
    let uri = vec!["--uri".to_owned(), a.uri.clone()];
    let (tx, rx) = mpsc::channel::<Said>();
    println!(
        "Kabuki across processes: download -> index x {} processes ({} instances each) -> write; {} documents",
        a.index_processes, a.instances, a.documents
    );
    let started = Instant::now();
    let mut children = Children(Vec::new());
    let write_args: Vec<String> = ["-a", "write", "-i", write_q, "--output"]
        .iter()
        .map(|s| s.to_string())
        .chain([output.display().to_string()])
        .chain(uri.clone())
        .collect();
    children.push("write".to_owned(), spawn("write", &write_args, &tx)?);
    for p in 1..=a.index_processes {
        let label = format!("index#{p}");
        let args: Vec<String> = ["-a", "index", "-i", index_q, "-o", write_q]
            .iter()
            .map(|s| s.to_string())
            .chain([
                "-n".to_owned(),
                a.instances.to_string(),
                "--work-us".to_owned(),
                a.work_us.to_string(),
            ])
            .chain(uri.clone())
            .collect();
        children.push(label.clone(), spawn(&label, &args, &tx)?);
    }
    // Every consumer ready before the documents and the markers come.
    let mut ready = 0;
    while ready < children.len() {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Said::Line(line)) if line.text == "ready" => ready += 1,
            Ok(Said::Line(line)) => println!("  [{}] {}", line.process, line.text),
            Ok(Said::Closed(label)) => {
                let status = children.exited(&label)?;
                return Err(format!(
                    "{label} exited with {status} before it was ready; the other processes were stopped"
                ));
            }
            Err(_) => return Err("a stage did not start within 60 s".to_owned()),
        }
    }
    let download_args: Vec<String> = ["-a", "download", "-o", index_q, "--documents"]
        .iter()
        .map(|s| s.to_string())
        .chain([a.documents.to_string()])
        .chain(uri)
        .collect();
    children.push(
        "download".to_owned(),
        spawn("download", &download_args, &tx)?,
    );
    drop(tx);
    let mut written = 0;
    let mut open = children.len();
    while open > 0 {
        match rx.recv() {
            Ok(Said::Line(line)) => {
                if line.text.starts_with("wrote ") {
                    written += 1;
                    if written <= 3 || written == a.documents as usize {
                        println!("  [{}] {}", line.process, line.text);
                    } else if written == 4 {
                        println!("  [{}] ...", line.process);
                    }
                } else {
                    println!(
                        "  [{}] {} (at {:.2} s)",
                        line.process,
                        line.text,
                        started.elapsed().as_secs_f64()
                    );
                }
            }
            Ok(Said::Closed(label)) => {
                open -= 1;
                let status = children.exited(&label)?;
                println!("  {label} exited with {status}");
                // The others would wait for its markers for ever: they
                // are killed as `children` is dropped.
                if !status.success() {
                    return Err(format!(
                        "{label} exited with {status}; the other processes were stopped"
                    ));
                }
            }
            Err(_) => break,
        }
    }
    let lines = std::fs::read_to_string(&output)
        .map(|t| t.lines().count())
        .unwrap_or(0);
    println!(
        "write wrote {written} documents of {}; {} has {lines} lines; every process exited after the drain passed it, in {:.2} s",
        a.documents,
        output.display(),
        started.elapsed().as_secs_f64()
    );
    if written != a.documents as usize || lines != a.documents as usize {
        return Err("not every document reached the write stage".to_owned());
    }
    Ok(())
}
