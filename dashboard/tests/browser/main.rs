//! The dashboard in a real browser: a headless Chromium, driven over
//! WebDriver, loads the page of a running executor, sees its lanes and
//! their queued counts change as jobs run, pauses a lane with the token
//! and sees its dispatches stop and resume, sees a pipeline's stages and
//! drains it, and sees an action refused without the token; and, once
//! the event streams end, still sees the lanes change (`fallback.rs`).
//!
//! Needs Debian's `chromium` and `chromium-driver` (`scripts/browser
//! install`). Without them the tests say so and pass, unless `CI` is
//! set: then they fail.

mod driver;
mod fallback;
mod page;
#[cfg(feature = "actor")]
mod pipeline;

use driver::{Browser, Driver, capabilities};
use page::Page;
use priority_executor::{Capacity, Executor, Priority};
use priority_executor_dashboard::{Actions, Dashboard};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;
use tokio::sync::{Mutex, MutexGuard};

const TOKEN: &str = "browser-test-token";

/// One browser at a time: the machine's cores are few.
static ONE_BROWSER: Mutex<()> = Mutex::const_new(());

/// A headless browser showing the dashboard served at `server`.
pub struct Session {
    pub page: Page,
    driver: Driver,
    profile: PathBuf,
    _one: MutexGuard<'static, ()>,
}

impl Session {
    /// Opens the page in a browser of its own (profile `name`), or `None`
    /// when there is no browser and `CI` is not set: the test is skipped.
    pub async fn open(name: &str, server: SocketAddr) -> Option<Session> {
        let browser = match Browser::find() {
            Ok(browser) => browser,
            Err(why) if std::env::var_os("CI").is_some() => {
                panic!("CI is set and the browser is missing ({why}): run scripts/browser install")
            }
            Err(why) => {
                eprintln!("skipped: {why} (scripts/browser install)");
                return None;
            }
        };
        let one = ONE_BROWSER.lock().await;
        let profile =
            std::env::temp_dir().join(format!("dashboard-browser-{name}-{}", std::process::id()));
        let driver = Driver::start(&browser);
        let page = Page::open(&driver.url, capabilities(&browser, &profile), server).await;
        Some(Session {
            page,
            driver,
            profile,
            _one: one,
        })
    }

    /// Closes the browser and removes its profile.
    pub async fn close(self) {
        self.page.close().await;
        drop(self.driver);
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn jobs(exec: &Executor, priority: u32, n: usize) {
    for _ in 0..n {
        let _detached = exec.enqueue(Priority(priority), || ()).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_the_lanes_and_pauses_one_with_the_token() {
    // One worker, so the test decides what runs when.
    let exec = Executor::builder()
        .name("demo")
        .record_waits(true)
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let board = Dashboard::new().executor(&exec);
    #[cfg(feature = "actor")]
    let pipeline = pipeline::spawn();
    #[cfg(feature = "actor")]
    let twins = pipeline::spawn_twins();
    #[cfg(feature = "actor")]
    let board = board.pipeline(&pipeline).pipeline(&twins);
    #[cfg(feature = "amqp")]
    let board = board.bridge_with("orders", bridge_queues);
    let server = board
        .actions(Actions::with_token("browser-test", TOKEN))
        .on_action(|_| {})
        .period(Duration::from_millis(100))
        .spawn("127.0.0.1:0")
        .unwrap();
    let Some(session) = Session::open("lanes", server.local_addr()).await else {
        return;
    };
    let page = &session.page;

    // The lanes of the running executor.
    page.wait_text(
        "tr[data-executor='demo'][data-priority='10'] td[data-field='state']",
        "running",
    )
    .await;
    page.wait_text(
        "tr[data-executor='demo'][data-priority='1'] td[data-field='state']",
        "running",
    )
    .await;

    // Queued jobs behind a held worker, then run.
    let (release, gate) = mpsc::channel::<()>();
    let (started_tx, started) = mpsc::channel();
    let _held = exec.enqueue(Priority(10), move || {
        started_tx.send(()).ok();
        gate.recv().ok();
    });
    started.recv().unwrap();
    jobs(&exec, 1, 30);
    let low = |field: &str| {
        format!("tr[data-executor='demo'][data-priority='1'] td[data-field='{field}']")
    };
    let high = |field: &str| {
        format!("tr[data-executor='demo'][data-priority='10'] td[data-field='{field}']")
    };
    page.wait_text(&low("queued"), "30").await;
    drop(release);
    page.wait_text(&low("queued"), "0").await;
    page.wait_text(&low("dispatched"), "30").await;

    // Pause the low lane with the token: its jobs wait while the high
    // lane's run.
    page.type_token(TOKEN).await;
    page.click("button[data-action='pause'][data-executor='demo'][data-priority='1']")
        .await;
    page.wait_text(&low("state"), "paused").await;
    assert!(exec.is_lane_paused(Priority(1)));
    jobs(&exec, 1, 20);
    jobs(&exec, 10, 5);
    page.wait_text(&high("dispatched"), "6").await;
    page.wait_text(&low("queued"), "20").await;
    assert_eq!(page.text(&low("dispatched")).await, "30");
    assert_eq!(exec.metrics().lane(Priority(1)).unwrap().dispatched, 30);

    // Resume: what waited runs.
    page.click("button[data-action='resume'][data-executor='demo'][data-priority='1']")
        .await;
    page.wait_text(&low("state"), "running").await;
    page.wait_text(&low("dispatched"), "50").await;
    page.wait_text(&low("queued"), "0").await;
    // The waits of the jobs that just ran, over the window.
    page.wait_number(&low("wait_p50_ms_window")).await;
    page.wait_number(&low("wait_p99_ms_window")).await;

    // A bridge's queues, as its counters read.
    #[cfg(feature = "amqp")]
    {
        let cell = |field: &str| {
            format!("tr[data-bridge='orders'][data-queue='visa'] td[data-field='{field}']")
        };
        page.wait_text(&cell("acked"), "7").await;
        assert_eq!(page.text(&cell("connected")).await, "connected");
        assert_eq!(page.text(&cell("dead_lettered")).await, "2");
    }

    // A pipeline's stages, in order; drained with the token.
    #[cfg(feature = "actor")]
    pipeline::check(page, &pipeline).await;
    #[cfg(feature = "actor")]
    pipeline::check_twins(page, twins).await;

    // Without the token: refused, and the lane stays as it was.
    page.type_token("").await;
    page.click("button[data-action='pause'][data-executor='demo'][data-priority='1']")
        .await;
    page.wait_attr("#action-status", "data-status", "401").await;
    assert!(!exec.is_lane_paused(Priority(1)));
    page.wait_text(
        "#actions tbody tr:first-child td:last-child",
        "refused: no valid bearer token",
    )
    .await;

    session.close().await;
    server.stop();
    exec.shutdown();
}

/// A bridge's queues without a broker: one connected queue with a few
/// counts.
#[cfg(feature = "amqp")]
fn bridge_queues() -> Vec<priority_executor_amqp::ConsumerMetrics> {
    let mut visa = priority_executor_amqp::ConsumerMetrics::default();
    visa.queue = "visa".to_owned();
    visa.connected = true;
    visa.acked = 7;
    visa.dead_lettered = 2;
    vec![visa]
}
