//! A loopback TCP proxy to the broker whose connections can be cut (the
//! peer sees them close) or stalled (they stay open and nothing passes,
//! as through a partition or a stuck middlebox).

use crate::common::uri;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

/// Whether bytes pass; the copiers wait on it.
#[derive(Default)]
struct Valve {
    stalled: Mutex<bool>,
    changed: Condvar,
}

impl Valve {
    fn set(&self, stalled: bool) {
        *self.stalled.lock().unwrap() = stalled;
        self.changed.notify_all();
    }

    fn wait_open(&self) {
        let mut stalled = self.stalled.lock().unwrap();
        while *stalled {
            stalled = self.changed.wait(stalled).unwrap();
        }
    }
}

pub struct Proxy {
    port: u16,
    open: Arc<Mutex<Vec<TcpStream>>>,
    valve: Arc<Valve>,
}

impl Proxy {
    fn start(upstream: String) -> io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let valve: Arc<Valve> = Arc::default();
        let (o, v) = (open.clone(), valve.clone());
        thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else {
                    continue;
                };
                {
                    let mut open = o.lock().unwrap();
                    open.extend(client.try_clone());
                    open.extend(server.try_clone());
                }
                let (v1, v2) = (v.clone(), v.clone());
                thread::spawn(move || copy(client, s2, &v1));
                thread::spawn(move || copy(server, c2, &v2));
            }
        });
        Ok(Proxy { port, open, valve })
    }

    /// Cuts every connection through the proxy (new ones still pass).
    pub fn cut(&self) {
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Stops passing bytes and closes, both ways, on every connection,
    /// new ones included; the connections stay open. What was read is
    /// held.
    pub fn stall(&self) {
        self.valve.set(true);
    }

    /// Passes bytes again, what was held first.
    pub fn resume(&self) {
        self.valve.set(false);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.resume();
        self.cut();
    }
}

/// Copies `from` to `to` while the valve is open; closes `to` at the end,
/// once the valve is open (a close does not pass a stall either).
fn copy(mut from: TcpStream, mut to: TcpStream, valve: &Valve) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        valve.wait_open();
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    valve.wait_open();
    let _ = to.shutdown(Shutdown::Both);
}

/// A proxy to the broker, and the URI that goes through it.
pub fn proxied() -> (Proxy, String) {
    let real = uri();
    let parsed: lapin::uri::AMQPUri = real.parse().expect("uri");
    let upstream = format!("{}:{}", parsed.authority.host, parsed.authority.port);
    let proxy = Proxy::start(upstream).expect("proxy");
    let via_proxy = format!(
        "amqp://{}:{}@127.0.0.1:{}/{}",
        parsed.authority.userinfo.username,
        parsed.authority.userinfo.password,
        proxy.port,
        urlencode(&parsed.vhost)
    );
    (proxy, via_proxy)
}

fn urlencode(vhost: &str) -> String {
    vhost
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
