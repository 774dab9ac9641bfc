//! The dashboard's page as the test sees it through WebDriver. The page
//! re-renders on every event, so each look finds its element afresh and
//! retries until the outcome shows or a generous limit passes (this
//! waits for outcomes; it asserts no timing).

use fantoccini::{Client, ClientBuilder, Locator};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(25);

pub struct Page {
    client: Client,
}

impl Page {
    pub async fn open(
        driver: &str,
        caps: serde_json::Map<String, serde_json::Value>,
        server: SocketAddr,
    ) -> Page {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(driver)
            .await
            .expect("a WebDriver session");
        let page = Page { client };
        page.client
            .goto(&format!("http://{server}/"))
            .await
            .expect("load the dashboard");
        page
    }

    async fn retry<T>(&self, what: &str, mut look: impl AsyncFnMut(&Client) -> Option<T>) -> T {
        let give_up = Instant::now() + LIMIT;
        loop {
            if let Some(found) = look(&self.client).await {
                return found;
            }
            assert!(Instant::now() < give_up, "gave up waiting for {what}");
            tokio::time::sleep(POLL).await;
        }
    }

    /// The text of the element `css` shows now.
    pub async fn text(&self, css: &str) -> String {
        self.retry(css, async |c: &Client| {
            c.find(Locator::Css(css)).await.ok()?.text().await.ok()
        })
        .await
    }

    /// Waits until the element `css` shows `want`.
    pub async fn wait_text(&self, css: &str, want: &str) {
        let what = format!("{css} to show {want:?}");
        self.retry(&what, async |c: &Client| {
            let text = c.find(Locator::Css(css)).await.ok()?.text().await.ok()?;
            (text.trim() == want).then_some(())
        })
        .await;
    }

    /// Waits until the element `css` shows a number.
    pub async fn wait_number(&self, css: &str) {
        let what = format!("{css} to show a number");
        self.retry(&what, async |c: &Client| {
            let text = c.find(Locator::Css(css)).await.ok()?.text().await.ok()?;
            text.trim().parse::<f64>().ok().map(drop)
        })
        .await;
    }

    /// Waits until the element `css` has `attr` set to `want`.
    pub async fn wait_attr(&self, css: &str, attr: &str, want: &str) {
        let what = format!("{css} [{attr}] to be {want:?}");
        self.retry(&what, async |c: &Client| {
            let value = c
                .find(Locator::Css(css))
                .await
                .ok()?
                .attr(attr)
                .await
                .ok()??;
            (value == want).then_some(())
        })
        .await;
    }

    /// Clicks the element `css` (found afresh until a click lands).
    pub async fn click(&self, css: &str) {
        self.retry(css, async |c: &Client| {
            c.find(Locator::Css(css)).await.ok()?.click().await.ok()
        })
        .await;
    }

    /// Puts `token` in the page's token field.
    pub async fn type_token(&self, token: &str) {
        self.retry("the token field", async |c: &Client| {
            let field = c.find(Locator::Css("#token")).await.ok()?;
            field.clear().await.ok()?;
            field.send_keys(token).await.ok()
        })
        .await;
    }

    pub async fn close(self) {
        let _ = self.client.close().await;
    }
}
