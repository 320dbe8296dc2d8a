//! The table job's repair loop with a scripted "model": its first attempt at the
//! allocation rule (examples/allocation/README.md) reads a column the sheet does not
//! have, the feedback lists the sheet's columns, and the second attempt passes every
//! declared check. Prints what the model is told, then the result table as the report
//! shows it (shape, columns, first rows) and writes `allocation-result.xlsx`.
//!
//! Run: `cargo run --example allocation_repair` (after `make venv`).

use pyward::report::Report;
use pyward::validate::Expectations;
use pyward::{Executor, Job};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/allocation");
    let read = |name: &str| std::fs::read_to_string(format!("{dir}/{name}"));
    let expect = Expectations::from_toml(&read("checks.toml")?)?;
    let answers = [read("first_attempt.py")?, read("allocation.py")?];

    let exec = Executor::builder().workers(1).build()?;
    let job = Job::new(answers[0].as_str())
        .src_bytes("source.xlsx", std::fs::read(format!("{dir}/source.xlsx"))?)
        .expect(&expect)
        .task(
            read("README.md")?
                .lines()
                .filter(|l| l.starts_with('>'))
                .collect::<Vec<_>>()
                .join("\n"),
        );
    let mut next = answers[1..].iter();
    let repaired = exec.run_with_repair(job, 3, |feedback| {
        println!(
            "--- attempt {} failed ({}); the model is told:\n{}\n",
            feedback.attempt,
            feedback.outcome.status(),
            feedback.text
        );
        next.next().cloned()
    })?;
    let last = repaired.outcome();
    println!("--- attempt {}: {}", repaired.attempts.len(), last.status());
    let report = Report::from_outcome(last, false);
    for artifact in report.run.iter().flat_map(|r| &r.artifacts) {
        if let Some(table) = &artifact.table {
            println!(
                "{} (sheet {}): {} rows x {} columns",
                artifact.name,
                table.sheet.as_deref().unwrap_or("-"),
                table.rows,
                table.column_count
            );
            let names: Vec<String> = table
                .columns
                .iter()
                .map(|c| format!("{} ({})", c.name, c.kind))
                .collect();
            println!("  columns: {}", names.join(", "));
            for row in &table.head {
                println!("  {}", row.join(" | "));
            }
        }
    }
    if let Some(result) = last.artifact("result.xlsx") {
        std::fs::write("allocation-result.xlsx", &result.bytes)?;
        println!(
            "wrote allocation-result.xlsx ({} bytes)",
            result.bytes.len()
        );
    }
    if !last.is_success() {
        return Err("the second attempt did not pass the checks".into());
    }
    Ok(())
}
