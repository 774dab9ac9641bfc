//! The routes, relative to wherever the application mounts the router.

use crate::board::Dashboard;
use crate::{actions, events, page};
use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};

impl Dashboard {
    /// The dashboard's routes, to mount in an application (or serve
    /// as they are):
    ///
    /// | route | what |
    /// |---|---|
    /// | `GET /` | the page |
    /// | `GET /app.js`, `GET /style.css` | its script and style |
    /// | `GET /api/snapshot` | the [`Snapshot`](crate::Snapshot) as JSON |
    /// | `GET /api/events` | server-sent `snapshot` events, one per period |
    /// | `POST /api/executors/{name}/lanes/{priority}/pause` | pause a lane (token) |
    /// | `POST /api/executors/{name}/lanes/{priority}/resume` | resume it (token) |
    /// | `POST /api/pipelines/{name}/drain` | drain a pipeline (token; feature `actor`) |
    ///
    /// Nested under a path (`Router::nest("/dashboard", …)`), the page is
    /// at `/dashboard` and finds the rest below it.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor_dashboard::Dashboard;
    ///
    /// let app: axum::Router = axum::Router::new().nest("/ops", Dashboard::new().router());
    /// # drop(app);
    /// ```
    pub fn router(&self) -> Router {
        let router = Router::new()
            .route("/", get(page::index))
            .route("/app.js", get(page::script))
            .route("/style.css", get(page::style))
            .route("/api/snapshot", get(snapshot))
            .route("/api/events", get(events::events))
            .route(
                "/api/executors/{executor}/lanes/{priority}/pause",
                post(actions::pause),
            )
            .route(
                "/api/executors/{executor}/lanes/{priority}/resume",
                post(actions::resume),
            );
        #[cfg(feature = "actor")]
        let router = router.route("/api/pipelines/{pipeline}/drain", post(actions::drain));
        router.with_state(self.clone())
    }
}

async fn snapshot(State(board): State<Dashboard>) -> Json<crate::Snapshot> {
    Json(board.snapshot())
}
