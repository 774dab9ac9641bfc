//! The classic priority pool: one `Mutex<BinaryHeap>` and a `Condvar`, the
//! way a Java `ThreadPoolExecutor` over a `PriorityBlockingQueue` works.
//! Strict priority; a sequence number keeps equal priorities FIFO (Java's
//! queue does not even do that).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

struct Entry {
    priority: u32,
    seq: u64,
    job: Job,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Max-heap: higher priority first, then the older job.
        self.priority
            .cmp(&other.priority)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

#[derive(Default)]
struct State {
    heap: BinaryHeap<Entry>,
    seq: u64,
    shutdown: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    available: Condvar,
}

pub struct HeapPool {
    shared: Arc<Shared>,
    lanes: usize,
    workers: Vec<JoinHandle<()>>,
}

impl HeapPool {
    pub fn new(threads: usize, lanes: usize) -> HeapPool {
        let shared = Arc::new(Shared::default());
        let workers = (0..threads)
            .map(|_| {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || worker(&shared))
            })
            .collect();
        HeapPool {
            shared,
            lanes,
            workers,
        }
    }
}

fn worker(shared: &Shared) {
    loop {
        let job = {
            let mut state = shared.state.lock().expect("heap pool lock");
            loop {
                if let Some(entry) = state.heap.pop() {
                    break entry.job;
                }
                if state.shutdown {
                    return;
                }
                state = shared.available.wait(state).expect("heap pool lock");
            }
        };
        job();
    }
}

impl super::Pool for HeapPool {
    #[inline]
    fn spawn<F>(&self, lane: usize, job: F)
    where
        F: FnOnce() + Send + 'static,
    {
        // Lane 0 is the most important, so it gets the largest priority.
        let priority = (self.lanes.max(1) - lane.min(self.lanes.max(1) - 1)) as u32;
        {
            let mut state = self.shared.state.lock().expect("heap pool lock");
            let seq = state.seq;
            state.seq += 1;
            state.heap.push(Entry {
                priority,
                seq,
                job: Box::new(job),
            });
        }
        self.shared.available.notify_one();
    }
}

impl Drop for HeapPool {
    fn drop(&mut self) {
        self.shared.state.lock().expect("heap pool lock").shutdown = true;
        self.shared.available.notify_all();
        for worker in self.workers.drain(..) {
            worker.join().expect("worker panicked");
        }
    }
}
