//! A real server on loopback, a real client, and a gate: what the tests
//! share. Waits are for outcomes, never sleeps as synchronisation.

use axum::Router;
use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// An axum server on 127.0.0.1 at a port the system chose.
pub struct Server {
    pub addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    pub async fn start(app: Router) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("bound address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
        });
        Server { addr, stop, task }
    }

    /// Starts a graceful shutdown: no new connections; the server's task
    /// ends once every request in flight is answered.
    pub fn begin_shutdown(self) -> JoinHandle<std::io::Result<()>> {
        let _ = self.stop.send(());
        self.task
    }
}

/// What a test reads of a response.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

/// A plain HTTP/1 client (hyper's).
#[derive(Clone)]
pub struct Http(Client<HttpConnector, Full<Bytes>>);

impl Http {
    pub fn new() -> Http {
        Http(Client::builder(TokioExecutor::new()).build_http())
    }

    /// `POST path` with these headers and body.
    pub async fn post(
        &self,
        addr: SocketAddr,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Answer {
        let mut request = Request::post(format!("http://{addr}{path}"));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("a valid request");
        let response = self.0.request(request).await.expect("the server answers");
        let (head, body) = response.into_parts();
        let body = body.collect().await.expect("the body arrives").to_bytes();
        Answer {
            status: head.status,
            headers: head.headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }
}

/// Waits until `cond` holds, failing after a generous limit: a wait for an
/// outcome that can only be polled (an executor's counters), not a timing.
pub async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let give_up = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < give_up, "gave up waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// A gate handlers wait on (on a worker thread) until the test opens it.
#[derive(Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    pub fn wait(&self) {
        let (open, changed) = &*self.0;
        let mut open = open.lock().expect("gate lock");
        while !*open {
            open = changed.wait(open).expect("gate lock");
        }
    }

    pub fn open(&self) {
        *self.0.0.lock().expect("gate lock") = true;
        self.0.1.notify_all();
    }
}

/// Holds `exec`'s one worker with a job of the test's own, at `priority`,
/// until `gate` opens; returns once the job runs.
pub async fn hold(
    exec: &priority_executor::Executor,
    priority: priority_executor::Priority,
    gate: &Gate,
) -> priority_executor::JobHandle<()> {
    let gate = gate.clone();
    let held = exec
        .enqueue(priority, move || gate.wait())
        .expect("accepted");
    until("the holding job runs", || exec.metrics().threads.busy == 1).await;
    held
}

/// Opens the gate when dropped, so a failing test never leaves a worker
/// stuck (and the executor's drop waiting for it).
pub struct OpenOnDrop(pub Gate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}
