//! The bounds every table read is held to (a table is a job's output or a caller's
//! input: hostile until read), and how long a quoted cell may be in a message.

use std::borrow::Cow;

/// Largest table file read, in bytes.
pub const MAX_TABLE_BYTES: u64 = 64 << 20;
/// Most bytes all the parts of a workbook may inflate to.
pub const MAX_INFLATED_BYTES: u64 = 256 << 20;
/// Most cells read from a table (all sheets of a workbook scanned, CSV fields).
pub const MAX_TABLE_CELLS: u64 = 2_000_000;
/// Most parts (zip entries) in a workbook.
pub const MAX_ZIP_ENTRIES: usize = 10_000;
/// How many cells a failure names before it says "and N more".
pub(crate) const NAMED: usize = 5;

/// `s` cut to `max` characters, ending in `…` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        Some((i, _)) => Cow::Owned(format!("{}…", &s[..i])),
        None => Cow::Borrowed(s),
    }
}
