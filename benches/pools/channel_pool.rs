//! The plainest pool there is: workers looping over one crossbeam channel.

use std::thread::JoinHandle;

use crossbeam_channel::{Sender, unbounded};

type Job = Box<dyn FnOnce() + Send>;

pub struct ChannelPool {
    sender: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl ChannelPool {
    pub fn new(threads: usize) -> ChannelPool {
        let (sender, receiver) = unbounded::<Job>();
        let workers = (0..threads)
            .map(|_| {
                let receiver = receiver.clone();
                std::thread::spawn(move || {
                    for job in receiver.iter() {
                        job();
                    }
                })
            })
            .collect();
        ChannelPool {
            sender: Some(sender),
            workers,
        }
    }
}

impl super::Pool for ChannelPool {
    #[inline]
    fn spawn<F>(&self, _lane: usize, job: F)
    where
        F: FnOnce() + Send + 'static,
    {
        if let Some(sender) = &self.sender {
            sender.send(Box::new(job)).expect("workers are alive");
        }
    }
}

impl Drop for ChannelPool {
    fn drop(&mut self) {
        // Disconnecting lets the workers drain the channel and return.
        self.sender = None;
        for worker in self.workers.drain(..) {
            worker.join().expect("worker panicked");
        }
    }
}
