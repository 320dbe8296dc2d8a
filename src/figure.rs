//! What a figure shows, for a model that cannot look at it, and what the job did with
//! its figures.
//!
//! The worker reads every figure the job saves from the figure object itself, before it
//! is encoded (`python/figures.py`): axes, labels, limits, legend, and per plotted series
//! its kind, label, point count, NaN count and data range. That [`FigureSummary`] travels
//! with the artifact (typed, in the JSON report and the run record), gives a successful
//! job a one-paragraph [`text`](FigureSummary::text), and lets the output checks fail a
//! figure that shows nothing ([`FigureNotes::problem`]) with the series and line to fix.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// What one saved figure shows.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct FigureSummary {
    /// Figure width, in inches.
    pub width_in: Option<f64>,
    /// Figure height, in inches.
    pub height_in: Option<f64>,
    /// Every axes (at most 30), colorbars included.
    pub axes: Vec<AxesSummary>,
    /// Axes past the first 30.
    #[serde(default)]
    pub more_axes: u32,
    /// Figure-level texts: the suptitle first, then `fig.text(...)`.
    #[serde(default)]
    pub texts: Vec<String>,
}

/// One axes of a figure.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct AxesSummary {
    /// `[rows, columns, row, column]` of its place in a subplot grid.
    pub grid: Option<[u32; 4]>,
    /// `rectilinear`, `polar`, `3d`, ...
    pub projection: String,
    /// Whether this axes is a colorbar.
    pub colorbar: bool,
    /// Title.
    pub title: Option<String>,
    /// x-axis label.
    pub xlabel: Option<String>,
    /// y-axis label.
    pub ylabel: Option<String>,
    /// `linear`, `log`, ...
    pub xscale: String,
    /// `linear`, `log`, ...
    pub yscale: String,
    /// Shown x range (`null` ends: not finite).
    pub xlim: [Option<f64>; 2],
    /// Shown y range.
    pub ylim: [Option<f64>; 2],
    /// Whether the axes is drawn (`axis('off')` makes it false).
    pub visible: bool,
    /// Legend entries.
    pub legend: Vec<String>,
    /// Texts and annotations on the axes.
    pub texts: Vec<String>,
    /// Plotted series (at most 20).
    pub series: Vec<Series>,
    /// Series past the first 20.
    #[serde(default)]
    pub more_series: u32,
}

/// One plotted series.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct Series {
    /// `line`, `markers`, `scatter`, `bar`, `image`, `mesh`, `contour`, `fill`, `lines`,
    /// `errorbar`, `wedge`, `polygon`, `rectangle`, `table`, ...
    pub kind: String,
    /// Its label, when the job gave one (legend text, or the column name pandas used).
    pub label: Option<String>,
    /// Data points (bars, pixels, patches, levels for a contour).
    pub points: u64,
    /// Points whose value is NaN.
    pub nan: u64,
    /// Range of the finite x values (lines and scatters).
    pub x: Option<[Option<f64>; 2]>,
    /// Range of the finite values: y, bar heights, pixel values.
    pub y: Option<[Option<f64>; 2]>,
    /// Image or mesh shape, `[rows, columns]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<[u64; 2]>,
    /// The line of the job's code that drew it.
    pub line: Option<u32>,
}

/// What the job did with its figures, as the worker saw it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
#[non_exhaustive]
pub struct FigureNotes {
    /// Every `savefig` with a path, in order.
    pub saves: Vec<SavedFigure>,
    /// Whether the job called `plt.show()` (which displays nothing here).
    pub shown: bool,
    /// Numbers of figures the job drew on but never saved.
    pub unsaved_figures: Vec<u32>,
    /// What went wrong while describing (never the job's failure).
    pub errors: Vec<String>,
    /// Time spent summarizing figures, in milliseconds (part of the job's exec time).
    pub describe_ms: f64,
}

/// One `savefig` call.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct SavedFigure {
    /// The artifact name when saved into the output directory (`OUT`), else the path
    /// as the job gave it.
    pub target: String,
    /// Whether it went into the output directory.
    pub in_out: bool,
    /// What the figure showed (`None` when descriptions are off).
    pub summary: Option<FigureSummary>,
    /// When this figure was empty: other open figures that had something drawn.
    pub other_figures_drawn: Vec<u32>,
}

impl FigureNotes {
    /// The summary of the last save of `artifact` into the output directory.
    pub fn summary_of(&self, artifact: &str) -> Option<&FigureSummary> {
        self.last_save(artifact)?.summary.as_ref()
    }

    /// The last save into the output directory under the name `artifact` (the one
    /// whose file the job left).
    fn last_save(&self, artifact: &str) -> Option<&SavedFigure> {
        self.saves
            .iter()
            .rev()
            .find(|s| s.in_out && s.target == artifact)
    }

    /// Why `out` is missing, from what the job did instead: saved elsewhere, called
    /// `show()`, or drew without saving.
    pub fn why_missing(&self, out: &str) -> Option<String> {
        if let Some(elsewhere) = self.saves.iter().find(|s| !s.in_out) {
            return Some(format!(
                "the code saved the figure to '{}', a file nobody receives; save it to OUT \
                 instead (plt.savefig(OUT)), the only path whose file is returned as {out}",
                elsewhere.target
            ));
        }
        if self.shown {
            return Some(
                "the code called plt.show(), which displays nothing here; save the figure \
                 with plt.savefig(OUT) instead"
                    .into(),
            );
        }
        if let Some(n) = self.unsaved_figures.first() {
            return Some(format!(
                "figure {n} was drawn but never saved; end with plt.savefig(OUT)"
            ));
        }
        None
    }

    /// What is wrong with the figure saved as `artifact`, as `(check, detail)`: nothing
    /// drawn at all (and where the drawing went, if elsewhere), or a series whose every
    /// value is NaN.
    pub fn problem(&self, artifact: &str) -> Option<(&'static str, String)> {
        let save = self.last_save(artifact)?;
        if let Some(n) = save.other_figures_drawn.first() {
            return Some((
                "empty-figure",
                format!(
                    "{artifact} is empty: the data was drawn on another figure (figure {n}), \
                     and the figure saved was a newer, empty one. Call plt.figure() before \
                     drawing, not after, or keep the figure and save it: fig = plt.figure(); \
                     ...; fig.savefig(OUT)"
                ),
            ));
        }
        let summary = save.summary.as_ref()?;
        if summary.is_empty() {
            let what = if summary.axes.is_empty() {
                "has no axes and nothing drawn"
            } else {
                "has axes but nothing drawn on them (no lines, bars, points, images or text)"
            };
            return Some((
                "empty-figure",
                format!("{artifact} {what}; plot the data before plt.savefig(OUT)"),
            ));
        }
        let all_nan: Vec<&Series> = summary
            .axes
            .iter()
            .flat_map(|a| &a.series)
            // One NaN point is the legend-proxy idiom (`plt.plot(np.nan, np.nan, label=..)`).
            .filter(|s| s.points > 1 && s.nan == s.points)
            .collect();
        let first = all_nan.first()?;
        let mut what = format!("the {}", first.kind);
        if let Some(label) = &first.label {
            let _ = write!(what, " {label:?}");
        }
        if let Some(line) = first.line {
            let _ = write!(what, " drawn at line {line}");
        }
        Some((
            "all-nan",
            format!(
                "{what} has only NaN values ({} of {} points), so nothing of it is drawn. \
                 The data is missing or not numeric: check the column or array plotted \
                 (print it, or its .isna().sum()) and convert text with \
                 pd.to_numeric(..., errors='coerce') only where numbers are expected",
                first.nan, first.points
            ),
        ))
    }
}

impl FigureSummary {
    /// Whether nothing at all is drawn: no series and no text anywhere.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
            && self
                .axes
                .iter()
                .all(|a| a.series.is_empty() && a.texts.is_empty())
    }

    /// One paragraph for a model: "1 axes. 'Revenue by region' (x 'region', y
    /// 'revenue'): 4 bars 'revenue' (12–48.5). Legend: ...".
    pub fn text(&self) -> String {
        let plots: Vec<&AxesSummary> = self.axes.iter().filter(|a| !a.colorbar).collect();
        let colorbars = self.axes.len() - plots.len();
        let mut t = String::new();
        let _ = write!(t, "{} axes", plots.len() + self.more_axes as usize);
        if let Some([rows, cols, ..]) = plots.first().and_then(|a| a.grid) {
            if rows * cols > 1 {
                let _ = write!(t, " in a {rows}x{cols} grid");
            }
        }
        if colorbars > 0 {
            let _ = write!(t, ", {colorbars} colorbar{}", plural(colorbars));
        }
        if let Some(title) = self.texts.first() {
            let _ = write!(t, ", titled {title:?}");
        }
        t.push('.');
        for (i, a) in plots.iter().enumerate() {
            t.push(' ');
            if plots.len() > 1 {
                let _ = write!(t, "Axes {}", i + 1);
                if let Some(title) = &a.title {
                    let _ = write!(t, " {title:?}");
                }
            } else if let Some(title) = &a.title {
                let _ = write!(t, "{title:?}");
            } else {
                t.push_str("Axes");
            }
            let labels: Vec<String> = [("x", &a.xlabel, &a.xscale), ("y", &a.ylabel, &a.yscale)]
                .iter()
                .filter_map(|(axis, label, scale)| {
                    let log = if scale.as_str() == "linear" {
                        String::new()
                    } else {
                        format!(" {scale}")
                    };
                    match label {
                        Some(l) => Some(format!("{axis}{log} {l:?}")),
                        None if !log.is_empty() => Some(format!("{axis}{log}")),
                        None => None,
                    }
                })
                .collect();
            if !labels.is_empty() {
                let _ = write!(t, " ({})", labels.join(", "));
            }
            t.push_str(": ");
            if a.series.is_empty() {
                t.push_str("nothing drawn");
            } else {
                let parts: Vec<String> = a.series.iter().map(Series::describe).collect();
                t.push_str(&parts.join("; "));
                if a.more_series > 0 {
                    let _ = write!(t, "; and {} more", a.more_series);
                }
            }
            if !a.legend.is_empty() {
                let _ = write!(t, ". Legend: {}", quoted(&a.legend));
            }
            if !a.texts.is_empty() {
                let _ = write!(t, ". Text: {}", quoted(&a.texts));
            }
            if !a.visible {
                t.push_str(" (axis lines hidden)");
            }
            t.push('.');
        }
        t
    }
}

impl Series {
    /// "3 bars 'north' (12–48.5)", "line 'price' (200 points, 12 NaN, y 3.1–9.8)".
    pub fn describe(&self) -> String {
        let mut s = match self.kind.as_str() {
            "bar" => format!("{} bar{}", self.points, plural(self.points as usize)),
            "image" | "mesh" => match self.shape {
                Some([r, c]) => format!("{} {r}x{c}", self.kind),
                None => self.kind.clone(),
            },
            "wedge" => format!("pie of {} wedges", self.points),
            "contour" => format!("contour of {} levels", self.points),
            "line" | "markers" | "scatter" => {
                format!("{} of {} points", self.kind, self.points)
            }
            other => format!("{other} ({})", self.points),
        };
        if let Some(label) = &self.label {
            let _ = write!(s, " {label:?}");
        }
        let mut details = Vec::new();
        if self.nan > 0 {
            details.push(format!("{} NaN", self.nan));
        }
        if let Some([Some(lo), Some(hi)]) = self.y {
            let what = match self.kind.as_str() {
                "bar" => "heights ",
                "image" | "mesh" => "values ",
                "line" | "markers" | "scatter" => "y ",
                _ => "",
            };
            details.push(format!("{what}{}–{}", number(lo), number(hi)));
        }
        if !details.is_empty() {
            let _ = write!(s, " ({})", details.join(", "));
        }
        if let Some(line) = self.line {
            let _ = write!(s, " drawn at line {line}");
        }
        s
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn quoted(items: &[String]) -> String {
    let shown: Vec<String> = items.iter().take(8).map(|s| format!("{s:?}")).collect();
    let mut text = shown.join(", ");
    if items.len() > 8 {
        let _ = write!(text, ", ... ({} in all)", items.len());
    }
    text
}

/// A short, readable number: 4 significant digits, no trailing zeros.
fn number(v: f64) -> String {
    if v == 0.0 {
        "0".to_string()
    } else if (1e-3..1e6).contains(&v.abs()) {
        let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{v:.3e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars() -> FigureSummary {
        FigureSummary {
            axes: vec![AxesSummary {
                grid: Some([1, 1, 0, 0]),
                projection: "rectilinear".into(),
                title: Some("Revenue by region".into()),
                xlabel: Some("region".into()),
                ylabel: Some("revenue".into()),
                xscale: "linear".into(),
                yscale: "linear".into(),
                visible: true,
                series: vec![Series {
                    kind: "bar".into(),
                    label: None,
                    points: 4,
                    y: Some([Some(12.0), Some(48.5)]),
                    line: Some(3),
                    ..Series::default()
                }],
                ..AxesSummary::default()
            }],
            ..FigureSummary::default()
        }
    }

    #[test]
    fn text_names_axes_labels_and_series() {
        assert_eq!(
            bars().text(),
            "1 axes. \"Revenue by region\" (x \"region\", y \"revenue\"): 4 bars (heights 12–48.5) drawn at line 3."
        );
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(number(48.5), "48.5");
        assert_eq!(number(1234.5678), "1235");
        assert_eq!(number(0.012346), "0.01235");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(2.5e9), "2.500e9");
    }

    #[test]
    fn an_all_nan_series_is_a_problem_that_names_it() {
        let mut summary = bars();
        summary.axes[0].series[0].nan = 4;
        let notes = FigureNotes {
            saves: vec![SavedFigure {
                target: "figure.png".into(),
                in_out: true,
                summary: Some(summary),
                other_figures_drawn: vec![],
            }],
            ..FigureNotes::default()
        };
        let (check, detail) = notes.problem("figure.png").unwrap();
        assert_eq!(check, "all-nan");
        assert!(detail.contains("drawn at line 3"), "{detail}");
        assert!(notes.problem("other.png").is_none());
    }
}
