//! The ready server: the router on its own thread and tokio runtime, for
//! applications (like the floodgate demo) that have no async runtime.

use crate::board::Dashboard;
use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Where [`Dashboard::spawn`] listens unless told otherwise: loopback only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

/// How long a stopping server waits for its connections to close.
const GRACE: Duration = Duration::from_secs(5);

/// A running dashboard server. Dropping it stops the server (as
/// [`stop`](Server::stop)).
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Dashboard {
    /// Serves the dashboard on `addr` from a thread of its own. Only a
    /// loopback address is accepted unless
    /// [`spawn_beyond_loopback`](Dashboard::spawn_beyond_loopback) is
    /// used: the page shows the executors to whoever can reach it.
    ///
    /// # Errors
    ///
    /// The address does not resolve or cannot be bound, or it is not a
    /// loopback address (`PermissionDenied`).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use priority_executor_dashboard::Dashboard;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let server = Dashboard::new().executor(&exec).spawn("127.0.0.1:0").unwrap();
    /// assert!(server.local_addr().ip().is_loopback());
    /// assert!(Dashboard::new().spawn("0.0.0.0:0").is_err());
    /// server.stop();
    /// ```
    pub fn spawn(&self, addr: impl ToSocketAddrs) -> io::Result<Server> {
        self.spawn_inner(addr, false)
    }

    /// As [`spawn`](Dashboard::spawn), on any address.
    ///
    /// # Errors
    ///
    /// The address does not resolve or cannot be bound.
    pub fn spawn_beyond_loopback(&self, addr: impl ToSocketAddrs) -> io::Result<Server> {
        self.spawn_inner(addr, true)
    }

    fn spawn_inner(&self, addr: impl ToSocketAddrs, any: bool) -> io::Result<Server> {
        let addrs: Vec<SocketAddr> = addr.to_socket_addrs()?.collect();
        if !any && addrs.iter().any(|a| !a.ip().is_loopback()) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "the dashboard binds loopback addresses only, unless spawn_beyond_loopback is used",
            ));
        }
        let listener = TcpListener::bind(&addrs[..])?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        // Streams of its own: stopping this server ends them, and only
        // them (not a router of the same dashboard mounted elsewhere, nor
        // a server spawned later).
        let board = Dashboard {
            inner: Arc::clone(&self.inner),
            closing: Arc::new(tokio::sync::watch::channel(false).0),
        };
        let thread = std::thread::Builder::new()
            .name("dashboard".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let app = board
                        .router()
                        .into_make_service_with_connect_info::<SocketAddr>();
                    let closing = Arc::clone(&board.closing);
                    let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                        let _ = stopped.await;
                        // Event streams end, so their connections close.
                        closing.send_replace(true);
                    });
                    let mut closed = board.closing.subscribe();
                    tokio::select! {
                        _ = serve => {}
                        _ = async {
                            let _ = closed.wait_for(|c| *c).await;
                            tokio::time::sleep(GRACE).await;
                        } => {}
                    }
                });
            })?;
        Ok(Server {
            addr: local,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Server {
    /// The address the server listens on (with the port chosen, for port
    /// 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the server: no new connection is accepted, event streams end,
    /// and this returns once its thread has (within a few seconds if a
    /// client holds a connection open).
    pub fn stop(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop_now();
    }
}
