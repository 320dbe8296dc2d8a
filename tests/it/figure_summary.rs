//! The figure summary on varied real figures: what the worker reads from the figure
//! object when it is saved (axes, labels, scales, legend, series with their point and
//! NaN counts and ranges, the job line that drew each), its one-paragraph text, its
//! place in the JSON report, the checks that read it, and its off switch.

use crate::common;

use common::{builder, expect_ok};
use pyward::figure::{FigureSummary, Series};
use pyward::report::Report;
use pyward::{Executor, Job, JobFailure, Outcome};

fn exec() -> Executor {
    builder().preload_pandas(true).build().unwrap()
}

fn summary(outcome: &Outcome) -> &FigureSummary {
    expect_ok(outcome);
    outcome.artifacts()[0]
        .figure
        .as_ref()
        .expect("a described figure")
}

fn only_series(s: &FigureSummary) -> &Series {
    assert_eq!(s.axes.len(), 1, "{s:?}");
    assert_eq!(s.axes[0].series.len(), 1, "{s:?}");
    &s.axes[0].series[0]
}

#[test]
fn bars_lines_scatter_images_and_pies_are_described() {
    let exec = exec();

    let bars = exec
        .run(Job::new(
            "fig, ax = plt.subplots(figsize=(5, 3))\n\
             ax.bar(['north', 'south', 'east', 'west'], [12.0, 48.5, 30.0, 20.0])\n\
             ax.set_title('Revenue by region')\n\
             ax.set_xlabel('region')\n\
             ax.set_ylabel('revenue (k$)')\n\
             fig.savefig(OUT)\n",
        ))
        .unwrap();
    let s = summary(&bars);
    assert_eq!((s.width_in, s.height_in), (Some(5.0), Some(3.0)));
    let a = &s.axes[0];
    assert_eq!(a.title.as_deref(), Some("Revenue by region"));
    assert_eq!(a.xlabel.as_deref(), Some("region"));
    assert_eq!(a.ylabel.as_deref(), Some("revenue (k$)"));
    let bar = only_series(s);
    assert_eq!((bar.kind.as_str(), bar.points, bar.nan), ("bar", 4, 0));
    assert_eq!(bar.y, Some([Some(12.0), Some(48.5)]));
    assert_eq!(bar.line, Some(2), "the line that drew it");
    let text = bars.description().unwrap();
    assert!(
        text.contains("\"Revenue by region\"") && text.contains("4 bars (heights 12–48.5)"),
        "{text}"
    );

    // Two rows: a line with a NaN gap and a log-scale scatter; legend entries.
    let grid = exec
        .run(Job::new(
            "fig, (top, bottom) = plt.subplots(2, 1)\n\
             y = np.sin(np.linspace(0, 6, 50)); y[10:15] = np.nan\n\
             top.plot(y, label='signal')\n\
             top.plot([0, 49], [0, 0], label='zero')\n\
             top.legend()\n\
             bottom.scatter(np.arange(1, 31), np.arange(1, 31) ** 2)\n\
             bottom.set_yscale('log')\n\
             fig.suptitle('Two views')\n\
             fig.savefig(OUT)\n",
        ))
        .unwrap();
    let s = summary(&grid);
    assert_eq!(s.texts, vec!["Two views".to_string()]);
    assert_eq!(s.axes.len(), 2);
    assert_eq!(s.axes[0].grid, Some([2, 1, 0, 0]));
    assert_eq!(s.axes[1].grid, Some([2, 1, 1, 0]));
    assert_eq!(s.axes[0].legend, vec!["signal", "zero"]);
    let signal = &s.axes[0].series[0];
    assert_eq!(
        (signal.kind.as_str(), signal.label.as_deref()),
        ("line", Some("signal"))
    );
    assert_eq!((signal.points, signal.nan), (50, 5));
    let scatter = &s.axes[1].series[0];
    assert_eq!((scatter.kind.as_str(), scatter.points), ("scatter", 30));
    assert_eq!(scatter.y, Some([Some(1.0), Some(900.0)]));
    assert_eq!(s.axes[1].yscale, "log");
    let text = grid.description().unwrap();
    assert!(
        text.starts_with("2 axes in a 2x1 grid, titled \"Two views\"."),
        "{text}"
    );
    assert!(text.contains("y log"), "{text}");

    // An image with a colorbar, and a pie.
    let image = exec
        .run(Job::new(
            "fig, ax = plt.subplots()\n\
             im = ax.imshow(np.arange(12.0).reshape(3, 4))\n\
             fig.colorbar(im, ax=ax)\n\
             fig.savefig(OUT)\n",
        ))
        .unwrap();
    let s = summary(&image);
    assert_eq!(s.axes.len(), 2);
    assert!(s.axes[1].colorbar && !s.axes[0].colorbar);
    let img = &s.axes[0].series[0];
    assert_eq!(img.kind, "image");
    assert_eq!(img.shape, Some([3, 4]));
    assert_eq!(img.y, Some([Some(0.0), Some(11.0)]));
    assert!(
        image.description().unwrap().contains("1 colorbar"),
        "{:?}",
        image.description()
    );

    let pie = exec
        .run(Job::new(
            "plt.pie([1, 2, 3], labels=['a', 'b', 'c'])\nplt.savefig(OUT)\n",
        ))
        .unwrap();
    let s = summary(&pie);
    let wedges = s.axes[0].series.iter().find(|x| x.kind == "wedge").unwrap();
    assert_eq!(wedges.points, 3);
    assert!(
        pie.description().unwrap().contains("pie of 3 wedges"),
        "{:?}",
        pie.description()
    );
}

#[test]
fn pandas_plots_keep_column_names_and_3d_axes_their_projection() {
    let exec = exec();
    let frame = exec
        .run(Job::new(
            "df = pd.DataFrame({'revenue': [1.0, 2.0, 4.0], 'cost': [0.5, 1.0, 1.5]})\n\
             df.plot()\n\
             plt.savefig(OUT)\n",
        ))
        .unwrap();
    let s = summary(&frame);
    let labels: Vec<_> = s.axes[0]
        .series
        .iter()
        .map(|x| x.label.as_deref())
        .collect();
    assert_eq!(labels, vec![Some("revenue"), Some("cost")]);

    let surface = exec
        .run(Job::new(
            "x, y = np.meshgrid(np.linspace(-1, 1, 10), np.linspace(-1, 1, 10))\n\
             ax = plt.figure().add_subplot(projection='3d')\n\
             ax.plot_surface(x, y, x * y)\n\
             plt.savefig(OUT)\n",
        ))
        .unwrap();
    let s = summary(&surface);
    assert_eq!(s.axes[0].projection, "3d");
    assert_eq!(s.axes[0].series[0].kind, "surface");
}

#[test]
fn the_report_carries_the_summary_and_the_switch_turns_it_off() {
    let exec = exec();
    let code = "plt.plot([1, 2, 3], [2, 4, 8], label='growth')\nplt.legend()\nplt.savefig(OUT)\n";
    let described = exec.run(Job::new(code)).unwrap();
    let report = serde_json::to_value(Report::from_outcome(&described, false)).unwrap();
    common::assert_valid_report(&report);
    assert_eq!(
        report["artifacts"][0]["figure"]["axes"][0]["series"][0]["label"],
        "growth"
    );
    assert!(report["description"]
        .as_str()
        .unwrap()
        .contains("line of 3 points \"growth\""));
    assert!(described.timings.describe <= described.timings.exec);

    let plain = exec.run(Job::new(code).describe_figures(false)).unwrap();
    expect_ok(&plain);
    assert!(plain.artifacts()[0].figure.is_none());
    assert!(plain.description().is_none());
    assert_eq!(plain.timings.describe, std::time::Duration::ZERO);
    let report = serde_json::to_value(Report::from_outcome(&plain, false)).unwrap();
    common::assert_valid_report(&report);
    assert!(report.get("description").is_none());
    // The same pixels either way: describing reads the figure, never changes it.
    assert_eq!(described.artifacts()[0].bytes, plain.artifacts()[0].bytes);
}

#[test]
fn nan_data_fails_only_when_a_whole_series_is_nan() {
    let exec = exec();
    let partial = exec
        .run(Job::new(
            "y = np.array([1.0, np.nan, 3.0])\nplt.plot(y)\nplt.savefig(OUT)\n",
        ))
        .unwrap();
    assert_eq!(only_series(summary(&partial)).nan, 1);
    // A one-point NaN line is the usual legend proxy, not a mistake.
    let proxy = exec
        .run(Job::new(
            "plt.plot([1, 2, 3])
plt.plot(np.nan, np.nan, 'o', color='red', label='outlier')
plt.legend()
plt.savefig(OUT)
",
        ))
        .unwrap();
    expect_ok(&proxy);

    let all_nan = exec
        .run(Job::new(
            "x = np.arange(4)\nplt.plot(x, x * 1.0)\nplt.scatter(x, np.full(4, np.nan), label='ratio')\nplt.savefig(OUT)\n",
        ))
        .unwrap();
    let Some(JobFailure::InvalidOutput { check, detail }) = all_nan.failure() else {
        panic!("{:?}", all_nan.result)
    };
    assert_eq!(check, "all-nan");
    assert!(
        detail.contains("the scatter \"ratio\" drawn at line 3"),
        "{detail}"
    );
    // A job that accepts a blank figure accepts this too.
    let allowed = exec
        .run(Job::new("plt.plot([np.nan, np.nan])\nplt.savefig(OUT)\n").allow_blank())
        .unwrap();
    expect_ok(&allowed);
}

/// No false alarm: every figure of the rendering corpus (`tests/data/figures`: text,
/// mathtext, images, meshes, contours, polar, 3D, twin axes, insets, subfigures, several
/// figures, canvas-level saves) passes the empty and all-NaN checks, and every PNG it
/// saved with `savefig` comes back described.
#[test]
fn every_figure_of_the_rendering_corpus_passes_and_is_described() {
    let exec = builder().workers(2).build().unwrap();
    let mut described = 0;
    for (name, code) in common::figure_corpus() {
        let outcome = exec.run(Job::new(code.as_str()).seed(1)).unwrap();
        if let Some(f) = outcome.failure() {
            panic!("{name}: {}", f.feedback());
        }
        let out = outcome.artifact("figure.png").expect("OUT");
        if code.contains("savefig(OUT") {
            let summary = out.figure.as_ref().unwrap_or_else(|| panic!("{name}"));
            assert!(!summary.is_empty(), "{name}: {summary:?}");
            described += 1;
        }
    }
    assert!(described >= 30, "{described} described");
}
