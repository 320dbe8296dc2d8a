//! No job fills the disk: everything a job writes (out/, tmp/, HOME)
//! lives on one private tmpfs per worker, bounded in bytes and in files, and the host's
//! file system is untouched. Tried with the gate off (the writes go through pandas and
//! numpy's file writers either way; the gate is not what stops them).

use crate::common;

use pyward::gate::Policy;
use pyward::sandbox::ScratchLimit;
use pyward::{Executor, Job, JobFailure};

/// The real `os`, reached the way only a gate-off job can (the gate refuses this).
const REAL_OS: &str = "os = srcpath.__globals__['os']\n";

/// The worker's tmp/, by full path: a file a job writes under a bare name is an
/// artifact in out/, and the artifact bound (16 files) stops a flood of them long
/// before the scratch file system would (tests/it/model_style.rs).
const TMP: &str = "T = srcpath.__globals__['_TMP'] + '/'\n";

const LIMIT_BYTES: u64 = 32 << 20;
const LIMIT_FILES: u64 = 300;

fn executor() -> Executor {
    common::builder()
        .preload_pandas(true)
        .scratch_limit(LIMIT_BYTES, LIMIT_FILES)
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap()
}

/// Free bytes and inodes of the file system that holds the pool's directories.
fn host_free() -> (u64, u64) {
    let path = std::ffi::CString::new(std::env::temp_dir().as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: statvfs fills the zeroed struct we own; the path is NUL-terminated.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        assert_eq!(libc::statvfs(path.as_ptr(), &mut st), 0);
        st
    };
    (st.f_bavail * st.f_frsize, st.f_favail)
}

fn expect_full(exec: &Executor, code: &str, which: ScratchLimit) {
    let outcome = exec.run(Job::new(code)).unwrap();
    match outcome.failure() {
        Some(JobFailure::ScratchFull { which: w, limit }) => {
            assert_eq!(*w, which, "{code}");
            let expected = match which {
                ScratchLimit::Bytes => LIMIT_BYTES,
                ScratchLimit::Files => LIMIT_FILES,
                other => panic!("a scratch limit this test does not know: {other:?}"),
            };
            assert_eq!(*limit, expected);
            assert!(outcome.feedback().unwrap().contains("stopped"));
        }
        other => panic!("{code}\nexpected scratch_full, got {other:?}"),
    }
}

#[test]
fn many_small_files_large_files_and_deep_trees_stop_at_the_limit() {
    let exec = executor();
    let enforcement = exec
        .run(Job::new("plt.plot([1, 2]); plt.savefig(OUT)"))
        .unwrap();
    common::expect_ok(&enforcement);
    assert!(
        enforcement.worker.as_ref().unwrap().sandbox.scratch,
        "the scratch file system is mounted: {:?}",
        enforcement.worker.as_ref().unwrap().sandbox.degraded
    );
    let before = host_free();

    // Many small files in tmp/ (the job catches the errors and carries on).
    let small = format!("{TMP}i = 0\nwhile i < 100000:\n    try:\n        pd.DataFrame({{'a': [i]}}).to_csv(T + f'{{i}}.csv')\n    except OSError:\n        break\n    i += 1\nplt.plot([1, 2]); plt.savefig(OUT)");
    expect_full(&exec, &small, ScratchLimit::Files);
    // A few large files in tmp/: each is under the per-file cap, together over the
    // total.
    let large =
        format!("{TMP}for i in range(8):\n    np.zeros(2 << 20).tofile(f'{{T}}big{{i}}.bin')");
    expect_full(&exec, &large, ScratchLimit::Bytes);
    // A deep directory tree through HOME, one level per file-system entry.
    let deep = format!("{REAL_OS}p = os.environ['HOME']\nfor i in range(100000):\n    p = p + '/d'\n    os.mkdir(p)");
    expect_full(&exec, &deep, ScratchLimit::Files);

    // The host's file system saw none of it: free space and inodes did not drop (they
    // may rise, as other tests clean up). The margin is for other processes (the
    // suite's other tests write records and artifacts meanwhile: 9.5 MB seen); what
    // escaped the scratch mount would be the large files, 8 x 16 MiB = 128 MiB.
    let after = host_free();
    assert!(
        before.0.saturating_sub(after.0) < 2 * LIMIT_BYTES,
        "host bytes {before:?} -> {after:?}"
    );
    // Files: the other tests create hundreds meanwhile; what escaped would be the
    // small files or the tree, up to 100,000 of each.
    assert!(
        before.1.saturating_sub(after.1) < 5_000,
        "host inodes {before:?} -> {after:?}"
    );

    // The worker's scratch was emptied: the next job has all of it again.
    let next = exec
        .run(Job::new(format!(
            "{TMP}for i in range(200):\n    np.zeros(8).tofile(f'{{T}}f{{i}}.bin')\nplt.plot([1, 2]); plt.savefig(OUT)",
        )))
        .unwrap();
    common::expect_ok(&next);
}

#[test]
fn files_left_in_tmp_or_home_do_not_reach_the_next_job() {
    let exec = executor();
    let write = format!("{REAL_OS}{TMP}pd.DataFrame({{'s': ['secret']}}).to_csv(os.environ['HOME'] + '/note.csv')\nnp.zeros(4).tofile(T + 'left.bin')\nplt.plot([1]); plt.savefig(OUT)");
    common::expect_ok(&exec.run(Job::new(write)).unwrap());
    let read = format!("{REAL_OS}{TMP}assert os.listdir(os.environ['HOME']) == []\nassert os.listdir(T) == [], os.listdir(T)\nassert os.listdir('.') == [], os.listdir('.')\nplt.plot([1]); plt.savefig(OUT)");
    common::expect_ok(&exec.run(Job::new(read)).unwrap());
}
