//! A crate that uses pyward from an async `main`: renders one figure and writes it to the
//! path given as the first argument.

use std::time::Duration;

use pyward::{Executor, Job};

const CODE: &str = r#"
x = np.linspace(0, 2 * np.pi, 400)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(x, np.sin(x), label="sin")
ax.plot(x, np.cos(x), label="cos")
ax.legend()
plt.savefig(OUT)
"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .ok_or("usage: downstream OUTPUT.png")?;
    // Warming the pool takes a second or two of blocking work: off the async threads.
    let exec = tokio::task::spawn_blocking(|| {
        Executor::builder()
            .workers(1)
            .timeout(Duration::from_secs(10))
            .build()
    })
    .await??;
    // `run_async` needs no particular runtime; dropping the future would cancel the job.
    let outcome = exec.run_async(Job::new(CODE)).await?;
    match &outcome.result {
        Ok(artifacts) => {
            tokio::task::spawn_blocking({
                let (out, bytes) = (out.clone(), artifacts[0].bytes.clone());
                move || std::fs::write(out, bytes)
            })
            .await??;
            println!(
                "wrote {out} ({} bytes) in {:.0} ms",
                artifacts[0].bytes.len(),
                outcome.timings.total.as_secs_f64() * 1e3
            );
            Ok(())
        }
        Err(failure) => Err(format!("{}: {}", failure.status(), failure.feedback()).into()),
    }
}
