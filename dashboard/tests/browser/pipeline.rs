//! The pipelines panel in the browser: a pipeline's stages listed in
//! order with what they performed, and drained from the page; stages of
//! the same name each on a row of their own.

use crate::page::Page;
use priority_executor::actor::{Actor, ActorError, Outbox, Pipeline, Stage};

/// Forwards everything.
struct Pass;

impl Actor for Pass {
    type In = u32;
    type Out = u32;

    fn perform(&mut self, n: u32, out: &mut Outbox<'_, u32>) -> Result<(), ActorError> {
        let _ = out.send(n);
        Ok(())
    }
}

/// Forwards the even numbers only.
struct Evens;

impl Actor for Evens {
    type In = u32;
    type Out = u32;

    fn perform(&mut self, n: u32, out: &mut Outbox<'_, u32>) -> Result<(), ActorError> {
        if n.is_multiple_of(2) {
            let _ = out.send(n);
        }
        Ok(())
    }
}

/// `ingest` then `store`, with three messages sent.
pub fn spawn() -> Pipeline<u32> {
    let pipeline = Pipeline::builder(Stage::builder("ingest", |_| Pass))
        .then(Stage::builder("store", |_| Pass))
        .spawn()
        .unwrap();
    for n in 0..3 {
        pipeline.addr().send(n).unwrap();
    }
    pipeline
}

fn cell(stage: &str, field: &str) -> String {
    format!("tr[data-pipeline='ingest'][data-stage='{stage}'] td[data-field='{field}']")
}

/// The page lists both stages in order and, with the token typed, drains
/// the pipeline from its Drain button.
pub async fn check(page: &Page, pipeline: &Pipeline<u32>) {
    page.wait_text(
        "tr[data-pipeline='ingest']:first-child td[data-field='name']",
        "ingest",
    )
    .await;
    page.wait_text(
        "tr[data-pipeline='ingest']:nth-child(2) td[data-field='name']",
        "store",
    )
    .await;
    page.wait_text(&cell("store", "performed"), "3").await;
    page.click("button[data-action='drain'][data-pipeline='ingest']")
        .await;
    page.wait_text(&cell("ingest", "state"), "drained").await;
    page.wait_text(&cell("store", "state"), "drained").await;
    assert!(pipeline.addr().is_shut_down());
}

/// Two stages both named `pass`, the first forwarding half of what it
/// gets, with four messages sent: the first performs 4, the second 2.
pub fn spawn_twins() -> Pipeline<u32> {
    let pipeline = Pipeline::builder(Stage::builder("pass", |_| Evens))
        .then(Stage::builder("pass", |_| Pass))
        .spawn()
        .unwrap();
    for n in 0..4 {
        pipeline.addr().send(n).unwrap();
    }
    pipeline
}

/// The page shows each of the twin stages on its own row, with its own
/// count.
pub async fn check_twins(page: &Page, pipeline: Pipeline<u32>) {
    let row = |nth: usize, field: &str| {
        format!("tr[data-pipeline='pass']:nth-child({nth}) td[data-field='{field}']")
    };
    page.wait_text(&row(1, "performed"), "4").await;
    page.wait_text(&row(2, "performed"), "2").await;
    assert_eq!(page.text(&row(1, "name")).await, "pass");
    assert_eq!(page.text(&row(2, "name")).await, "pass");
    pipeline.drain();
}
