//! The pools a user would pick instead, each as it is meant to be used.

use std::time::Duration;

pub struct RayonPool(rayon::ThreadPool);

impl RayonPool {
    pub fn new(threads: usize) -> RayonPool {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("rayon pool");
        RayonPool(pool)
    }
}

impl super::Pool for RayonPool {
    #[inline]
    fn spawn<F>(&self, _lane: usize, job: F)
    where
        F: FnOnce() + Send + 'static,
    {
        self.0.spawn(job);
    }
}

pub struct ThreadpoolPool(threadpool::ThreadPool);

impl ThreadpoolPool {
    pub fn new(threads: usize) -> ThreadpoolPool {
        ThreadpoolPool(threadpool::ThreadPool::new(threads))
    }
}

impl super::Pool for ThreadpoolPool {
    #[inline]
    fn spawn<F>(&self, _lane: usize, job: F)
    where
        F: FnOnce() + Send + 'static,
    {
        self.0.execute(job);
    }
}

impl Drop for ThreadpoolPool {
    fn drop(&mut self) {
        self.0.join();
    }
}

pub struct RustyPool(Option<rusty_pool::ThreadPool>);

impl RustyPool {
    pub fn new(threads: usize) -> RustyPool {
        // core = max: the same fixed thread count as every other pool.
        let pool = rusty_pool::ThreadPool::new(threads, threads, Duration::from_secs(60));
        pool.start_core_threads();
        RustyPool(Some(pool))
    }
}

impl super::Pool for RustyPool {
    #[inline]
    fn spawn<F>(&self, _lane: usize, job: F)
    where
        F: FnOnce() + Send + 'static,
    {
        if let Some(pool) = &self.0 {
            pool.execute(job);
        }
    }
}

impl Drop for RustyPool {
    fn drop(&mut self) {
        if let Some(pool) = self.0.take() {
            pool.shutdown_join();
        }
    }
}

/// rayon's pool with `spawn_fifo`: jobs in the order they were given, as
/// every other pool here runs them.
pub struct RayonFifoPool(rayon::ThreadPool);

impl RayonFifoPool {
    pub fn new(threads: usize) -> RayonFifoPool {
        RayonFifoPool(RayonPool::new(threads).0)
    }
}

impl super::Pool for RayonFifoPool {
    #[inline]
    fn spawn<F>(&self, _lane: usize, job: F)
    where
        F: FnOnce() + Send + 'static,
    {
        self.0.spawn_fifo(job);
    }
}

/// tokio's blocking pool, where a tokio application sends blocking work:
/// `threads` blocking threads, spawned into from outside the runtime.
pub struct TokioBlockingPool(Option<tokio::runtime::Runtime>);

impl TokioBlockingPool {
    pub fn new(threads: usize) -> TokioBlockingPool {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(threads)
            .build()
            .expect("tokio runtime");
        TokioBlockingPool(Some(runtime))
    }
}

impl super::Pool for TokioBlockingPool {
    #[inline]
    fn spawn<F>(&self, _lane: usize, job: F)
    where
        F: FnOnce() + Send + 'static,
    {
        if let Some(runtime) = &self.0 {
            drop(runtime.spawn_blocking(job));
        }
    }
}

impl Drop for TokioBlockingPool {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_timeout(Duration::from_secs(10));
        }
    }
}
