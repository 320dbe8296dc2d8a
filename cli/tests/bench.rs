//! `pyward bench` on two small scripts and a failing one: the report's shape, every mode
//! timed as often as asked, ratios that make sense (cold slower than warm), pyward's
//! figure against plain Python's, the failing script reported and not timed, the chart,
//! and the time budget.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn bench(dir: &Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pyward"))
        .arg("bench")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code(), report, stderr)
}

fn scripts(dir: &Path) {
    std::fs::create_dir(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/points.csv"), "x,y\n1,2\n2,4\n3,3\n").unwrap();
    std::fs::write(
        dir.join("line.py"),
        "plt.plot(np.arange(10) ** 2)\nplt.savefig(OUT)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("table.py"),
        "df = pd.read_csv(srcpath('points.csv'))\nprint(len(df))\nplt.scatter(df['x'], df['y'])\nplt.savefig(OUT)\n",
    )
    .unwrap();
    std::fs::write(dir.join("broken.py"), "plt.plot(totl)\nplt.savefig(OUT)\n").unwrap();
}

#[test]
fn every_mode_is_timed_compared_and_a_failing_script_is_reported_not_timed() {
    let dir = tempfile::tempdir().unwrap();
    scripts(dir.path());
    let (code, report, stderr) = bench(
        dir.path(),
        &[
            "line.py",
            "table.py",
            "broken.py",
            "--src",
            "data",
            "--runs",
            "2",
            "--json",
            "--chart",
            "chart.png",
        ],
    );
    assert_eq!(
        code,
        Some(1),
        "a failing script fails the command: {stderr}"
    );
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["kind"], "bench");
    assert_eq!(report["settings"]["rounds"], 2);
    assert_eq!(report["settings"]["seed"], 1);
    assert!(report["machine"]["versions"]["numpy"]
        .as_str()
        .is_some_and(|v| v.starts_with('2')));
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);

    for f in &files[..2] {
        assert_eq!(f["status"], "ok", "{f}");
        for mode in ["warm", "fresh", "cold", "floor"] {
            let m = &f["modes"][mode];
            assert_eq!(m["n"], 2, "{mode}: {m}");
            assert_eq!(m["samples_ms"].as_array().unwrap().len(), 2);
            let (median, p95) = (
                m["median_ms"].as_f64().unwrap(),
                m["p95_ms"].as_f64().unwrap(),
            );
            assert!(median > 0.0 && p95 >= median, "{mode}: {m}");
        }
        let ratio = |k: &str| {
            f["ratios"][k]
                .as_f64()
                .unwrap_or_else(|| panic!("{k}: {f}"))
        };
        // A new interpreter importing numpy and matplotlib costs far more than a warm run.
        assert!(ratio("cold/warm") > 1.0, "{f}");
        assert!(ratio("warm/floor") > 0.0 && ratio("fresh/warm") > 0.0);
        // pyward draws what plain Python draws, same code and seed.
        let same = &f["same_output"];
        assert!(
            same["identical_bytes"] == true || same["identical_pixels"] == true,
            "{same}"
        );
    }

    let broken = &files[2];
    assert_eq!(broken["status"], "python_error");
    assert!(
        broken["feedback"]
            .as_str()
            .unwrap()
            .contains("name 'totl' is not defined"),
        "{broken}"
    );
    assert_eq!(broken["modes"], serde_json::json!({}), "not timed");

    let chart = std::fs::read(dir.path().join("chart.png")).unwrap();
    assert!(chart.starts_with(b"\x89PNG\r\n\x1a\n"));
}

#[test]
fn the_budget_bounds_the_rounds_and_the_table_says_so() {
    let dir = tempfile::tempdir().unwrap();
    scripts(dir.path());
    let (_, report, _) = bench(
        dir.path(),
        &[
            "line.py",
            "--runs",
            "50",
            "--budget",
            "0",
            "--modes",
            "warm,floor",
            "--json",
        ],
    );
    assert_eq!(report["settings"]["rounds"], 0);
    assert_eq!(
        report["settings"]["modes"],
        serde_json::json!(["warm", "floor"])
    );
    let warm = &report["files"][0]["modes"]["warm"];
    assert_eq!(warm["n"], 0, "{warm}");

    let out = Command::new(env!("CARGO_BIN_EXE_pyward"))
        .args(["bench", "line.py", "--runs", "1", "--modes", "warm,cold"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{table}");
    assert!(
        table.contains("line.py") && table.contains("cold/warm"),
        "{table}"
    );
    assert!(table.contains("1 of 1 rounds"), "{table}");
}
