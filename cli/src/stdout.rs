//! Lines to standard output that survive a reader that went away (`pyward run ... |
//! head -1`): `println!` panics on a closed pipe; these lines are dropped instead, and
//! the command still ends with the exit code of what it did.

use std::io::Write;

/// Writes one line to stdout; a failed write (a closed pipe) is not an error.
pub fn line(text: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(text).and_then(|()| out.write_all(b"\n"));
}

/// `println!` that never panics: see [`line`].
macro_rules! say {
    () => {
        $crate::stdout::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::stdout::line(format_args!($($arg)*))
    };
}
pub(crate) use say;
