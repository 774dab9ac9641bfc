//! The two runs: the flood on the priority executor, then on a plain FIFO
//! pool, and what is printed and drawn of them.

use priority_executor::Priority;
use std::time::Duration;

use crate::chart::chart;
use crate::cli::Options;
use crate::flood::{FifoTarget, PriorityTarget, flood};
use crate::json;
use crate::progress::{multi_progress, progress_bars};
use crate::serve;
use crate::source::executor_for;
use crate::stats::{fmt_duration, print_table, stats};
use crate::timeline::{Class, classes};

/// Floods the priority executor, then the FIFO pool, with the same
/// applications; prints a table per run and draws the chart.
pub fn run(options: &Options) -> Result<(), String> {
    let (owner, source) = executor_for(options)?;
    let executor = owner.executor();
    let config = executor.config();
    let priorities: Vec<Priority> = config.lanes.iter().map(|lane| lane.priority).collect();
    let (high, low) = match (priorities.first(), priorities.last()) {
        (Some(&h), Some(&l)) if h != l => (h, l),
        _ => {
            return Err(format!(
                "executor '{}' needs at least two lanes, it has {}",
                executor.name(),
                priorities.len()
            ));
        }
    };
    let classes = classes(options.jobs, options.ratio);
    let counts =
        [Class::Priority, Class::Standard].map(|c| classes.iter().filter(|&&x| x == c).count());
    let weights: Vec<u32> = executor
        .metrics()
        .lanes
        .iter()
        .filter(|l| l.priority == high || l.priority == low)
        .map(|l| l.weight)
        .collect();
    let configured = match weights.as_slice() {
        [h, l] => 100.0 * f64::from(*h) / f64::from(h + l),
        _ => f64::NAN,
    };

    let multi = multi_progress(options.progress);

    let arrival = if options.arrive_over.is_zero() {
        "at once".to_string()
    } else {
        format!("over {}", fmt_duration(options.arrive_over))
    };
    println!(
        "After the holiday, {} visa applications arrive {arrival}: {} priority, {} standard, \
         {} us of processing each.",
        options.jobs,
        counts[0],
        counts[1],
        options.work.as_micros()
    );
    println!(
        "Executor {} ({source}): lanes {}, picker {}, {} threads.",
        executor.name(),
        priorities
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" and "),
        config.picker,
        options.threads
    );
    for lane in &executor.metrics().lanes {
        if let Some(cap) = lane.max_running {
            println!(
                "Reserved workers: lane {} runs at most {cap} of the {} threads at once.",
                lane.priority, options.threads
            );
        }
    }

    let server = serve::start(options, &executor)?;
    let name = executor.name().to_string();
    let target = PriorityTarget::new(&executor, high, low, classes.len());
    let bars = progress_bars(&multi, "executor", counts);
    let timeline = flood(&target, &classes, options.work, options.arrive_over, &bars)?;
    let threads = options.threads;
    let picker = config.picker.as_str();
    drop(target);
    drop(executor);
    owner.shutdown();
    let executor_stats = stats(&timeline, &classes);

    let fifo = FifoTarget::new(threads);
    let bars = progress_bars(&multi, "FIFO", counts);
    let timeline = flood(&fifo, &classes, options.work, options.arrive_over, &bars)?;
    let fifo_stats = stats(&timeline, &classes);
    multi.clear().ok();

    println!();
    print_table(
        &format!("{name}, picker {picker}, {threads} threads"),
        &[
            ("priority", high.to_string()),
            ("standard", low.to_string()),
        ],
        &executor_stats,
    );
    println!();
    print_table(
        &format!("plain FIFO pool (threadpool crate), {threads} threads"),
        &[("priority", "-".to_string()), ("standard", "-".to_string())],
        &fifo_stats,
    );
    println!();
    println!(
        "* share of the dispatches made while both classes had applications waiting \
         (configured: {configured:.1}% priority)"
    );
    let (ours, theirs) = (executor_stats[0].done_at, fifo_stats[0].done_at);
    println!(
        "last priority application done after {} on the priority executor, {} on the FIFO pool",
        fmt_duration(ours),
        fmt_duration(theirs)
    );
    let (ours, theirs) = (executor_stats[0].p99, fifo_stats[0].p99);
    if ours > Duration::ZERO {
        println!(
            "priority p99 wait: {} on the priority executor, {} on the FIFO pool ({:.1}x shorter)",
            fmt_duration(ours),
            fmt_duration(theirs),
            theirs.as_secs_f64() / ours.as_secs_f64()
        );
    }

    if let Some(path) = &options.json {
        let runs = [
            json::Run {
                target: "priority executor",
                executor: Some(&name),
                picker: Some(picker),
                lanes: [Some(high.0), Some(low.0)],
                stats: &executor_stats,
            },
            json::Run {
                target: "FIFO pool",
                executor: None,
                picker: None,
                lanes: [None, None],
                stats: &fifo_stats,
            },
        ];
        json::write(path, &json::document(options, &runs)?)?;
        println!("results: {}", path.display());
    }

    chart(
        &options.svg,
        &[
            ("priority executor", &executor_stats),
            ("FIFO pool", &fifo_stats),
        ],
    )?;
    println!("chart: {}", options.svg.display());
    serve::linger(server);
    Ok(())
}
