//! One program that is also its own worker: `pyward::worker::run_if_worker()` as the
//! first line of `main`, then the executor starts workers from this executable.
//!
//! ```sh
//! cargo run --example single_binary -- figure.png
//! ```
//!
//! (The dedicated `pyward-worker` program maps less code into each worker: see the
//! `pyward::worker` docs for the trade-off.)

fn main() -> Result<(), Box<dyn std::error::Error>> {
    pyward::worker::run_if_worker();

    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "figure.png".into());
    let exec = pyward::Executor::builder().workers(1).build()?;
    // A tenant keeps the worker warm after the job (without one, a job gets a process
    // of its own, killed after it), so that it can be shown below.
    let job =
        pyward::Job::new("x = np.linspace(0, 6.3, 200)\nplt.plot(x, np.sin(x))\nplt.savefig(OUT)")
            .tenant("example");
    let outcome = exec.run(job)?;
    match &outcome.result {
        Ok(artifacts) => std::fs::write(&out, &artifacts[0].bytes)?,
        Err(failure) => return Err(failure.feedback().into()),
    }
    let worker = outcome.worker.as_ref().expect("the job ran on a worker");
    let program = std::fs::read_link(format!("/proc/{}/exe", worker.pid))?;
    println!(
        "wrote {out}; worker {} runs {}",
        worker.pid,
        program.display()
    );
    Ok(())
}
