//! The figure summary on varied real figures: what the worker reads from the figure
//! object when it is saved (axes, labels, scales, legend, series with their point and
//! NaN counts and ranges, the job line that drew each), its one-paragraph text, its
//! place in the JSON report, the checks that read it, and its off switch.

use std::sync::Arc;

use crate::common;

use common::{builder, expect_ok, shared_pool, Gate};
use pyward::figure::{AxesRole, FigureSummary, Series};
use pyward::report::Report;
use pyward::{Executor, Job, JobFailure, Outcome};

/// No test here reads a pool's stats or a worker's fate: they share a pool.
fn exec() -> Arc<Executor> {
    shared_pool(true, Gate::Default)
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
    assert_eq!(
        s.axes[1].role,
        Some(AxesRole::Colorbar {
            of: vec![0],
            side: Some("right".into())
        })
    );
    assert!(
        image
            .description()
            .unwrap()
            .starts_with("1 axes, a colorbar beside axes 1 (right)."),
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

/// What `code` saved, described: (summary, text).
fn described(exec: &Executor, code: &str) -> (FigureSummary, String) {
    let outcome = exec.run(Job::new(code)).unwrap();
    let s = summary(&outcome).clone();
    (s, outcome.description().unwrap())
}

/// Issue 41: the grid and the roles are the ones the code built, never a helper grid
/// (a colorbar that takes room nests its axes in a 3x2 grid inside the cell).
#[test]
fn layouts_are_described_as_the_code_built_them() {
    let exec = exec();
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "gridspec-stealing colorbar with tight_layout (the demo's shape)",
            "fig, (ax1, ax2) = plt.subplots(1, 2)\n\
             im = ax1.imshow(np.eye(4))\nfig.colorbar(im, ax=ax1)\nax2.plot([1, 2])\n\
             fig.tight_layout()\nfig.savefig(OUT)\n",
            &["2 axes in a 1x2 grid, a colorbar beside axes 1 (right)."],
        ),
        (
            "make_axes colorbar below two axes",
            "fig, (a, b) = plt.subplots(1, 2)\nim = a.imshow(np.eye(3))\nb.plot([1, 2])\n\
             fig.colorbar(im, ax=[a, b], location='bottom')\nfig.savefig(OUT)\n",
            &["2 axes in a 1x2 grid, a colorbar below axes 1 and 2."],
        ),
        (
            "constrained layout, shared x, a colorbar for a row, an axes turned off",
            "fig, axs = plt.subplots(2, 2, layout='constrained', sharex=True)\n\
             pc = axs[0, 0].pcolormesh(np.random.rand(3, 3))\n\
             for ax in axs.flat[1:3]:\n    ax.plot([1, 2])\n\
             fig.colorbar(pc, ax=axs[0, :])\naxs[1, 1].axis('off')\nfig.savefig(OUT)\n",
            &[
                "4 axes in a 2x2 grid, a colorbar beside axes 1 and 2 (right).",
                "All axes share the x-axis.",
                "Axes 4: nothing drawn (axis turned off).",
            ],
        ),
        (
            "twinx",
            "fig, ax = plt.subplots()\nax.plot([1, 2], label='price')\n\
             ax2 = ax.twinx()\nax2.plot([30, 10], color='r')\nfig.savefig(OUT)\n",
            &["2 axes. Axes 2 is a twin of axes 1 (right y-axis)."],
        ),
        (
            "twiny",
            "fig, ax = plt.subplots()\nax.plot([1, 2])\nax.twiny().set_xlim(0, 10)\n\
             fig.savefig(OUT)\n",
            &["2 axes. Axes 2 is a twin of axes 1 (top x-axis)."],
        ),
        (
            "inset_axes (a child the figure does not list)",
            "fig, ax = plt.subplots()\nax.plot([1, 2, 3])\n\
             inner = ax.inset_axes([0.55, 0.55, 0.4, 0.4])\ninner.plot([3, 2, 1])\n\
             fig.savefig(OUT)\n",
            &["2 axes. Axes 2 is an inset in axes 1.", "Axes 2: line of 3 points"],
        ),
        (
            "an inset placed by hand",
            "fig, ax = plt.subplots()\nax.plot([1, 2])\n\
             fig.add_axes([0.6, 0.6, 0.2, 0.2]).plot([2, 1])\nfig.savefig(OUT)\n",
            &["Axes 2 is an inset in axes 1."],
        ),
        (
            "subplot_mosaic with spans",
            "fig, axd = plt.subplot_mosaic('AAB;CDB')\n\
             for k, ax in axd.items():\n    ax.set_title(k)\nfig.savefig(OUT)\n",
            &[
                "4 axes in a 2x3 grid.",
                "Axes 1 \"A\" (columns 1–2)",
                "Axes 2 \"B\" (rows 1–2)",
                "Axes 3 \"C\":",
            ],
        ),
        (
            "GridSpec spans",
            "fig = plt.figure()\ngs = fig.add_gridspec(2, 2)\n\
             fig.add_subplot(gs[0, :]).plot([1, 2])\nfig.add_subplot(gs[1, 0]).plot([1, 2])\n\
             fig.add_subplot(gs[1, 1]).plot([1, 2])\nfig.savefig(OUT)\n",
            &["3 axes in a 2x2 grid.", "Axes 1 (columns 1–2)"],
        ),
        (
            "mixed grids (221, 222, 212)",
            "plt.subplot(221).plot([1])\nplt.subplot(222).plot([1])\n\
             plt.subplot(212).plot([1])\nplt.savefig(OUT)\n",
            &["3 axes in a 2x2 grid and a 2x1 grid."],
        ),
        (
            "subfigures",
            "fig = plt.figure()\nleft, right = fig.subfigures(1, 2)\n\
             for ax in left.subplots(2, 1):\n    ax.plot([1, 2])\n\
             right.subplots().bar(['a'], [1])\nfig.savefig(OUT)\n",
            &["3 axes in 2 subfigures.", "Axes 3 (subfigure 2): 1 bar"],
        ),
        (
            "3D and polar axes",
            "fig = plt.figure()\nfig.add_subplot(121, projection='3d').plot([0, 1], [0, 1], [0, 1])\n\
             fig.add_subplot(122, projection='polar').plot([0, 1], [1, 2])\nfig.savefig(OUT)\n",
            &["2 axes in a 1x2 grid.", "Axes 1 (3d):", "Axes 2 (polar):"],
        ),
    ];
    let mut wrong = Vec::new();
    for (what, code, wants) in cases {
        let (_, text) = described(&exec, code);
        for want in *wants {
            if !text.contains(want) {
                wrong.push(format!("{what}: {want:?} not in\n{text}\n"));
            }
        }
        if text.contains("3x2") {
            wrong.push(format!("{what}: a helper grid in\n{text}\n"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // The roles as data (indexes into `axes`), valid in the published report schema.
    for (_, code, _) in cases {
        let outcome = exec.run(Job::new(*code)).unwrap();
        let report = serde_json::to_value(Report::from_outcome(&outcome, false)).unwrap();
        common::assert_valid_report(&report);
    }
    let (s, _) = described(&exec, cases[0].1);
    assert_eq!(s.axes[0].grid, Some([1, 2, 0, 0]));
    assert_eq!(s.axes[2].grid, Some([1, 2, 0, 0]), "the colorbar's cell");
    let (s, _) = described(&exec, cases[3].1);
    assert_eq!(
        s.axes[1].role,
        Some(AxesRole::Twin {
            of: 0,
            axis: "y".into()
        })
    );
    let (s, _) = described(&exec, cases[7].1);
    assert_eq!(s.axes[0].span, Some([1, 2]));
    let p = s.axes[0].position.expect("a position");
    assert!(p.iter().all(|v| (0.0..=1.0).contains(v)), "{p:?}");
}

/// The demo's scan figure: an image with a colorbar beside it and a profile line.
#[test]
fn the_demo_figure_is_described_as_built() {
    let exec = exec();
    let code = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/plot_scan.py"),
    )
    .unwrap();
    let outcome = exec
        .run(Job::new(code.as_str()).src_dir(common::examples_data()))
        .unwrap();
    expect_ok(&outcome);
    let text = outcome.description().unwrap();
    assert!(
        text.starts_with(
            "2 axes in a 1x2 grid, a colorbar beside axes 1 (right). Axes 1 \"scan\": image"
        ),
        "{text}"
    );
}

/// Issue 41: a legend of proxy artists, a title, a text, an annotation, a patch or an
/// image on otherwise empty axes is something drawn (matplotlib's custom_legends and
/// label_subplots shapes, after a figure with data); a figure with nothing drawn is still
/// refused, saying what it has.
#[test]
fn legends_titles_and_texts_are_drawn_and_nothing_is_refused() {
    let exec = exec();
    let earlier = "plt.figure()\nplt.plot([1, 2, 3])\n";
    for (what, code) in [
        (
            "legend of proxy artists",
            "from matplotlib.lines import Line2D\nfrom matplotlib.patches import Patch\n\
             fig, ax = plt.subplots()\n\
             ax.legend([Line2D([0], [0], color='b', lw=4), Patch(facecolor='orange')],\n\
             \x20         ['line', 'patch'], loc='center')\nfig.savefig(OUT)\n",
        ),
        (
            "titles only (label_subplots)",
            "fig, axs = plt.subplot_mosaic([['a)', 'c)'], ['b)', 'c)']], layout='constrained')\n\
             for label, ax in axs.items():\n\
             \x20   ax.set_title('Normal Title', fontstyle='italic')\n\
             \x20   ax.set_title(label, loc='left', fontsize='medium')\nfig.savefig(OUT)\n",
        ),
        (
            "a left title alone",
            "fig, ax = plt.subplots()\nax.set_title('b)', loc='left')\nfig.savefig(OUT)\n",
        ),
        (
            "text only",
            "fig, ax = plt.subplots()\nax.text(0.5, 0.5, 'no data for this week', ha='center')\n\
             ax.axis('off')\nfig.savefig(OUT)\n",
        ),
        (
            "an annotation",
            "fig, ax = plt.subplots()\nax.annotate('a)', xy=(0, 1), xycoords='axes fraction')\n\
             fig.savefig(OUT)\n",
        ),
        (
            "a suptitle",
            "fig = plt.figure()\nfig.suptitle('Quarterly report')\nfig.savefig(OUT)\n",
        ),
        (
            "a patch only",
            "from matplotlib.patches import Rectangle\nfig, ax = plt.subplots()\n\
             ax.add_patch(Rectangle((0.2, 0.2), 0.5, 0.3, color='tab:blue'))\nfig.savefig(OUT)\n",
        ),
        (
            "an image only",
            "plt.figure()\nplt.imshow(np.arange(12).reshape(3, 4))\nplt.savefig(OUT)\n",
        ),
        (
            "an image of one value",
            "fig, ax = plt.subplots()\nax.imshow(np.zeros((8, 8)))\nax.axis('off')\n\
             fig.savefig(OUT)\n",
        ),
    ] {
        let outcome = exec
            .run(Job::new(format!("{earlier}{code}").as_str()))
            .unwrap();
        if let Some(f) = outcome.failure() {
            panic!("{what}: {}", f.feedback());
        }
    }
    let legend = exec
        .run(Job::new(
            "from matplotlib.patches import Patch\nfig, ax = plt.subplots()\n\
             ax.legend(handles=[Patch(color='r', label='hot')])\nfig.savefig(OUT)\n",
        ))
        .unwrap();
    assert_eq!(summary(&legend).axes[0].legend, vec!["hot"]);
    assert!(
        legend
            .description()
            .unwrap()
            .contains("Axes: no data plotted. Legend: \"hot\"."),
        "{:?}",
        legend.description()
    );

    for (code, want) in [
        (
            "fig, ax = plt.subplots()\nax.set_xlabel('time')\nfig.savefig(OUT)\n",
            "has 1 axes with axis labels but nothing drawn on them: no lines, bars, points, \
             images, patches, text, titles or legends",
        ),
        (
            "plt.figure()\nplt.savefig(OUT)\n",
            "has no axes and nothing drawn",
        ),
    ] {
        let outcome = exec.run(Job::new(code)).unwrap();
        let Some(JobFailure::InvalidOutput { check, detail }) = outcome.failure() else {
            panic!("{code}: {:?}", outcome.result)
        };
        assert_eq!(check, "empty-figure");
        assert!(detail.contains(want), "{detail}");
    }
    // Drawn on one figure, saved from a newer empty one: still said.
    let elsewhere = exec
        .run(Job::new(
            "plt.plot([1, 2])\nfig = plt.figure()\nfig.savefig(OUT)\n",
        ))
        .unwrap();
    let Some(JobFailure::InvalidOutput { detail, .. }) = elsewhere.failure() else {
        panic!("{:?}", elsewhere.result)
    };
    assert!(
        detail.contains("drawn on another figure (figure 1)"),
        "{detail}"
    );
}
