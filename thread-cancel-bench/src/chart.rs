//! The SVG chart of `compare`: one panel per scenario, each with the empirical distribution
//! (CDF) of every series compared in it — ours, glibc's, the floor — drawn with `plotters`'
//! SVG backend.
//!
//! ```
//! use thread_cancel_bench::chart::{write_svg, Line, Panel, Who};
//! let dir = std::env::temp_dir().join(format!("chart-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("c.svg");
//! let line = |who, v: &[f64]| Line { who, label: format!("{who:?}"), values: v.to_vec() };
//! let panels = [Panel {
//!     title: "demo".into(),
//!     unit: "us".into(),
//!     lines: vec![line(Who::Ours, &[1.0, 2.0, 3.0]), line(Who::Glibc, &[2.0, 4.0])],
//! }];
//! write_svg(&path, "title", &panels, 2).unwrap();
//! assert!(std::fs::read_to_string(&path).unwrap().starts_with("<svg"));
//! ```

use crate::stats::{num, percentile};
use plotters::prelude::*;
use std::io;
use std::path::Path;

/// Whose series a line is (it picks the colour).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Who {
    /// thread-cancel.
    Ours,
    /// glibc's `pthread_cancel` (or glibc's call).
    Glibc,
    /// The floor or baseline.
    Floor,
}

impl Who {
    fn color(self) -> RGBColor {
        match self {
            Who::Ours => RGBColor(31, 119, 180),
            Who::Glibc => RGBColor(214, 39, 40),
            Who::Floor => RGBColor(110, 110, 110),
        }
    }
}

/// One series of samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Whose.
    pub who: Who,
    /// Its legend.
    pub label: String,
    /// The samples (any order, at least one).
    pub values: Vec<f64>,
}

/// One panel: the series of one scenario, on a common axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// The panel's caption.
    pub title: String,
    /// The unit of the values (the x axis).
    pub unit: String,
    /// The series.
    pub lines: Vec<Line>,
}

/// Points of the CDF drawn per line.
const CDF_POINTS: usize = 200;
/// Pixels of one panel.
const PANEL: (u32, u32) = (440, 300);

/// Writes `panels` (`cols` per row) under `title` as an SVG file at `path`. The x axis of a
/// panel is logarithmic (the tails are long) and runs from just below the smallest sample to
/// just above the largest p99 (the rarer tail is cut, its lines end at the right edge).
///
/// # Errors
///
/// If the file cannot be written, or plotting fails.
pub fn write_svg(path: &Path, title: &str, panels: &[Panel], cols: usize) -> io::Result<()> {
    let cols = cols.max(1);
    let rows = panels.len().div_ceil(cols).max(1);
    let size = (PANEL.0 * cols as u32, PANEL.1 * rows as u32 + 40);
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    let root = root.titled(title, ("sans-serif", 20)).map_err(plot_error)?;
    for (area, panel) in root.split_evenly((rows, cols)).iter().zip(panels) {
        draw_panel(area, panel)?;
    }
    root.present().map_err(plot_error)
}

fn plot_error(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("plotting: {e}"))
}

/// The x range of a panel: [0.9 min, 1.1 max p99] (positive, for the logarithmic axis), or a
/// range around a single value.
fn x_range(panel: &Panel) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for l in panel.lines.iter().filter(|l| !l.values.is_empty()) {
        let v = sorted(&l.values);
        lo = lo.min(v[0]);
        hi = hi.max(percentile(&v, 99.0));
    }
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    let (lo, hi) = ((lo * 0.9).max(f64::MIN_POSITIVE), hi * 1.1);
    if hi > lo {
        (lo, hi)
    } else {
        (lo / 2.0, lo * 2.0)
    }
}

/// Tick positions for a logarithmic axis over `[lo, hi]` (`0 < lo < hi`): 1, 2, 5 times the
/// powers of ten inside it, or every digit times them when that gives fewer than three, or, for
/// a narrow range, evenly spaced round values.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let ticks = |mantissas: &[f64]| -> Vec<f64> {
        let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        (first..=last)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    for mantissas in [
        &[1.0, 2.0, 5.0][..],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ] {
        let t = ticks(mantissas);
        if t.len() >= 3 {
            return t;
        }
    }
    // A step of 1, 2 or 5 times a power of ten that gives about five ticks.
    let raw = (hi - lo) / 5.0;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// The CDF of `values` as [`CDF_POINTS`] + 1 points `(quantile(p), p)`, cut at `x_max`.
fn cdf(values: &[f64], x_max: f64) -> Vec<(f64, f64)> {
    let v = sorted(values);
    let mut pts = Vec::with_capacity(CDF_POINTS + 2);
    for k in 0..=CDF_POINTS {
        let p = k as f64 / CDF_POINTS as f64;
        let x = v[((p * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)];
        if x > x_max {
            pts.push((x_max, p));
            break;
        }
        pts.push((x, p));
    }
    pts
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel,
) -> io::Result<()> {
    let (x0, x1) = x_range(panel);
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 14))
        .margin(10)
        .x_label_area_size(32)
        .y_label_area_size(36)
        .build_cartesian_2d(
            (x0..x1).log_scale().with_key_points(log_ticks(x0, x1)),
            0f64..1f64,
        )
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc(format!("{} (log scale)", panel.unit))
        .x_label_formatter(&|v| num(*v))
        .y_desc("fraction <= x")
        .y_labels(5)
        .max_light_lines(1)
        .label_style(("sans-serif", 10))
        .axis_desc_style(("sans-serif", 11))
        .draw()
        .map_err(plot_error)?;
    for line in panel.lines.iter().filter(|l| !l.values.is_empty()) {
        let color = line.who.color();
        chart
            .draw_series(LineSeries::new(
                cdf(&line.values, x1),
                color.stroke_width(2),
            ))
            .map_err(plot_error)?
            .label(line.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 10))
        .draw()
        .map_err(plot_error)
}
