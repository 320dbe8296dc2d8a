//! The repair loop: run, tell the caller's model what went wrong, run its fix, repeat.
//!
//! Every attempt is a new job that passes the gate from zero: no attempt inherits trust
//! from the one before it.

use super::Executor;
use crate::error::Result;
use crate::job::Job;
use crate::outcome::Outcome;

/// What the caller's repair function sees after a failed attempt.
#[derive(Debug)]
#[non_exhaustive]
pub struct Feedback<'a> {
    /// The task the code was written for, if the job has one.
    pub task: Option<&'a str>,
    /// 1-based number of the attempt that failed.
    pub attempt: usize,
    /// The code of that attempt.
    pub code: &'a str,
    /// Its outcome: the gate verdict, the Python error or the validation failure.
    pub outcome: &'a Outcome,
    /// The failure's text for a model ([`crate::JobFailure::feedback`]).
    pub text: String,
}

/// One attempt of a repair loop (or of any job whose run is recorded).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Attempt {
    /// The code that ran (or was refused).
    pub code: Vec<u8>,
    /// What happened.
    pub outcome: Outcome,
}

impl Attempt {
    /// The attempt that ran `code` with `outcome`.
    pub fn new(code: Vec<u8>, outcome: Outcome) -> Attempt {
        Attempt { code, outcome }
    }
}

/// Every attempt of a repair loop, in order; the last one is the answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Repaired {
    /// The attempts, at least one.
    pub attempts: Vec<Attempt>,
}

impl Repaired {
    /// The outcome of the last attempt.
    pub fn outcome(&self) -> &Outcome {
        &self.attempts.last().expect("at least one attempt").outcome
    }

    /// Whether the last attempt succeeded.
    pub fn is_success(&self) -> bool {
        self.outcome().is_success()
    }
}

/// The loop behind [`Executor::run_with_repair`].
pub(super) fn run_with_repair(
    executor: &Executor,
    job: Job,
    max_attempts: usize,
    mut repair: impl FnMut(&Feedback<'_>) -> Option<String>,
) -> Result<Repaired> {
    let mut attempts = Vec::new();
    let mut next = job.clone();
    loop {
        let code = next.code.clone();
        let outcome = executor.run(next)?;
        attempts.push(Attempt { code, outcome });
        let last = attempts.last().expect("just pushed");
        if last.outcome.is_success() || attempts.len() >= max_attempts.max(1) {
            break;
        }
        let code_text = String::from_utf8_lossy(&last.code);
        let feedback = Feedback {
            task: job.task.as_deref(),
            attempt: attempts.len(),
            code: &code_text,
            outcome: &last.outcome,
            text: last.outcome.feedback().unwrap_or_default(),
        };
        match repair(&feedback) {
            Some(fixed) => next = job.clone().with_code(fixed.into_bytes()),
            None => break,
        }
    }
    Ok(Repaired { attempts })
}
