//! Pipelines and stages on the dashboard (feature `actor`): showing them
//! (the dashboard keeps a stage monitor per stage, never the stage
//! itself) and the drain an action begins.

use crate::board::Dashboard;
use crate::names::unique_name;
use crate::watched_pipeline::WatchedPipeline;
use axum::http::StatusCode;
use priority_executor::actor::{Actor, Pipeline, Stage, StageMonitor};

impl Dashboard {
    /// Shows a stage, under its own name, as a pipeline of one. The
    /// dashboard keeps a [`StageMonitor`], not the stage: the stage's owner
    /// still drains, joins or drops it; the dashboard then shows how it
    /// ended. A drain action drains it.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    ///
    /// # Examples
    ///
    /// See [`PipelineSnapshot`](crate::PipelineSnapshot).
    pub fn stage<A: Actor>(self, stage: &Stage<A>) -> Dashboard {
        let name = stage.name().to_owned();
        self.monitors_named(name, vec![stage.monitor()])
    }

    /// Shows a pipeline, named after its first stage; its stages in
    /// order. As for [`stage`](Dashboard::stage), the dashboard keeps
    /// monitors, not the pipeline; a drain action drains the pipeline
    /// from its first stage.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Outbox, Pipeline, Stage};
    /// use priority_executor_dashboard::Dashboard;
    ///
    /// struct Pass;
    /// impl Actor for Pass {
    ///     type In = u8;
    ///     type Out = u8;
    ///     fn perform(&mut self, n: u8, out: &mut Outbox<'_, u8>) -> Result<(), ActorError> {
    ///         let _ = out.send(n);
    ///         Ok(())
    ///     }
    /// }
    /// let pipeline = Pipeline::builder(Stage::builder("parse", |_| Pass))
    ///     .then(Stage::builder("store", |_| Pass))
    ///     .spawn()
    ///     .unwrap();
    /// let dashboard = Dashboard::new().pipeline(&pipeline);
    /// let stages: Vec<String> = dashboard.snapshot().pipelines[0]
    ///     .stages
    ///     .iter()
    ///     .map(|s| s.name.clone())
    ///     .collect();
    /// assert_eq!(stages, ["parse", "store"]);
    /// ```
    pub fn pipeline<I>(self, pipeline: &Pipeline<I>) -> Dashboard {
        let monitors = pipeline.monitors();
        let name = monitors
            .first()
            .map_or_else(String::new, |m| m.name().to_owned());
        self.monitors_named(name, monitors)
    }

    /// Shows a pipeline under `name`. Names are how the drain action
    /// addresses a pipeline; a name already taken by another pipeline gets
    /// `#2`, `#3`… appended.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    pub fn pipeline_named<I>(self, name: impl Into<String>, pipeline: &Pipeline<I>) -> Dashboard {
        self.monitors_named(name.into(), pipeline.monitors())
    }

    fn monitors_named(self, wanted: String, stages: Vec<StageMonitor>) -> Dashboard {
        self.with(move |inner| {
            let name = unique_name(&wanted, |n| inner.pipelines.iter().any(|p| p.name == n));
            inner.pipelines.push(WatchedPipeline::new(name, stages));
        })
    }

    /// Begins the drain of the pipeline named `name`: the answer to a
    /// granted drain action.
    pub(crate) fn drain_pipeline(&self, name: &str) -> (StatusCode, String) {
        let Some(pipeline) = self.inner.pipelines.iter().find(|p| p.name == name) else {
            return (
                StatusCode::NOT_FOUND,
                "refused: no such pipeline".to_owned(),
            );
        };
        let Some(first) = pipeline.stages.first() else {
            return (StatusCode::CONFLICT, "refused: no stage".to_owned());
        };
        if let Some(reason) = first.finished() {
            return (
                StatusCode::CONFLICT,
                format!("refused: the pipeline has ended ({reason})"),
            );
        }
        first.drain();
        (StatusCode::OK, "ok".to_owned())
    }
}
