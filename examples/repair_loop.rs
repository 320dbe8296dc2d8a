//! The repair loop with a scripted "model": a wrong column name, then a banned import,
//! then a fix. Prints the feedback text pyward produced at each step.
//!
//! Run: `cargo run --example repair_loop` (after `make venv`). With `--records DIR` it
//! also writes the run record, every attempt in it, into DIR (what `pyward serve
//! --records DIR` shows in its Runs view, with the code diff between attempts).

use pyward::record::Recorder;
use pyward::{Executor, Job};

const MODEL_ANSWERS: [&str; 3] = [
    "df = pd.read_csv(srcpath('sales.csv'))\n\
     df.groupby('regoin')['revenue'].sum().plot.bar()\nplt.savefig(OUT)\n",
    "import tempfile\ndf = pd.read_csv(tempfile.gettempdir() + '/sales.csv')\n\
     df.groupby('region')['revenue'].sum().plot.bar()\nplt.savefig(OUT)\n",
    "df = pd.read_csv(srcpath('sales.csv'))\n\
     df.groupby('region')['revenue'].sum().plot.bar()\nplt.savefig(OUT)\n",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data");
    let args: Vec<String> = std::env::args().collect();
    let records = match args.get(1..) {
        Some([flag, dir]) if flag == "--records" => Some(Recorder::new(dir)),
        Some([]) | None => None,
        _ => return Err("usage: repair_loop [--records DIR]".into()),
    };
    let exec = Executor::builder().workers(1).build()?;
    let job = Job::new(MODEL_ANSWERS[0])
        .src_dir(data)
        .task("bar chart of revenue per region");
    let mut answers = MODEL_ANSWERS[1..].iter();
    let repaired = exec.run_with_repair(job.clone(), 5, |feedback| {
        println!(
            "--- attempt {} failed ({}); the model is told:\n{}\n",
            feedback.attempt,
            feedback.outcome.status(),
            feedback.text
        );
        answers.next().map(|code| code.to_string())
    })?;
    if let Some(recorder) = records {
        let dir = recorder.record(&exec, &job, &repaired.attempts)?;
        println!("recorded in {}", dir.display());
    }
    let last = repaired.outcome();
    println!("--- attempt {}: {}", repaired.attempts.len(), last.status());
    if let Some(png) = last.artifact("figure.png") {
        std::fs::write("repaired.png", &png.bytes)?;
        println!("wrote repaired.png ({} bytes)", png.bytes.len());
    }
    Ok(())
}
