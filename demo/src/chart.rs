//! The SVG chart: the share of each class completed over time, per run.

use std::path::Path;

use plotters::prelude::*;

use crate::stats::LaneStats;
use crate::timeline::Class;

/// Draws the completion curves of `runs` (the executor first, drawn solid;
/// the FIFO pool dashed) as an SVG chart at `path`.
pub fn chart(path: &Path, runs: &[(&str, &[LaneStats; 2])]) -> Result<(), String> {
    let x_max = runs
        .iter()
        .flat_map(|(_, s)| s.iter().map(|l| l.done_at.as_secs_f64()))
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.02;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create the chart's folder: {e}", dir.display()))?;
    }
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Floodgate: applications completed over time",
                ("sans-serif", 22),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..x_max, 0.0..100.0)?;
        chart
            .configure_mesh()
            .x_desc("seconds since the flood arrived")
            .y_desc("% of the class completed")
            .y_label_formatter(&|v| format!("{v:.0}%"))
            .draw()?;
        // The executor's classes solid, the FIFO pool's dashed in other
        // colours (on a FIFO pool the two classes' curves lie on top of
        // each other).
        let colours = [
            [RED, BLUE],
            [RGBColor(230, 140, 0), RGBColor(100, 100, 100)],
        ];
        for (run, (name, stats)) in runs.iter().enumerate() {
            for (lane, s) in stats.iter().enumerate() {
                let style = colours[run.min(1)][lane].stroke_width(if run == 0 { 3 } else { 2 });
                let label = format!(
                    "{} ({name})",
                    [Class::Priority, Class::Standard][lane].label()
                );
                let points = s.curve.iter().copied();
                let drawn = if run == 0 {
                    chart.draw_series(LineSeries::new(points, style))?
                } else {
                    chart.draw_series(DashedLineSeries::new(points, 8, 6, style))?
                };
                drawn
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| format!("{}: cannot write the chart: {e}", path.display()))
}
