//! chromedriver and its headless Chromium, on loopback, stopped however
//! the test ends.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Where the browser and its driver are: `$CHROMEDRIVER` and `$CHROMIUM`,
/// or Debian's paths.
pub struct Browser {
    pub driver: PathBuf,
    pub chromium: PathBuf,
}

impl Browser {
    /// The browser, or why there is none.
    pub fn find() -> Result<Browser, String> {
        let path = |var: &str, default: &str| {
            PathBuf::from(std::env::var(var).unwrap_or_else(|_| default.to_owned()))
        };
        let browser = Browser {
            driver: path("CHROMEDRIVER", "/usr/bin/chromedriver"),
            chromium: path("CHROMIUM", "/usr/bin/chromium"),
        };
        for p in [&browser.driver, &browser.chromium] {
            if !p.is_file() {
                return Err(format!("{} not found", p.display()));
            }
        }
        Ok(browser)
    }
}

/// A running chromedriver, in a process group of its own with the
/// browsers it starts: dropping it kills the whole group and reaps the
/// driver, on success and on panic alike.
pub struct Driver {
    child: Child,
    pub url: String,
}

impl Driver {
    /// Starts chromedriver on a free loopback port and returns once it
    /// says it is ready.
    pub fn start(browser: &Browser) -> Driver {
        use std::os::unix::process::CommandExt;
        let port = {
            let probe = TcpListener::bind("127.0.0.1:0").expect("a free port");
            probe.local_addr().unwrap().port()
        };
        let mut child = Command::new(&browser.driver)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start chromedriver");
        let stdout = child.stdout.take().unwrap();
        let driver = Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let (ready, started) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains("started successfully") {
                    let _ = ready.send(());
                }
            }
        });
        started
            .recv_timeout(Duration::from_secs(60))
            .expect("chromedriver says it started");
        driver
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The group id is the driver's pid (`process_group(0)`).
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The capabilities of a headless Chromium that touches nothing but
/// loopback.
pub fn capabilities(
    browser: &Browser,
    profile: &std::path::Path,
) -> serde_json::Map<String, serde_json::Value> {
    let options = serde_json::json!({
        "binary": browser.chromium,
        "args": [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-sync",
            "--disable-extensions",
            format!("--user-data-dir={}", profile.display()),
        ],
    });
    let mut caps = serde_json::Map::new();
    caps.insert("browserName".into(), "chrome".into());
    caps.insert("goog:chromeOptions".into(), options);
    caps
}
