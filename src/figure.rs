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
    /// `[rows, columns, row, column]` of the cell the code asked for in a subplot grid
    /// (the top-left one when it spans several): the outermost grid, never the helper
    /// grid a colorbar makes inside the cell it takes room from.
    pub grid: Option<[u32; 4]>,
    /// `[rows, columns]` it spans, when more than one cell (`subplot_mosaic`, `gs[0, :]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<[u32; 2]>,
    /// `[left, bottom, width, height]` in figure fractions, as placed when it was saved (a
    /// layout engine may still move it while drawing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<[f64; 4]>,
    /// What it is to another axes: a colorbar, a twin or an inset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<AxesRole>,
    /// The first axes (its index in [`FigureSummary::axes`]) of the group sharing this
    /// x-axis (`sharex=`; twins left out), itself for the first one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares_x: Option<u32>,
    /// The same for the y-axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares_y: Option<u32>,
    /// The subfigure it is in (`fig.subfigures`), numbered from 1 depth first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subfigure: Option<u32>,
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

/// What an axes is to another one, read from matplotlib's own records (a colorbar's
/// parents, the twin group, child axes) or, for an axes placed by hand, its position.
/// Axes are named by their index in [`FigureSummary::axes`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[non_exhaustive]
pub enum AxesRole {
    /// A colorbar (`fig.colorbar`).
    Colorbar {
        /// The axes it belongs to (`ax=`, or the axes of what it maps).
        of: Vec<u32>,
        /// `right`, `left`, `top`, `bottom` or `inside` of them.
        side: Option<String>,
    },
    /// A twin: `twinx` (a second y-axis, `axis` "y") or `twiny` (`axis` "x").
    Twin {
        /// The axes it was made from.
        of: u32,
        /// The axis it adds: "y" (on the right) or "x" (on top).
        axis: String,
    },
    /// Inside another axes (`ax.inset_axes`, an `add_axes` rectangle within it).
    Inset {
        /// The axes it is in.
        of: u32,
    },
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
    /// Whether the job called `plt.show()` (which returns each drawn figure open then).
    pub shown: bool,
    /// Numbers of figures the job drew on but never saved.
    pub unsaved_figures: Vec<u32>,
    /// What went wrong while describing (never the job's failure).
    pub errors: Vec<String>,
    /// Time spent summarizing figures, in milliseconds (part of the job's exec time).
    pub describe_ms: f64,
    /// The code defines a top-level `main()` that it never calls (and raised nothing).
    pub uncalled_main: bool,
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
                "the code called plt.show() while no figure had anything drawn; draw the \
                 data before showing or saving it"
                    .into(),
            );
        }
        if let Some(n) = self.unsaved_figures.first() {
            return Some(format!(
                "figure {n} was drawn but never saved; end with plt.savefig(OUT)"
            ));
        }
        if self.uncalled_main {
            return Some(
                "the code defines main() but never calls it, so nothing ran; call it at \
                 the end: if __name__ == \"__main__\": main()"
                    .into(),
            );
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
                "has no axes and nothing drawn".to_string()
            } else {
                let labelled = summary
                    .axes
                    .iter()
                    .any(|a| a.xlabel.is_some() || a.ylabel.is_some());
                format!(
                    "has {} axes{} but nothing drawn on them: no lines, bars, points, images, \
                     patches, text, titles or legends",
                    summary.axes.len(),
                    if labelled { " with axis labels" } else { "" }
                )
            };
            return Some((
                "empty-figure",
                format!("{artifact} {what}; plot the data before plt.savefig(OUT)"),
            ));
        }
        // A series with only NaN values draws nothing. It is the job's mistake when the
        // job named it (a label) or when nothing else on its axes has a value; an
        // unnamed one beside drawn data is a library's helper (seaborn's error bars of
        // a category with one row) and refusing it would refuse a real figure.
        let all_nan: Vec<&Series> = summary
            .axes
            .iter()
            .flat_map(|a| {
                let drawn = a.series.iter().any(|s| s.nan < s.points);
                a.series.iter().filter(move |s| s.label.is_some() || !drawn)
            })
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
    /// Whether nothing at all is drawn: no series, text, title or legend anywhere (a
    /// legend of proxy artists on empty axes, a title alone, are something drawn).
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
            && self.axes.iter().all(|a| {
                a.series.is_empty()
                    && a.texts.is_empty()
                    && a.legend.is_empty()
                    && a.title.is_none()
            })
    }

    /// One paragraph for a model: "2 axes in a 1x2 grid, a colorbar beside axes 1
    /// (right). Axes 1 'scan': image 64x64 ...; Axes 2 ...". The grid is the one the code
    /// asked for, and colorbars, twins, insets and shared axes say which axes they
    /// belong to.
    pub fn text(&self) -> String {
        let plots: Vec<usize> = (0..self.axes.len())
            .filter(|&i| !self.axes[i].colorbar)
            .collect();
        // An axes as the text numbers it: its place among the axes that are not colorbars.
        let name = |index: u32| -> String {
            match plots.iter().position(|&i| i == index as usize) {
                Some(n) => format!("{}", n + 1),
                None => "?".into(),
            }
        };
        let names = |indexes: &[u32]| -> String {
            let names: Vec<String> = indexes.iter().map(|&i| name(i)).collect();
            match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => {
                    format!("axes {} and {last}", rest.join(", "))
                }
                _ => format!("axes {}", names.join("")),
            }
        };
        let mut t = String::new();
        let _ = write!(t, "{} axes", plots.len() + self.more_axes as usize);
        t.push_str(&self.layout(&plots));
        for a in self.axes.iter().filter(|a| a.colorbar) {
            t.push_str(", a colorbar");
            if let Some(AxesRole::Colorbar { of, side }) = &a.role {
                if !of.is_empty() {
                    let whose = names(of);
                    let _ = match side.as_deref() {
                        Some(s @ ("right" | "left")) => write!(t, " beside {whose} ({s})"),
                        Some("top") => write!(t, " above {whose}"),
                        Some("bottom") => write!(t, " below {whose}"),
                        Some("inside") => write!(t, " inside {whose}"),
                        _ => write!(t, " of {whose}"),
                    };
                }
            }
        }
        if let Some(title) = self.texts.first() {
            let _ = write!(t, ", titled {title:?}");
        }
        t.push('.');
        for &i in &plots {
            let a = &self.axes[i];
            let _ = match &a.role {
                Some(AxesRole::Twin { of, axis }) => write!(
                    t,
                    " Axes {} is a twin of axes {} ({}).",
                    name(i as u32),
                    name(*of),
                    if axis == "x" {
                        "top x-axis"
                    } else {
                        "right y-axis"
                    }
                ),
                Some(AxesRole::Inset { of }) => write!(
                    t,
                    " Axes {} is an inset in axes {}.",
                    name(i as u32),
                    name(*of)
                ),
                _ => Ok(()),
            };
        }
        for (axis, shares) in [
            (
                "x",
                plots
                    .iter()
                    .map(|&i| self.axes[i].shares_x)
                    .collect::<Vec<_>>(),
            ),
            ("y", plots.iter().map(|&i| self.axes[i].shares_y).collect()),
        ] {
            let mut roots: Vec<u32> = shares.iter().flatten().copied().collect();
            roots.sort_unstable();
            roots.dedup();
            for root in roots {
                let group: Vec<u32> = plots
                    .iter()
                    .zip(&shares)
                    .filter(|(_, s)| **s == Some(root))
                    .map(|(&i, _)| i as u32)
                    .collect();
                if group.len() == plots.len() && plots.len() > 1 {
                    let _ = write!(t, " All axes share the {axis}-axis.");
                } else if group.len() > 1 {
                    let _ = write!(t, " {} share the {axis}-axis.", capitalized(&names(&group)));
                }
            }
        }
        let many = plots.len() > 1;
        for (n, &i) in plots.iter().enumerate() {
            let a = &self.axes[i];
            t.push(' ');
            if many {
                let _ = write!(t, "Axes {}", n + 1);
                if let Some(title) = &a.title {
                    let _ = write!(t, " {title:?}");
                }
            } else if let Some(title) = &a.title {
                let _ = write!(t, "{title:?}");
            } else {
                t.push_str("Axes");
            }
            let mut labels: Vec<String> = Vec::new();
            if a.projection != "rectilinear" && !a.projection.is_empty() {
                labels.push(a.projection.clone());
            }
            if let (Some(subfigure), true) = (a.subfigure, many) {
                labels.push(format!("subfigure {subfigure}"));
            }
            if let (Some([_, _, row, col]), Some([rows, cols])) = (a.grid, a.span) {
                labels.push(spanned(row, col, rows, cols));
            }
            labels.extend(
                [("x", &a.xlabel, &a.xscale), ("y", &a.ylabel, &a.yscale)]
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
                    }),
            );
            if !labels.is_empty() {
                let _ = write!(t, " ({})", labels.join(", "));
            }
            t.push_str(": ");
            if a.series.is_empty() && (a.legend.is_empty() && a.texts.is_empty()) {
                t.push_str("nothing drawn");
            } else if a.series.is_empty() {
                t.push_str("no data plotted"); // a proxy legend or text alone
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
                t.push_str(" (axis turned off)");
            }
            t.push('.');
        }
        t
    }

    /// " in a 1x2 grid", " in a 2x2 grid and a 2x1 grid", " in 2 subfigures", or nothing
    /// (one cell): the grids the code asked for, read from the axes that are neither
    /// colorbars, twins nor insets.
    fn layout(&self, plots: &[usize]) -> String {
        let main: Vec<&AxesSummary> = plots
            .iter()
            .map(|&i| &self.axes[i])
            .filter(|a| a.role.is_none())
            .collect();
        let mut subfigures: Vec<u32> = main.iter().filter_map(|a| a.subfigure).collect();
        subfigures.sort_unstable();
        subfigures.dedup();
        if subfigures.len() > 1 {
            return format!(" in {} subfigures", subfigures.len());
        }
        let mut shapes: Vec<(u32, u32)> = Vec::new();
        for a in &main {
            if let Some([rows, cols, ..]) = a.grid {
                if !shapes.contains(&(rows, cols)) {
                    shapes.push((rows, cols));
                }
            }
        }
        if shapes.iter().all(|(r, c)| r * c == 1) {
            return String::new();
        }
        let grids: Vec<String> = shapes
            .iter()
            .map(|(r, c)| format!("a {r}x{c} grid"))
            .collect();
        format!(" in {}", grids.join(" and "))
    }
}

/// "rows 1–2", "columns 1–2", "rows 1–2, columns 2–3": the cells an axes spans.
fn spanned(row: u32, col: u32, rows: u32, cols: u32) -> String {
    let range = |start: u32, n: u32| format!("{}–{}", start + 1, start + n);
    match (rows > 1, cols > 1) {
        (true, true) => format!("rows {}, columns {}", range(row, rows), range(col, cols)),
        (true, false) => format!("rows {}", range(row, rows)),
        _ => format!("columns {}", range(col, cols)),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
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
    fn a_legend_or_a_title_alone_is_something_drawn() {
        let mut empty = bars();
        empty.axes[0].series.clear();
        empty.axes[0].title = None;
        assert!(empty.is_empty());
        let mut legend = empty.clone();
        legend.axes[0].legend = vec!["proxy".into()];
        assert!(!legend.is_empty());
        let mut title = empty.clone();
        title.axes[0].title = Some("b)".into());
        assert!(!title.is_empty());
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

        // Unnamed NaN lines beside drawn bars (seaborn's error bars of one-row
        // categories) are a library's helpers, not a mistake; a named one is.
        let mut summary = bars();
        summary.axes[0].series.push(Series {
            kind: "line".into(),
            points: 2,
            nan: 2,
            ..Series::default()
        });
        let saved = |summary| FigureNotes {
            saves: vec![SavedFigure {
                target: "figure.png".into(),
                in_out: true,
                summary: Some(summary),
                other_figures_drawn: vec![],
            }],
            ..FigureNotes::default()
        };
        assert!(saved(summary.clone()).problem("figure.png").is_none());
        summary.axes[0].series[1].label = Some("forecast".into());
        let (check, detail) = saved(summary).problem("figure.png").unwrap();
        assert_eq!(check, "all-nan");
        assert!(detail.contains("\"forecast\""), "{detail}");
    }
}
