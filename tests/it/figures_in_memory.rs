//! `Job::figures_in_memory`: figures saved into `out/` come back from memory, byte for
//! byte what the disk path gives, and never touch the disk (nor, with host PNG encoding,
//! do PNGs on the default path). The corpus comparison runs half of the corpus in
//! `make test`, all of it under `make test-long` (`common::comparison_sample`).

use crate::common;

use common::{builder, comparison_sample, expect_ok, figure_corpus};
use pyward::gate::Policy;
use pyward::{Job, JobFailure, PngEncoder};

#[test]
fn the_corpus_comes_back_from_memory_byte_identical_to_the_disk_path() {
    let exec = builder().build().unwrap();
    for (name, code) in comparison_sample(figure_corpus()) {
        // PNG for every figure; names other than OUT and other formats are covered below.
        for out_name in ["figure.png"] {
            let job = || {
                Job::new(code.as_str())
                    .out_name(out_name)
                    .seed(1)
                    .allow_blank()
            };
            let disk = exec.run(job()).unwrap();
            let memory = exec.run(job().figures_in_memory()).unwrap();
            expect_ok(&disk);
            expect_ok(&memory);
            let names = |o: &pyward::Outcome| -> Vec<String> {
                o.artifacts().iter().map(|a| a.name.clone()).collect()
            };
            assert_eq!(names(&disk), names(&memory), "{name} as {out_name}");
            for (d, m) in disk.artifacts().iter().zip(memory.artifacts()) {
                assert!(d.bytes == m.bytes, "{name}: {} differs", d.name);
                assert_eq!(d.media_type, m.media_type);
            }
        }
    }
}

#[test]
fn a_figure_in_memory_never_reaches_out_and_other_files_still_do() {
    // The gate is off only so the job can look at the disk for us.
    let exec = builder()
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let code = "os = srcpath.__globals__['os']\n\
                plt.plot([1, 3, 2]); plt.savefig(OUT)\n\
                plt.gcf().savefig(OUT.replace('.png', '.svg'))\n\
                plt.savefig(os.path.join(os.path.dirname(OUT), 'noext'))\n\
                open(os.path.join(os.path.dirname(OUT), 'table.csv'), 'w').write('a,b\\n1,2\\n')\n\
                print(sorted(os.listdir(os.path.dirname(OUT))))\n";
    let memory = exec.run(Job::new(code).figures_in_memory()).unwrap();
    expect_ok(&memory);
    assert_eq!(memory.stdout.trim(), "['table.csv']");
    // Host PNG encoding (the default): PNG pixels go to the host, other files to disk.
    let host = exec.run(Job::new(code)).unwrap();
    expect_ok(&host);
    assert_eq!(host.stdout.trim(), "['figure.svg', 'table.csv']");
    // Matplotlib encoding, no memory: everything on disk.
    let stock = builder()
        .policy(Policy::gate_disabled_for_testing())
        .png_encoder(PngEncoder::Matplotlib)
        .build()
        .unwrap();
    let disk = stock.run(Job::new(code)).unwrap();
    expect_ok(&disk);
    assert_eq!(
        disk.stdout.trim(),
        "['figure.png', 'figure.svg', 'noext.png', 'table.csv']"
    );
    let names = |o: &pyward::Outcome| -> Vec<(String, String)> {
        o.artifacts()
            .iter()
            .map(|a| (a.name.clone(), a.media_type.clone()))
            .collect()
    };
    assert_eq!(names(&memory), names(&disk));
    assert_eq!(names(&host), names(&disk));
    assert_eq!(names(&memory).len(), 4);
}

#[test]
fn caps_and_validation_hold_for_figures_in_memory() {
    let exec = builder().max_artifact_bytes(1000).build().unwrap();
    let big = "plt.imshow(np.random.rand(300, 300)); plt.savefig(OUT)\n";
    let o = exec.run(Job::new(big).figures_in_memory()).unwrap();
    let Some(JobFailure::InvalidOutput { check, .. }) = o.failure() else {
        panic!("{:?}", o.result)
    };
    // The bound is named as for a figure written to disk past it.
    assert_eq!(check, "max_artifact_bytes");

    let exec = builder().build().unwrap();
    let blank = exec
        .run(Job::new("plt.figure(); plt.savefig(OUT)\n").figures_in_memory())
        .unwrap();
    assert!(
        matches!(blank.failure(), Some(JobFailure::InvalidOutput { check, .. }) if check == "empty-figure"),
        "{:?}",
        blank.result
    );
    let unsaved = exec
        .run(Job::new("plt.plot([1, 2])\n").figures_in_memory())
        .unwrap();
    // A drawn figure left open by a job that saved nothing is its figure (issue 38).
    assert_eq!(
        unsaved.figure("figure.png").map(|a| a.obtained),
        Some(Some(pyward::Obtained::OpenAtEnd)),
        "{:?}",
        unsaved.result
    );
}
