//! Server-sent events: a `snapshot` event at once, then one every period
//! (about a second), each the JSON of [`Dashboard::snapshot`]. The stream
//! ends at [`Dashboard::close_streams`], or when the ready server that
//! serves it stops.

use crate::board::Dashboard;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use futures_util::stream;
use std::convert::Infallible;
use tokio::time::{Instant, MissedTickBehavior, interval_at};

/// `GET …/api/events`.
pub(crate) async fn events(
    State(board): State<Dashboard>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let mut ticks = interval_at(Instant::now(), board.inner.period);
    // A slow viewer gets the latest snapshot, not a backlog of old ones.
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let closing = board.closing.subscribe();
    let state = (board, ticks, closing, 0u64);
    let stream = stream::unfold(state, |(board, mut ticks, mut closing, seq)| async move {
        if *closing.borrow() {
            return None;
        }
        tokio::select! {
            _ = ticks.tick() => {}
            _ = closing.changed() => return None,
        }
        let snapshot = board.snapshot();
        let event = Event::default()
            .event("snapshot")
            .id(seq.to_string())
            .json_data(&snapshot)
            .unwrap_or_else(|_| Event::default().event("error").data("snapshot"));
        Some((Ok(event), (board, ticks, closing, seq + 1)))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
