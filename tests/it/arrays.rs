//! `Job::with_array`: numeric arrays reach the job through sealed shared memory as
//! read-only numpy arrays, with their exact dtype, shape and values, and nothing the
//! job does can change the caller's data.

use crate::common;

use common::{builder, expect_ok};
use pyward::gate::Policy;
use pyward::ndarray::{Array, Array1, Array2, Array3, ShapeBuilder};
use pyward::{Error, Isolation, Job, JobFailure, SharedArray};

const PLOT: &str = "plt.plot([1, 2, 3]); plt.savefig(OUT)\n";

#[test]
fn arrays_arrive_with_their_dtype_shape_and_values_read_only() {
    let exec = builder().build().unwrap();
    let grid = Array2::from_shape_fn((300, 200), |(i, j)| (i * 1000 + j) as f64);
    // Fortran order on the caller's side: the job still sees the logical layout.
    let fortran = Array2::from_shape_vec((2, 3).f(), vec![1i32, 4, 2, 5, 3, 6]).unwrap();
    let mask = Array1::from_vec(vec![true, false, true]);
    let cube = Array3::<u8>::from_shape_fn((2, 3, 4), |(a, b, c)| (a * 12 + b * 4 + c) as u8);
    let empty = Array2::<f32>::zeros((0, 5));
    let code = "for a in (grid, fortran, mask, cube, empty):\n\
                \x20   print(a.dtype.str, a.shape, a.flags.writeable, a.sum().item())\n\
                print(grid[299, 199], fortran.tolist())\n\
                plt.imshow(grid); plt.savefig(OUT)\n";
    let job = Job::new(code)
        .with_array("grid", &grid)
        .with_array("fortran", &fortran)
        .with_array("mask", &mask)
        .with_array("cube", &cube)
        .with_array("empty", &empty);
    let o = exec.run(job).unwrap();
    expect_ok(&o);
    let expected = format!(
        "<f8 (300, 200) False {:?}\n<i4 (2, 3) False 21\n|b1 (3,) False 2\n|u1 (2, 3, 4) False 276\n<f4 (0, 5) False 0.0\n299199.0 [[1, 2, 3], [4, 5, 6]]",
        grid.sum()
    );
    assert_eq!(o.stdout.trim(), expected);
}

#[test]
fn a_job_cannot_write_to_a_shared_array_and_the_callers_data_is_unchanged() {
    let data = Array::linspace(0.0, 1.0, 1000);
    let shared = SharedArray::new(&data).unwrap();
    let before = shared.to_bytes().unwrap();

    let exec = builder().build().unwrap();
    let o = exec
        .run(Job::new("x[0] = 42.0\n").with_shared_array("x", &shared))
        .unwrap();
    let Some(JobFailure::PythonError(e)) = o.failure() else {
        panic!("{:?}", o.result)
    };
    assert_eq!(e.type_name, "ValueError");
    assert!(e.message.contains("read-only"), "{}", e.message);

    // With the gate off, a job that tries harder: turn the flag back on, write through
    // the buffer protocol, resize. Each attempt is recorded, none may succeed.
    let exec = builder()
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let code = "r = []\n\
                for f in (lambda: x.setflags(write=True),\n\
                \x20         lambda: x.data.cast('B').__setitem__(0, 1),\n\
                \x20         lambda: np.frombuffer(x.data, dtype=np.uint8).__setitem__(0, 1),\n\
                \x20         lambda: x.resize(10, refcheck=False)):\n\
                \x20   try:\n\
                \x20       f(); r.append('allowed')\n\
                \x20   except Exception as e:\n\
                \x20       r.append(type(e).__name__)\n\
                print(r, x[0], x.sum())\n"
        .to_string()
        + PLOT;
    let o = exec
        .run(Job::new(code.clone()).with_shared_array("x", &shared))
        .unwrap();
    expect_ok(&o);
    assert!(!o.stdout.contains("allowed"), "{}", o.stdout);
    assert_eq!(
        shared.to_bytes().unwrap(),
        before,
        "the caller's array changed"
    );

    // Past numpy's flag altogether: a writable array forged over the same address. The
    // page protection (a read-only mapping of sealed memory) is what stops this write,
    // and it costs the job its process, not the caller its data.
    let forge = "class W:\n\
                 \x20   __array_interface__ = dict(x.__array_interface__, data=(x.__array_interface__['data'][0], False))\n\
                 np.asarray(W())[0] = 42.0\n";
    let o = exec
        .run(Job::new(forge).with_shared_array("x", &shared))
        .unwrap();
    let Some(JobFailure::WorkerCrashed { exit, .. }) = o.failure() else {
        panic!("{:?}", o.result)
    };
    assert!(exit.signal_name() == Some("SIGSEGV"), "{exit}");
    assert_eq!(
        shared.to_bytes().unwrap(),
        before,
        "the caller's array changed"
    );

    // The same array, again, in a fresh process: still intact.
    let fresh = builder()
        .policy(Policy::gate_disabled_for_testing())
        .isolation(Isolation::Fresh)
        .build()
        .unwrap();
    for _ in 0..2 {
        let o = fresh
            .run(Job::new(code.clone()).with_shared_array("x", &shared))
            .unwrap();
        expect_ok(&o);
        let tail: Vec<&str> = o.stdout.split_whitespace().rev().take(2).collect();
        assert_eq!(tail[1], "0.0", "{}", o.stdout);
        let sum: f64 = tail[0].parse().unwrap();
        assert!((sum - data.sum()).abs() < 1e-9, "{}", o.stdout);
    }
    assert_eq!(shared.to_bytes().unwrap(), before);
}

#[test]
fn bad_array_names_are_refused_before_anything_runs() {
    let exec = builder().build().unwrap();
    let a = Array1::<f64>::zeros(3);
    for name in [
        "np",
        "OUT",
        "_hidden",
        "__class__",
        "for",
        "os",
        "eval",
        "1x",
        "a-b",
        "",
    ] {
        let r = exec.run(Job::new(PLOT).with_array(name, &a));
        assert!(matches!(r, Err(Error::InvalidJob(_))), "{name:?}: {r:?}");
    }
    let r = exec.run(Job::new(PLOT).with_array("a", &a).with_array("a", &a));
    assert!(matches!(r, Err(Error::InvalidJob(_))), "{r:?}");
    // The pool is unharmed.
    expect_ok(&exec.run(Job::new(PLOT).with_array("a", &a)).unwrap());
}

#[test]
fn shared_arrays_are_recorded_and_replay_byte_identical_or_refuse_when_changed() {
    use pyward::record::{self, Recorder, ReplayError};
    let exec = builder().build().unwrap();
    let z = Array2::from_shape_fn((40, 60), |(i, j)| ((i as f64) / 7.0).sin() * (j as f64));
    let job = Job::new("plt.imshow(z); plt.colorbar(); plt.savefig(OUT)\n")
        .with_array("z", &z)
        .seed(3);
    let first = exec.run(job.clone()).unwrap();
    expect_ok(&first);
    let runs = tempfile::tempdir().unwrap();
    let attempt = pyward::Attempt::new(
        b"plt.imshow(z); plt.colorbar(); plt.savefig(OUT)\n".to_vec(),
        first.clone(),
    );
    let dir = Recorder::new(runs.path())
        .record(&exec, &job, std::slice::from_ref(&attempt))
        .unwrap();
    let rec = record::load(&dir).unwrap();
    assert_eq!(rec.arrays.len(), 1);
    assert_eq!(
        (rec.arrays[0].dtype.as_str(), rec.arrays[0].shape.as_slice()),
        ("<f8", &[40, 60][..])
    );
    let again = exec
        .run(record::replay_job(&dir, &rec, 0).unwrap())
        .unwrap();
    expect_ok(&again);
    assert!(again.artifacts()[0].bytes == first.artifacts()[0].bytes);

    // Tampering with the stored array is caught before anything runs.
    let npy = dir.join("arrays/z.npy");
    let mut bytes = std::fs::read(&npy).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&npy, bytes).unwrap();
    assert!(matches!(
        record::replay_job(&dir, &rec, 0),
        Err(ReplayError::InputChanged { .. })
    ));
}
