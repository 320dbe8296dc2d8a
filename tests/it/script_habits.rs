//! What scripts do around their work, as models write them: `logging` (its lines on
//! stderr handed back) and `traceback`,
//! `glob`, `os.path` on the files the script wrote, files of one name in several folders,
//! `exit()` and `raise SystemExit`, `__file__`, `sys.argv` and `argparse`,
//! `e.__class__.__name__`, `datetime.strptime`, notebook magics, an import of a missing
//! package with its fallback. Each runs through the real worker with the gate on; hostile
//! twins (host paths, climbing patterns, log files outside the job, classes patched with
//! the gate off) change nothing outside the job and nothing the next job sees.

use crate::common;

use common::{builder, expect_ok, python_error, shared_pool, Gate};
use pyward::gate::Policy;
use pyward::{Executor, Job, Outcome, RetireReason};

fn executor(policy: Policy) -> Executor {
    builder()
        .workers(1)
        .preload_pandas(true)
        .policy(policy)
        .build()
        .expect("pool starts")
}

fn inputs() -> tempfile::TempDir {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(
        src.path().join("sales.csv"),
        "region,units\nnorth,3\nsouth,5\n",
    )
    .unwrap();
    std::fs::write(src.path().join("traffic_01.csv"), "day,visits\n1,10\n").unwrap();
    std::fs::write(src.path().join("traffic_02.csv"), "day,visits\n2,12\n").unwrap();
    src
}

fn run(exec: &Executor, code: &str, src: &std::path::Path) -> Outcome {
    exec.run(Job::new(code).src_dir(src))
        .expect("infrastructure")
}

/// The job run twice: its figures saved to disk, then kept in memory
/// (`Job::figures_in_memory`); each outcome with whether it was in memory.
fn on_disk_and_in_memory(
    exec: &Executor,
    code: &str,
    src: &std::path::Path,
) -> [(bool, Outcome); 2] {
    [false, true].map(|in_memory| {
        let job = Job::new(code).src_dir(src);
        let job = if in_memory {
            job.figures_in_memory()
        } else {
            job
        };
        (in_memory, exec.run(job).expect("infrastructure"))
    })
}

/// Each `(code, member)` is refused by the gate and, with the gate off, raises a Python
/// error that names the member.
fn refused_gate_on_and_off(src: &std::path::Path, cases: &[(&str, &str)]) {
    let gate_off = shared_pool(true, Gate::Off);
    for (code, member) in cases {
        let v = pyward::gate::check(code, &Policy::figures()).unwrap();
        assert!(!v.is_allowed(), "the gate allowed {code}");
        let o = run(&gate_off, code, src);
        let e = python_error(&o);
        assert!(
            e.type_name.ends_with("Error") && e.message.contains(member),
            "{code}: {e:?}"
        );
    }
}

fn text(o: &Outcome, name: &str) -> String {
    let artifact = o
        .artifact(name)
        .unwrap_or_else(|| panic!("no {name}: {:?}", o.result));
    String::from_utf8(artifact.bytes.clone()).unwrap()
}

const LOGGING: &str = r#"
import logging, sys, traceback
import pandas as pd
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s",
                    handlers=[logging.StreamHandler(sys.stdout)])
log = logging.getLogger(__name__)
log.info("reading %s", "sales.csv")
log.debug("not shown")
fh = logging.FileHandler("run.log", mode="w")
fh.setFormatter(logging.Formatter("%(levelname)s|%(lineno)d|%(message)s"))
log.addHandler(fh)
log.warning("rows=%d", len(pd.read_csv("sales.csv")))
try:
    pd.read_csv("missing.csv")
except FileNotFoundError:
    log.exception("could not read")
    last = traceback.format_exc().splitlines()
    print("TB", last[0], "|", last[1].strip(), "|", last[-1][:40])
logging.getLogger("quiet").setLevel(logging.ERROR)
logging.getLogger("quiet").warning("dropped")
print("LEVEL", logging.getLevelName(logging.WARNING), log.getEffectiveLevel())
"#;

#[test]
fn logging_and_tracebacks_run_as_in_a_script_and_show_the_job_s_frames_only() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Figures);
    let o = run(
        &exec,
        &format!("{LOGGING}open('done.txt', 'w').write('1')\n"),
        src.path(),
    );
    expect_ok(&o);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines[0], "INFO __main__: reading sales.csv", "{}", o.stdout);
    assert_eq!(lines[1], "WARNING __main__: rows=2", "{}", o.stdout);
    assert!(
        o.stdout.contains("TB Traceback (most recent call last): | File \"/mnt/data/job.py\", line 14, in <module> | FileNotFoundError: no input named 'm"),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains("dropped") && !o.stdout.contains("not shown"));
    assert!(o.stdout.contains("LEVEL WARNING 20"), "{}", o.stdout);
    // No frame of a library, and no host path, in what the job sees.
    assert!(!o.stdout.contains("site-packages") && !o.stdout.contains("/tmp/"));
    let log = text(&o, "run.log");
    assert!(
        log.starts_with("WARNING|12|rows=2\nERROR|16|could not read\nTraceback"),
        "{log}"
    );

    // basicConfig's default stream is the job's stderr, which a failure carries.
    let o = run(
        &exec,
        "import logging\nlogging.basicConfig(level='INFO')\nlogging.info('to stderr')\nraise ValueError('x')\n",
        src.path(),
    );
    let e = python_error(&o);
    assert!(e.stderr_tail.contains("INFO:root:to stderr"), "{e:?}");
    assert_eq!(
        o.stderr, "",
        "a failure quotes its stderr once, in its error"
    );

    // A job that ends well hands its warnings and log lines back as well.
    let o = run(
        &exec,
        "import logging, warnings\nlogging.basicConfig(level=logging.INFO)\n\
         logging.getLogger('close').info('rows read: %d', 42)\n\
         warnings.warn('careful', UserWarning)\nprint('done')\nopen('note.txt', 'w').write('1')\n",
        src.path(),
    );
    expect_ok(&o);
    assert_eq!(o.stdout, "done\n");
    assert!(
        o.stderr.starts_with("INFO:close:rows read: 42\n"),
        "{:?}",
        o.stderr
    );
    assert!(o.stderr.contains("UserWarning: careful"), "{:?}", o.stderr);
    let report = pyward::report::Report::from_outcome(&o, false);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["stderr"], serde_json::json!(o.stderr), "{json}");
}

/// Warnings are said where plain Python says them: the job's own at its line of
/// `__file__`, quoted; matplotlib's during a `savefig` (a glyph the font lacks) at the
/// job's `savefig` line, not at pyward's frames; one from a figure drawn after the job's
/// end without a place.
#[test]
fn warnings_are_said_at_the_job_s_line_as_in_a_script() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Figures);
    let code = "import warnings\nplt.plot([1, 2]); plt.title('\u{1000}')\n\
                plt.savefig('a.png')\nwarnings.warn('check the units')\n";
    let o = run(&exec, code, src.path());
    expect_ok(&o);
    let said = &o.stderr;
    assert!(
        said.contains("/mnt/data/job.py:3: UserWarning: Glyph 4096")
            && said.contains("\n  plt.savefig('a.png')\n"),
        "{said}"
    );
    assert!(
        said.contains("/mnt/data/job.py:4: UserWarning: check the units\n  warnings.warn("),
        "{said}"
    );
    assert!(
        !said.contains("pyward_") && !said.contains("<job>"),
        "{said}"
    );

    // A figure left open is drawn after the job's end: no line of the job was running.
    let o = run(&exec, "plt.plot([1]); plt.xlabel('\u{1001}')\n", src.path());
    expect_ok(&o);
    assert!(
        o.stderr.starts_with("UserWarning: Glyph 4097"),
        "{}",
        o.stderr
    );
}

#[test]
fn logging_state_and_its_classes_do_not_reach_the_next_job() {
    let src = inputs();
    let exec = executor(Policy::figures());
    let first = "import logging, sys\nlogging.basicConfig(level=logging.DEBUG, handlers=[logging.StreamHandler(sys.stdout)])\n\
                 logging.getLogger('shared').setLevel(logging.DEBUG)\nlogging.getLogger('shared').debug('FIRST')\n\
                 open('a.txt', 'w').write('1')\n";
    let o = run(&exec, first, src.path());
    expect_ok(&o);
    assert_eq!(o.stdout, "DEBUG:shared:FIRST\n");
    let second = "import logging\nprint('NEXT', logging.getLogger('shared').level, logging.getLogger().hasHandlers())\n\
                  logging.getLogger('shared').debug('SECOND')\nlogging.info('SECOND')\n\
                  open('a.txt', 'w').write('1')\n";
    let o = run(&exec, second, src.path());
    expect_ok(&o);
    assert_eq!(o.stdout, "NEXT 0 False\n");

    // Gate off, a stand-in class patched: the worker is retired, the class put back.
    let exec = executor(Policy::gate_disabled_for_testing());
    let patch = "import logging, sys\ntype.__setattr__(logging.Logger, 'info', lambda self, *a, **k: print('PATCHED'))\n\
                 logging.getLogger('x').info('m')\nopen('a.txt', 'w').write('1')\n";
    let o = run(&exec, patch, src.path());
    assert!(o.stdout.contains("PATCHED"), "{:?}", o.result);
    assert_eq!(
        o.retired.as_ref().map(|r| r.reason),
        Some(RetireReason::ResetFailed),
        "{:?}",
        o.retired
    );
    let next = "import logging, sys\nlog = logging.getLogger('x')\nlog.addHandler(logging.StreamHandler(sys.stdout))\n\
                log.warning('CLEAN')\nopen('a.txt', 'w').write('1')\n";
    let o = run(&exec, next, src.path());
    expect_ok(&o);
    assert_eq!(o.stdout, "CLEAN\n");
}

#[test]
fn a_log_file_outside_the_job_becomes_an_artifact_and_writes_nothing_there() {
    let src = inputs();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escape.log");
    // Climbing out of the job's folder to the same file.
    let climbing = format!(
        "{}{}",
        "../".repeat(40),
        target.to_str().unwrap().trim_start_matches('/')
    );
    let exec = shared_pool(true, Gate::Figures);
    for name in [target.display().to_string(), climbing] {
        let code = format!(
            "import logging\nlog = logging.getLogger('h')\nlog.addHandler(logging.FileHandler({name:?}))\nlog.error('CANARY')\n"
        );
        let o = run(&exec, &code, src.path());
        expect_ok(&o);
        assert_eq!(text(&o, "escape.log"), "CANARY\n");
        assert!(!target.exists(), "{name} was written on the host");
    }
}

#[test]
fn files_of_one_name_in_several_folders_are_all_kept_and_read_back() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Figures);
    let code = r#"
import os
for region in ["north", "south"]:
    os.makedirs(os.path.join("reports", region), exist_ok=True)
    with open(f"reports/{region}/units.csv", "w") as f:
        f.write(region)
with open("units.csv", "w") as f:
    f.write("top")
print(open("reports/south/units.csv").read(), open("/mnt/data/reports/north/units.csv").read(),
      open("units.csv").read())
print(os.listdir("reports/north"), os.listdir("reports/south"))
"#;
    let o = run(&exec, code, src.path());
    expect_ok(&o);
    assert_eq!(o.stdout, "south north top\n['units.csv'] ['units.csv']\n");
    assert_eq!(text(&o, "units.csv"), "north");
    assert_eq!(text(&o, "south-units.csv"), "south");
    assert_eq!(text(&o, "units-2.csv"), "top");
}

/// Every pandas writer saves into a folder the job made, as to_csv does: to_html and
/// to_string check the folder through a reference of their own. Their hostile twins (an
/// absolute host path, a climbing one) land in the job's folder and write nothing there.
#[test]
fn every_pandas_writer_saves_into_a_folder_the_job_made() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Default);
    let canary = format!("pyward_canary_{}.html", std::process::id());
    let code = format!(
        r#"
import os
os.makedirs("output/reports", exist_ok=True)
df = pd.DataFrame({{"a": [1, 2], "b": ["x", "y"]}})
df.to_html("output/reports/top.html", index=False)
df.to_string("output/reports/top.txt")
df.to_csv("output/reports/top.csv", index=False)
df.to_json("output/reports/top.json")
df.to_markdown("output/reports/top.md")
df.to_excel("output/reports/top.xlsx", index=False)
df.to_html("/tmp/{canary}")
df.to_string("../../../tmp/up_{canary}.txt")
print(sorted(os.listdir("output/reports")))
"#
    );
    let o = run(&exec, &code, src.path());
    expect_ok(&o);
    assert_eq!(
        o.stdout,
        "['top.csv', 'top.html', 'top.json', 'top.md', 'top.txt', 'top.xlsx']\n"
    );
    assert!(text(&o, "top.html").contains("<td>x</td>"));
    assert!(
        text(&o, "top.txt").contains("0  1  x"),
        "{}",
        text(&o, "top.txt")
    );
    for name in [canary.clone(), format!("up_{canary}.txt")] {
        assert!(
            o.artifact(&name).is_some(),
            "no {name}: {:?}",
            o.artifacts()
        );
        assert!(
            !std::path::Path::new("/tmp").join(&name).exists(),
            "{name} on the host"
        );
    }
}

/// A chart saved into a folder, then read back by that path (to embed it in a workbook):
/// the read finds the figure the save kept (in memory, or as pixels for the host to
/// encode), also for two charts of one name in two folders.
#[test]
fn figures_saved_into_folders_are_read_back_by_the_paths_they_were_saved_to() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Figures);
    let code = r#"
import os
from openpyxl import Workbook
from openpyxl.drawing.image import Image
for region, n in [("north", 2), ("south", 3)]:
    os.makedirs(f"charts/{region}", exist_ok=True)
    plt.figure()
    plt.plot(range(n))
    plt.savefig(f"charts/{region}/trend.png")
    plt.close()
sizes = [len(open(f"charts/{r}/trend.png", "rb").read()) for r in ("north", "south")]
print(all(s > 1000 for s in sizes), sizes[0] != sizes[1])
for p in ["charts/../../../etc/passwd", "/etc/passwd", "charts/south/trend.png\x00x",
          "/mnt/data/charts/../../etc/passwd"]:
    try:
        print("READ", len(open(p, "rb").read()))
    except (PermissionError, FileNotFoundError, ValueError):
        pass
wb = Workbook()
wb.active.add_image(Image("charts/south/trend.png"), "B2")
wb.save("report.xlsx")
"#;
    for (in_memory, o) in on_disk_and_in_memory(&exec, code, src.path()) {
        expect_ok(&o);
        assert_eq!(o.stdout, "True True\n", "in memory: {in_memory}");
        for name in ["trend.png", "south-trend.png", "report.xlsx"] {
            assert!(o.artifact(name).is_some(), "no {name}: {:?}", o.artifacts());
        }
    }
}

/// Time zones by name: `zoneinfo.ZoneInfo`, the class pandas already hands out as a
/// timestamp's `tz`; where zone files are read from and the listing of their folders
/// stay out of reach, gate on and off.
#[test]
fn zoneinfo_gives_zones_by_name_and_nothing_of_the_zone_folders() {
    let src = inputs();
    let code = r#"
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
import zoneinfo
t = datetime(2024, 7, 1, 9, tzinfo=ZoneInfo("Asia/Shanghai"))
print(t.astimezone(zoneinfo.ZoneInfo("Europe/London")), pd.Timestamp(t).tz == t.tzinfo)
for key in ["Mars/Olympus", "../../etc/passwd", "/etc/passwd"]:
    try:
        ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError) as e:
        print(type(e).__name__)
plt.plot([1, 2])
plt.savefig("zones.png")
"#;
    let o = run(&shared_pool(true, Gate::Figures), code, src.path());
    expect_ok(&o);
    assert_eq!(
        o.stdout,
        "2024-07-01 02:00:00+01:00 True\nZoneInfoNotFoundError\nValueError\nValueError\n"
    );
    refused_gate_on_and_off(
        src.path(),
        &[
            (
                "import zoneinfo\nzoneinfo.reset_tzpath(['/etc'])",
                "reset_tzpath",
            ),
            (
                "import zoneinfo\nprint(zoneinfo.available_timezones())",
                "available_timezones",
            ),
            ("from zoneinfo import TZPATH\nprint(TZPATH)", "TZPATH"),
        ],
    );
}

/// The lines scripts open with: `os.chdir` to the script's own folder (where the job
/// already is), fonts chosen by `platform.system()`, `os.name`, `sys.getsizeof`,
/// `gc.collect()`. The worker serves on; any other folder, and the rest of platform and
/// gc, stay refused, gate on and off.
#[test]
fn os_chdir_to_the_job_s_folder_platform_and_gc_run_as_in_a_script() {
    let src = inputs();
    let exec = executor(Policy::figures());
    let code = r#"
import gc, os, platform, sys
from pathlib import Path
os.chdir(os.path.dirname(os.path.abspath(__file__)))
os.chdir(Path(__file__).parent)
os.chdir("/mnt/data")
font = "SimHei" if platform.system() == "Windows" else "DejaVu Sans"
print(os.name, platform.system(), platform.machine() != "", platform.python_implementation(),
      platform.python_version().startswith("3."), sys.getsizeof([1, 2]) > 0, gc.collect() >= 0, font)
for folder in ["/etc", "..", "/tmp", "output", "/mnt/data/../..", "/proc/self/cwd", "\x00", "a" * 5000]:
    try:
        os.chdir(folder)
        print("CHANGED", folder)
    except PermissionError:
        print("refused", folder[:8])
print(os.getcwd(), len(open("sales.csv").read()) > 0)
plt.plot([1, 2])
plt.savefig("chart.png")
"#;
    for _ in 0..2 {
        let o = run(&exec, code, src.path());
        expect_ok(&o);
        assert_eq!(
            o.stdout,
            "posix Linux True CPython True True True DejaVu Sans\nrefused /etc\nrefused ..\n\
             refused /tmp\nrefused output\nrefused /mnt/dat\nrefused /proc/se\n\
             refused \x00\nrefused aaaaaaaa\n/mnt/data True\n"
        );
        assert!(o.retired.is_none(), "{:?}", o.retired);
    }
    refused_gate_on_and_off(
        src.path(),
        &[
            ("import gc\ngc.get_objects()", "get_objects"),
            ("import gc\ngc.get_referrers(1)", "get_referrers"),
            ("import platform\nplatform.node()", "node"),
            ("import platform\nplatform.uname()", "uname"),
            ("import platform\nplatform.architecture()", "architecture"),
        ],
    );
}

#[test]
fn glob_and_os_path_answer_for_the_job_s_files_and_never_the_host() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Figures);
    let code = r#"
import glob, os
from pathlib import Path
plt.plot([1, 2])
plt.savefig("chart.png")
print(glob.glob("traffic_*.csv"), glob.glob("/mnt/data/sales*"), glob.glob("*.png"))
print(os.path.exists("chart.png"), os.path.isfile("chart.png"), os.path.getsize("chart.png") > 1000,
      Path("chart.png").stat().st_size == os.path.getsize("chart.png"), os.path.isdir("."))
print(os.path.abspath("x.csv"), os.path.realpath("../../etc/passwd"), os.path.dirname(os.path.abspath(__file__)))
print(glob.glob("/etc/*"), glob.glob("../*"), glob.glob("**/passwd", recursive=True),
      os.path.exists("/etc/passwd"), os.path.isdir("/etc"))
for attempt in [lambda: os.path.getsize('/etc/passwd'), lambda: glob.glob('*', root_dir='/etc'),
                lambda: os.path.getmtime('../x'), lambda: Path('gone.png').stat()]:
    try:
        print("REACHED", attempt())
    except (PermissionError, FileNotFoundError) as e:
        print("REFUSED", type(e).__name__, str(e)[:30])
exit()
print("never")
"#;
    for (in_memory, o) in on_disk_and_in_memory(&exec, code, src.path()) {
        expect_ok(&o);
        let lines: Vec<&str> = o.stdout.lines().collect();
        assert_eq!(
            lines[0],
            "['traffic_01.csv', 'traffic_02.csv'] ['/mnt/data/sales.csv'] ['chart.png']"
        );
        assert_eq!(
            lines[1], "True True True True True",
            "in memory: {in_memory}"
        );
        assert_eq!(lines[2], "/mnt/data/x.csv /etc/passwd /mnt/data");
        assert_eq!(lines[3], "[] [] [] False False");
        assert_eq!(o.stdout.matches("REFUSED").count(), 4, "{}", o.stdout);
        assert!(!o.stdout.contains("REACHED") && !o.stdout.contains("never"));
        assert!(
            !o.stdout.contains("/tmp/"),
            "a host path shown: {}",
            o.stdout
        );
    }
}

#[test]
fn exit_ends_the_job_as_sys_exit_does() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Figures);
    let o = run(
        &exec,
        "open('a.txt', 'w').write('1')\nprint('done')\nexit()\nprint('never')\n",
        src.path(),
    );
    expect_ok(&o);
    assert_eq!(o.stdout, "done\n");
    let o = run(&exec, "quit(3)\n", src.path());
    assert_eq!(python_error(&o).type_name, "SystemExit");
}

/// `datetime.strptime` imports `_strptime` from C while the job's frame is current, through
/// the job's own `__import__`: the template holds it, so parsing a date works, and the
/// worker serves the next job (its format caches are guarded state).
#[test]
fn dates_parsed_with_strptime_run_and_the_worker_serves_on() {
    let src = inputs();
    let exec = executor(Policy::figures());
    let code = "import time\nfrom datetime import datetime\n\
                d = datetime.strptime('2026-03-01 10:15:00', '%Y-%m-%d %H:%M:%S')\n\
                t = time.strptime('01/02/2026', '%d/%m/%Y')\n\
                open('a.txt', 'w').write(f'{d:%H:%M} {t.tm_mon}')\n";
    for _ in 0..2 {
        let o = run(&exec, code, src.path());
        expect_ok(&o);
        assert_eq!(text(&o, "a.txt"), "10:15 2");
        assert!(o.retired.is_none(), "{:?}", o.retired);
    }
}

/// `sys.argv` is the job's own: its script's name and no arguments, whatever the job
/// before it put there.
#[test]
fn sys_argv_is_the_script_s_name_and_nothing_a_job_before_added() {
    let src = inputs();
    let exec = executor(Policy::figures());
    let code = "import sys\n\
                path = sys.argv[1] if len(sys.argv) > 1 else 'sales.csv'\n\
                open('a.txt', 'w').write(f'{sys.argv} {path}')\n\
                sys.argv.append('canary-argv')\n";
    for _ in 0..2 {
        let o = run(&exec, code, src.path());
        expect_ok(&o);
        assert_eq!(text(&o, "a.txt"), "['/mnt/data/job.py'] sales.csv");
    }
    // What the job left there is dropped while its output is still captured: a
    // suspended generator's `finally` prints into the job's own stdout.
    let late = r#"
import sys, os
def g():
    try:
        yield 1
    finally:
        print('late')
it = g()
next(it)
sys.argv.append(it)
it2 = g()
next(it2)
os.environ['x'] = it2
del it, it2
open('a.txt', 'w').write('1')
"#;
    let o = run(&exec, late, src.path());
    expect_ok(&o);
    assert_eq!(o.stdout, "late\nlate\n");
}

const ARGPARSE: &str = r#"
import argparse
import pandas as pd

def main():
    parser = argparse.ArgumentParser(description="Units by region.",
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("input", nargs="?", type=argparse.FileType("r"), default="sales.csv")
    parser.add_argument("--out", default="units.csv", help="where the table goes")
    parser.add_argument("--top", type=int, default=2)
    parser.add_argument("--log", action=argparse.BooleanOptionalAction, default=False)
    args = parser.parse_args()
    df = pd.read_csv(args.input)
    df.nlargest(args.top, "units").to_csv(args.out, index=False)
    print(parser.prog, args.out, args.top, args.log, parser.parse_args(["--top", "1"]).top)
    print(parser.format_help().splitlines()[0])
    try:
        loose = argparse.ArgumentParser(fromfile_prefix_chars="@")
        loose.parse_args(["@/etc/passwd"])
    except ValueError as e:
        print("refused:", str(e)[:40])

if __name__ == "__main__":
    main()
"#;

/// A script written for a shell: `parse_args()` reads the job's command line, its
/// script's name and no arguments, so every option takes its default; a file argument
/// opens through the job's `open`; argument files (argparse's own `open`) are refused;
/// a parse error is the job's failure with argparse's message and what to change.
#[test]
fn argparse_scripts_run_with_their_defaults_and_read_no_argument_file() {
    let src = inputs();
    let exec = executor(Policy::figures());
    for _ in 0..2 {
        let o = run(&exec, ARGPARSE, src.path());
        expect_ok(&o);
        assert_eq!(text(&o, "units.csv"), "region,units\nsouth,5\nnorth,3\n");
        assert_eq!(
            o.stdout,
            "job.py units.csv 2 False 1\nusage: job.py [-h] [--out OUT] [--top TOP] [--log | --no-log] [input]\n\
             refused: argument files (fromfile_prefix_chars) a\n"
        );
        assert!(!o.stdout.contains("root:"));
        assert!(o.retired.is_none(), "{:?}", o.retired);
    }
    let o = run(
        &exec,
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('input')\nargs = p.parse_args()\n",
        src.path(),
    );
    let e = python_error(&o);
    assert_eq!(e.type_name, "SystemExit");
    assert!(
        e.message.starts_with(
            "job.py: error: the following arguments are required: input (a job runs with no command-line arguments"
        ),
        "{}",
        e.message
    );
    assert!(e.stderr_tail.contains("usage: job.py [-h] input"), "{e:?}");
    // A file argument written outside the job becomes the job's artifact, nothing more.
    let canary = std::env::temp_dir().join(format!("pyward-argparse-{}", std::process::id()));
    let code = format!(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--out', type=argparse.FileType('w'), default={:?})\np.parse_args().out.write('canary')\n",
        canary.to_str().unwrap()
    );
    let o = run(&exec, &code, src.path());
    assert!(!canary.exists(), "{:?}", o.result);
    let o = run(
        &exec,
        "import argparse\nopen('a.txt', 'w').write('1')\nargparse.ArgumentParser().parse_args(['--help'])\n",
        src.path(),
    );
    expect_ok(&o);
    assert!(o.stdout.starts_with("usage: job.py [-h]"), "{}", o.stdout);
}

/// argparse's file arguments meet the job's `open`, gate on and off: a host path, a
/// climbing path and a NUL in a name are refused as arguments (the job reads nothing of
/// the host); writes to a host path or a climbing one create nothing there.
#[test]
fn argparse_file_arguments_reach_only_the_job_s_files_gate_on_and_off() {
    let src = inputs();
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("argparse-canary.txt");
    let climbing = format!("../../../../../../..{}", canary.to_str().unwrap());
    let code = format!(
        r#"
import argparse
p = argparse.ArgumentParser(exit_on_error=False)
p.add_argument("--src", type=argparse.FileType("r"))
p.add_argument("--out", type=argparse.FileType("w"))
for args in (["--src", "/etc/passwd"], ["--src", "../../../../../../../etc/passwd"],
             ["--src", "sales\x00.csv"], ["--out", "a\x00b.txt"],
             ["--out", {abs:?}], ["--out", {climb:?}]):
    try:
        ns = p.parse_args(args)
    except argparse.ArgumentError:
        print("REFUSED")
        continue
    if ns.src is not None:
        print("READ", ns.src.read()[:40])
    else:
        ns.out.write("canary")
        ns.out.close()
        print("WROTE")
print("SALES", p.parse_args(["--src", "sales.csv"]).src.readline().strip())
"#,
        abs = canary.to_str().unwrap(),
        climb = climbing,
    );
    for policy in [Policy::figures(), Policy::gate_disabled_for_testing()] {
        let exec = executor(policy);
        let o = run(&exec, &code, src.path());
        expect_ok(&o);
        assert_eq!(o.stdout.matches("REFUSED").count(), 4, "{}", o.stdout);
        assert!(o.stdout.ends_with("SALES region,units\n"), "{}", o.stdout);
        assert!(
            !o.stdout.contains("root:") && !o.stdout.contains("READ"),
            "{}",
            o.stdout
        );
        assert!(!canary.exists(), "a host file was written: {}", o.stdout);
    }
}

/// A script copied from a notebook: its magics and shell escapes are comments, and an
/// error later in it is reported at the line the model wrote.
#[test]
fn notebook_magics_are_comments_and_errors_keep_their_lines() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Figures);
    let code = "%matplotlib inline\n!pip install seaborn\nimport pandas as pd\n\
                df = pd.read_csv('sales.csv')\n%time total = df.units.sum()\n\
                open('a.txt', 'w').write(str(df.units.sum()))\n";
    let o = run(&exec, code, src.path());
    expect_ok(&o);
    assert_eq!(text(&o, "a.txt"), "8");
    let o = run(
        &exec,
        "%matplotlib inline\nimport pandas as pd\npd.read_csv('sale.csv')\n",
        src.path(),
    );
    assert_eq!(python_error(&o).line, Some(3), "{:?}", o.result);
}

/// `from IPython.display import display, Markdown, ...` as notebook code writes it:
/// pyward's stand-ins print what a notebook would show. With the gate off, nothing of
/// IPython beyond them is there, and their module is no one's to change.
#[test]
fn notebook_display_helpers_print_what_a_notebook_shows() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Figures);
    let code = "from IPython.display import display, Markdown, HTML, Image, clear_output\n\
                import IPython.display as ipd\nfrom IPython import display as disp\n\
                import pandas as pd\ndf = pd.read_csv('sales.csv')\n\
                display(Markdown(f'**Units:** {df.units.sum()}'))\ndisplay(df.tail(1))\n\
                ipd.display(HTML('<b>done</b>'), Image(filename='chart.png'))\n\
                clear_output(wait=True)\ndisp.display(len(df))\n\
                open('a.txt', 'w').write('1')\n";
    let o = run(&exec, code, src.path());
    expect_ok(&o);
    assert_eq!(
        o.stdout,
        "**Units:** 8\n  region  units\n1  south      5\n<b>done</b>\n[image: chart.png]\n2\n"
    );
    refused_gate_on_and_off(
        src.path(),
        &[
            ("from IPython import get_ipython", "get_ipython"),
            ("import IPython.core.getipython", "IPython.core"),
            ("import IPython\nIPython.version_info", "version_info"),
            (
                "import IPython.display as d\nd.display = print",
                "read-only",
            ),
        ],
    );
}

#[test]
fn a_missing_package_s_fallback_runs_and_raise_system_exit_ends_the_job() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Figures);
    let code = "try:\n    from tqdm import tqdm\nexcept ImportError:\n    def tqdm(x, **kw):\n        return x\n\
                class Row:\n    def __repr__(self):\n        return f'{self.__class__.__name__}()'\n\
                try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    print(e.__class__.__name__, Row(), sum(tqdm(range(4))))\n\
                open('a.txt', 'w').write('1')\nraise SystemExit(0)\nprint('never')\n";
    let o = run(&exec, code, src.path());
    expect_ok(&o);
    assert_eq!(o.stdout, "ZeroDivisionError Row() 6\n");
    let o = run(
        &exec,
        "try:\n    import plotly.express as px\nexcept ModuleNotFoundError as e:\n    px = None\n    print(e.name)\n\
         open('a.txt', 'w').write(str(px))\n",
        src.path(),
    );
    expect_ok(&o);
    assert_eq!(o.stdout, "plotly\n");
    let o = run(
        &exec,
        "open('a.txt', 'w').write('1')\nraise SystemExit('no rows')\n",
        src.path(),
    );
    let e = python_error(&o);
    assert_eq!(
        (e.type_name.as_str(), e.message.as_str()),
        ("SystemExit", "no rows")
    );
}

#[test]
fn os_walk_getenv_and_small_helpers_run_and_the_environment_is_the_job_s_own() {
    let src = inputs();
    let exec = executor(Policy::figures());
    let code = r#"
import os, difflib, fnmatch, base64, html, hashlib, uuid
from contextlib import suppress, contextmanager
os.environ["MPLBACKEND"] = "Agg"
os.environ["TOKEN"] = "canary-5e11"
print(os.getenv("HOME"), os.getenv("PATH", "none"), os.environ.get("MPLBACKEND"), os.sep)
os.makedirs("out/inner", exist_ok=True)
open("out/inner/x.txt", "w").write("1")
for root, dirs, files in os.walk("."):
    print(root, dirs, [f for f in files if not f.startswith("traffic")])
print(list(os.walk("/etc")), list(os.walk("..")), os.path.relpath("/mnt/data/a/b.csv"))
print(difflib.get_close_matches("revnue", ["revenue", "region"]), fnmatch.filter(["a.csv", "b.txt"], "*.csv"),
      base64.b64decode(base64.b64encode(b"ok")), html.escape("<a & b>"), hashlib.sha256(b"x").hexdigest()[:8],
      len(str(uuid.uuid4())))
@contextmanager
def section(name):
    print("start", name)
    yield
    print("end", name)
with section("s"), suppress(KeyError):
    {}["missing"]
from abc import ABC, abstractmethod
class Rule(ABC):
    @abstractmethod
    def apply(self, x): ...
class Double(Rule):
    def apply(self, x):
        return 2 * x
try:
    Rule()
except TypeError:
    print("abstract", Double().apply(4))
"#;
    let o = run(&exec, code, src.path());
    expect_ok(&o);
    assert_eq!(
        o.stdout,
        "None none Agg /\n\
         . ['out'] ['sales.csv']\n\
         ./out ['inner'] []\n\
         ./out/inner [] ['x.txt']\n\
         [] [] a/b.csv\n\
         ['revenue'] ['a.csv'] b'ok' &lt;a &amp; b&gt; 2d711642 36\n\
         start s\nend s\nabstract 8\n"
    );
    // What a job put in its environment is gone for the next one.
    let o = run(
        &exec,
        "import os\nprint(os.getenv('TOKEN', 'none'), dict(os.environ))\nopen('a.txt', 'w').write('1')\n",
        src.path(),
    );
    expect_ok(&o);
    assert_eq!(o.stdout, "none {}\n");
}

#[test]
fn a_figure_saved_into_a_buffer_comes_back_only_when_the_job_wrote_nothing_else() {
    let src = inputs();
    let exec = shared_pool(true, Gate::Figures);
    let draw =
        "import io, base64\nbuf = io.BytesIO()\nplt.plot([1, 3])\nplt.savefig(buf, format='png')\n\
                data = base64.b64encode(buf.getvalue()).decode()\n";
    let o = run(
        &exec,
        &format!("{draw}open('report.html', 'w').write(f'<img src=\"data:image/png;base64,{{data}}\">')\n"),
        src.path(),
    );
    expect_ok(&o);
    let names: Vec<&str> = o.artifacts().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["report.html"]);
    let o = run(
        &exec,
        &format!("{draw}print(len(data) > 100)\n"),
        src.path(),
    );
    expect_ok(&o);
    assert_eq!(o.artifacts().len(), 1, "{:?}", o.artifacts());
    assert!(o.artifacts()[0].name.ends_with(".png"));
}

/// Text files as finance code writes them: a CSV in GBK for a bank's upload, a Markdown
/// summary, the job's own log; each may be declared (`--expect run.log`, the log as the
/// first artifact) and comes back as the bytes written. A binary file under a text name
/// is refused as no text.
#[test]
fn text_and_photo_artifacts_may_be_declared() {
    let exec = shared_pool(true, Gate::Default);
    let code = r#"
import logging
logging.basicConfig(filename='run.log', level=logging.INFO, format='%(levelname)s %(message)s')
df = pd.DataFrame({'收款人': ['研发部', 'Sales'], '金额': [1250.5, 980.0]})
df.to_csv('payments.csv', index=False, encoding='gbk')
with open('summary.md', 'w', encoding='utf-8') as f:
    f.write(df.to_markdown(index=False))
logging.info('wrote %d payments', len(df))
"#;
    for first in ["run.log", "payments.csv", "summary.md"] {
        let mut artifacts = vec![first];
        artifacts.extend(
            ["run.log", "payments.csv", "summary.md"]
                .into_iter()
                .filter(|a| *a != first),
        );
        let checks = pyward::validate::Expectations::from_json(
            &serde_json::json!({"version": 1, "artifacts": artifacts}).to_string(),
        )
        .unwrap();
        let o = exec
            .run(Job::new(code).expect(&checks))
            .expect("infrastructure");
        expect_ok(&o);
        let get = |n: &str| {
            o.artifacts()
                .iter()
                .find(|a| a.name == n)
                .unwrap_or_else(|| panic!("{n}"))
        };
        let csv = get("payments.csv");
        assert!(
            csv.bytes.starts_with(b"\xca\xd5\xbf\xee\xc8\xcb"),
            "收款人 in GBK"
        );
        assert_eq!(csv.media_type, "text/csv");
        assert_eq!(get("summary.md").media_type, "text/markdown");
        let log = String::from_utf8(get("run.log").bytes.clone()).unwrap();
        assert!(log.contains("INFO wrote 2 payments"), "{log}");
    }
    // Figures in JPEG and WebP may be declared as well, and are checked as such.
    let checks = pyward::validate::Expectations::from_json(
        r#"{"version": 1, "artifacts": ["contact_sheet.jpg", "thumb.webp"]}"#,
    )
    .unwrap();
    let photos =
        "plt.plot([1, 3, 2])\nplt.savefig('contact_sheet.jpg')\nplt.savefig('thumb.webp')\n";
    let o = exec
        .run(Job::new(photos).expect(&checks))
        .expect("infrastructure");
    expect_ok(&o);
    assert_eq!(
        o.artifact("contact_sheet.jpg").unwrap().media_type,
        "image/jpeg"
    );
    assert_eq!(o.artifact("thumb.webp").unwrap().media_type, "image/webp");
    let fake =
        "open('contact_sheet.jpg', 'w').write('no picture')\nopen('thumb.webp', 'w').write('x')\n";
    let o = exec
        .run(Job::new(fake).expect(&checks))
        .expect("infrastructure");
    assert!(
        format!("{:?}", o.result).contains("not-jpeg"),
        "{:?}",
        o.result
    );
    let binary = "open('chart.md', 'wb').write(bytes(range(256)))\n";
    let o = exec.run(Job::new(binary)).expect("infrastructure");
    let failure = format!("{:?}", o.result);
    assert!(
        failure.contains("not-text") && failure.contains("chart.md is not text"),
        "{failure}"
    );
}

/// An animation saved as a GIF, as model code writes one: `FuncAnimation` through
/// `PillowWriter` (or `writer='pillow'`, or no writer: matplotlib falls back to Pillow
/// when no program is at hand), `ArtistAnimation`; declared (`--expect wave.gif`) or
/// not, it comes back checked as a whole GIF. The writers that start programs are no
/// members of the view, gate on and off, and a video needs one: refused as such.
#[test]
fn animations_are_saved_as_gifs_in_the_process() {
    let exec = shared_pool(true, Gate::Default);
    let src = inputs();
    let code = r#"
import numpy as np
import matplotlib.animation as animation
from matplotlib.animation import FuncAnimation, PillowWriter, ArtistAnimation
fig, ax = plt.subplots(figsize=(2, 2), dpi=40)
x = np.linspace(0, 6.3, 30)
line, = ax.plot(x, np.sin(x))
def update(i):
    line.set_ydata(np.sin(x + i))
    return line,
ani = FuncAnimation(fig, update, frames=4, interval=50, blit=True)
ani.save('wave.gif', writer=PillowWriter(fps=10))
ani.save('named.gif', writer='pillow')
ani.save('default.gif')
fig2, ax2 = plt.subplots(figsize=(2, 2), dpi=40)
frames = [[ax2.bar([0, 1], [i, 3 - i], color='C0')] for i in range(3)]
frames = [list(f[0]) for f in frames]
animation.ArtistAnimation(fig2, frames, interval=100).save('bars.gif', writer='pillow')
# The animation as HTML (frames embedded): matplotlib writes it in a temporary folder of
# its own and removes the folder after.
with open('wave.html', 'w') as f:
    f.write(ani.to_jshtml())
"#;
    let checks = pyward::validate::Expectations::from_json(
        r#"{"version": 1, "artifacts": ["wave.gif", "bars.gif", "wave.html"]}"#,
    )
    .unwrap();
    let o = exec
        .run(Job::new(code).src_dir(src.path()).expect(&checks))
        .expect("infrastructure");
    expect_ok(&o);
    for name in ["wave.gif", "named.gif", "default.gif", "bars.gif"] {
        let gif = o.artifact(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(gif.media_type, "image/gif", "{name}");
        assert!(gif.bytes.starts_with(b"GIF89a"), "{name}");
    }
    let html = String::from_utf8_lossy(&o.artifact("wave.html").unwrap().bytes).into_owned();
    assert!(html.contains("data:image/png;base64,"), "{:.300}", html);
    // Saves aimed outside the job's folder land in it under their own names (the
    // writer opens through the job's writes); a name with a NUL is refused.
    let aimed = "from matplotlib.animation import FuncAnimation\n\
                 fig, ax = plt.subplots(figsize=(1, 1), dpi=20)\n\
                 ani = FuncAnimation(fig, lambda i: ax.plot([i], [i]), frames=2)\n\
                 ani.save('/tmp/pyward_abs.gif', writer='pillow')\n\
                 ani.save('../../pyward_up.gif', writer='pillow')\n\
                 try:\n    ani.save('a\\x00b.gif', writer='pillow')\nexcept ValueError as e:\n    print('refused:', e)\n";
    let o = run(&exec, aimed, src.path());
    expect_ok(&o);
    let mut names: Vec<&str> = o.artifacts().iter().map(|a| a.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["pyward_abs.gif", "pyward_up.gif"], "{}", o.stdout);
    assert!(o.stdout.contains("refused:"), "{}", o.stdout);
    assert!(!std::path::Path::new("/tmp/pyward_abs.gif").exists());
    let video = "from matplotlib.animation import FuncAnimation\nfig, ax = plt.subplots()\n\
                 ani = FuncAnimation(fig, lambda i: ax.plot([i], [i]), frames=2)\n\
                 ani.save('clip.mp4', writer='ffmpeg')\n";
    let o = run(&exec, video, src.path());
    let e = python_error(&o);
    assert_eq!(e.type_name, "ValueError", "{e:?}");
    refused_gate_on_and_off(
        src.path(),
        &[
            (
                "from matplotlib.animation import FFMpegWriter",
                "FFMpegWriter",
            ),
            ("import matplotlib.animation as a\nw = a.writers", "writers"),
            (
                "import matplotlib.animation as a\na.ImageMagickWriter()",
                "ImageMagickWriter",
            ),
        ],
    );
}

/// Numbers in a locale's format, as finance scripts write them: the locale asked for
/// if the sandbox can read it, else the C locale (`locale.Error`, as here: the sandbox
/// reads no locale files); separators by `format_string(..., grouping=True)`. The
/// locale a job sets is the job's own (the state guard restores it): the next job on
/// the same worker finds the one warm-up left, and the worker serves on.
#[test]
fn a_locale_a_job_sets_is_its_own() {
    let exec = executor(Policy::default());
    let src = inputs();
    let set = r#"
import locale
before = locale.setlocale(locale.LC_ALL)
try:
    locale.setlocale(locale.LC_ALL, 'en_US.UTF-8')
except locale.Error:
    locale.setlocale(locale.LC_ALL, 'C')
print(before, '->', locale.setlocale(locale.LC_ALL))
print(locale.format_string('%.2f', 1234567.891, grouping=True), locale.localeconv()['decimal_point'])
open('total.txt', 'w').write(locale.format_string('%d', 1234567, grouping=True))
"#;
    let a = run(&exec, set, src.path());
    expect_ok(&a);
    let lines: Vec<&str> = a.stdout.lines().collect();
    let (before, _) = lines[0].split_once(" -> ").unwrap();
    assert!(
        lines[1].starts_with("1234567.89") || lines[1].starts_with("1,234,567.89"),
        "{}",
        a.stdout
    );
    assert!(a.retired.is_none(), "{:?}", a.retired);
    let b = run(
        &exec,
        "import locale\nprint(locale.setlocale(locale.LC_ALL))\nopen('l.txt', 'w').write('1')",
        src.path(),
    );
    expect_ok(&b);
    assert_eq!(b.stdout.trim(), before);
    // The environment's locale (''), the usual fallback, and C with UTF-8 are the C
    // locale a job runs in.
    let c = run(
        &exec,
        "import locale\nfor name in ('', 'C.UTF-8', 'C.utf8'):\n    print(locale.setlocale(locale.LC_ALL, name))\n\
         open('l.txt', 'w').write('1')",
        src.path(),
    );
    expect_ok(&c);
    assert_eq!(c.stdout, "C\nC\nC\n");
    assert_eq!(a.worker.unwrap().pid, b.worker.unwrap().pid);
    // A name with a slash is a folder of locale files to the C library: refused before
    // it is read, gate on and off, and so is a name that is no text.
    for exec in [&exec, &executor(Policy::gate_disabled_for_testing())] {
        for (name, refusal) in [
            ("'/etc'", "PermissionError"),
            ("'../../etc/x'", "PermissionError"),
            ("'en_US\\x00/etc'", "PermissionError"),
            ("('en_US', 'UTF-8/../../etc')", "TypeError"),
        ] {
            let code = format!("import locale\nlocale.setlocale(locale.LC_ALL, {name})");
            let e = python_error(&run(exec, &code, src.path())).clone();
            assert_eq!(e.type_name, refusal, "{name}: {e:?}");
        }
    }
    refused_gate_on_and_off(
        src.path(),
        &[
            (
                "import locale\nlocale.bindtextdomain('x', '/tmp')",
                "bindtextdomain",
            ),
            ("import locale\nlocale.resetlocale()", "resetlocale"),
        ],
    );
}

/// A CSV of 5 MB or more, which pandas would read on several threads through a memory
/// map of the file, and `np.load(..., mmap_mode='r')`: read whole, the same values, on
/// the job's one thread (the sandbox maps no file).
#[test]
fn a_large_csv_and_a_mapped_array_are_read_as_plain_python_reads_them() {
    let exec = shared_pool(true, Gate::Default);
    let src = inputs();
    let mut csv = String::from("trip_id,zone,fare\n");
    for i in 0..330_000u32 {
        csv.push_str(&format!(
            "{i},zone_{},{}.{:02}\n",
            i % 37,
            i % 90 + 3,
            i % 100
        ));
    }
    assert!(csv.len() > 5 << 20, "{}", csv.len());
    std::fs::write(src.path().join("trips.csv"), &csv).unwrap();
    // np.save of a 3x2 float64 array of 0..5.
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let mut header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }".to_string();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    for x in 0..6 {
        npy.extend_from_slice(&f64::from(x).to_le_bytes());
    }
    std::fs::write(src.path().join("field.npy"), &npy).unwrap();
    let o = run(
        &exec,
        "import pandas as pd, numpy as np\n\
         df = pd.read_csv('trips.csv')\n\
         print(df.shape, round(df['fare'].sum(), 2))\n\
         z = np.load('field.npy', mmap_mode='r')\n\
         print(z.shape, z.sum())\n\
         df.groupby('zone')['fare'].sum().to_csv('by_zone.csv')\n",
        src.path(),
    );
    expect_ok(&o);
    let fare: f64 = (0..330_000u32)
        .map(|i| f64::from(i % 90 + 3) + f64::from(i % 100) / 100.0)
        .sum();
    assert_eq!(
        o.stdout,
        format!(
            "(330000, 3) {:?}\n(3, 2) 15.0\n",
            (fare * 100.0).round() / 100.0
        )
    );
}

/// Every file under `dir` with its bytes, to compare a folder before and after a job.
fn tree(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = common::files_under(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

/// `shutil` as scripts use it: the clean-up of an output folder at the start (`if
/// os.path.exists(d): shutil.rmtree(d)`, `ignore_errors=True`), a copy of an input into
/// a folder the job made, `copyfile`, `copyfileobj` between two files the job opened.
/// Hostile twins: a host file copied in, a copy onto a host path, `rmtree` of the
/// inputs, of the job's folder, of a host folder and of a folder holding a file the job
/// wrote: each refused (or, for the copy out, an artifact), and nothing on disk changes.
#[test]
fn shutil_copies_through_the_job_s_open_and_deletes_nothing() {
    let src = inputs();
    let host = tempfile::tempdir().unwrap();
    std::fs::write(host.path().join("kept.txt"), "canary-7f3e").unwrap();
    let (src_before, host_before) = (tree(src.path()), tree(host.path()));
    let exec = shared_pool(true, Gate::Figures);
    let code = r#"
import os, shutil
if os.path.exists('output'):
    shutil.rmtree('output')
os.makedirs('output')
shutil.rmtree('never_made', ignore_errors=True)
os.makedirs('scratch/deep')
shutil.rmtree('scratch/deep')
print(os.path.isdir('scratch'), os.path.isdir('scratch/deep'))
shutil.rmtree('scratch')
print(os.path.exists('scratch'))
print(shutil.copy('/mnt/data/sales.csv', 'output'))
print(shutil.copyfile('sales.csv', 'copy.csv'))
with open('copy.csv') as a, open('again.csv', 'w') as b:
    shutil.copyfileobj(a, b)
print(len(pd.read_csv('output/sales.csv')), os.listdir('output'))
try:
    shutil.rmtree('missing')
except FileNotFoundError as e:
    print('missing:', e.filename)
HOST = %HOST%
for name, attempt in [
        ('host file in', lambda: shutil.copy('/etc/hostname', 'h.txt')),
        # A file the kernel lets the worker read (a font): the job's open refuses it.
        ('system file in', lambda: shutil.copyfile(%FONT%, 'font.ttc')),
        ('climbing in', lambda: shutil.copyfile('../../../etc/passwd', 'p.txt')),
        ('onto itself', lambda: shutil.copyfile('copy.csv', '/mnt/data/copy.csv')),
        ('the inputs', lambda: shutil.rmtree('/mnt/data')),
        ('the job folder', lambda: shutil.rmtree('.')),
        ('a host folder', lambda: shutil.rmtree(HOST)),
        ('a climb', lambda: shutil.rmtree('../..')),
        ('holding a file', lambda: shutil.rmtree('output')),
        ('NUL in a name', lambda: shutil.copy('sales.csv', 'a\x00.csv')),
        ('a control character', lambda: shutil.copy('sales.csv', 'a\x07.csv'))]:
    try:
        attempt()
        print(name, 'ALLOWED')
    except (PermissionError, OSError, TypeError, ValueError) as e:
        print(name, type(e).__name__)
print(shutil.copy('sales.csv', HOST + '/kept.txt'))
"#
    .replace(
        "%HOST%",
        &format!("{:?}", host.path().display().to_string()),
    )
    .replace("%FONT%", "'/usr/share/fonts/truetype/wqy/wqy-microhei.ttc'");
    let o = run(&exec, &code, src.path());
    expect_ok(&o);
    let host_copy = format!("{}/kept.txt", host.path().display());
    assert_eq!(
        o.stdout,
        format!(
            "True False\nFalse\noutput/sales.csv\ncopy.csv\n2 ['sales.csv']\nmissing: missing\n\
             host file in PermissionError\nsystem file in PermissionError\nclimbing in FileNotFoundError\nonto itself OSError\n\
             the inputs PermissionError\nthe job folder PermissionError\n\
             a host folder PermissionError\na climb PermissionError\n\
             holding a file PermissionError\nNUL in a name TypeError\n\
             a control character ValueError\n{host_copy}\n"
        )
    );
    let csv = "region,units\nnorth,3\nsouth,5\n";
    for name in ["sales.csv", "copy.csv", "again.csv", "kept.txt"] {
        assert_eq!(text(&o, name), csv, "{name}");
    }
    assert!(!o.stdout.contains("canary-7f3e"));
    assert_eq!(tree(src.path()), src_before, "the inputs changed");
    assert_eq!(tree(host.path()), host_before, "the host folder changed");

    // An input that is a symlink to the host's file: the job is refused before it runs.
    let linked = inputs();
    std::os::unix::fs::symlink(host.path().join("kept.txt"), linked.path().join("link.csv"))
        .unwrap();
    let refused = exec
        .run(Job::new("import shutil\nshutil.copy('link.csv', 'l.csv')\n").src_dir(linked.path()));
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("symlink")),
        "{refused:?}"
    );
    assert_eq!(tree(host.path()), host_before, "the host folder changed");

    // Copies count against the job's bounds as every write does.
    let o = run(
        &exec,
        "import shutil
for i in range(40):
    shutil.copy('sales.csv', f'copy_{i}.csv')
",
        src.path(),
    );
    let failure = o.failure().expect("40 copies pass the artifact bound");
    assert!(failure.feedback().contains("16"), "{}", failure.feedback());

    // What is no member of the view: refused by the gate, and at run time with it off.
    refused_gate_on_and_off(
        src.path(),
        &[
            (
                "import shutil\nshutil.move('sales.csv', 'moved.csv')\n",
                "move",
            ),
            (
                "import shutil\nshutil.make_archive('all', 'zip', '.')\n",
                "make_archive",
            ),
            ("import shutil\nprint(shutil.which('sh'))\n", "which"),
            ("from shutil import disk_usage\n", "disk_usage"),
        ],
    );
}
