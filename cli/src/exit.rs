//! The exit codes of `pyward`, and the one a report stands for.

use pyward::report::{Report, STATUS_INFRASTRUCTURE_ERROR, STATUS_INPUT_ERROR};

/// Exit code of a job failure (rejected, timed out, raised, ...).
pub const EXIT_JOB_FAILED: u8 = 1;
/// Exit code of a usage error (clap uses it too).
pub const EXIT_USAGE: u8 = 2;
/// Exit code of an infrastructure error (the executor could not do its work).
pub const EXIT_INFRA: u8 = 3;

/// The exit code a report stands for.
pub fn exit_code(report: &Report) -> u8 {
    match report.status.as_str() {
        "ok" => 0,
        STATUS_INPUT_ERROR => EXIT_USAGE,
        STATUS_INFRASTRUCTURE_ERROR => EXIT_INFRA,
        _ => EXIT_JOB_FAILED,
    }
}
