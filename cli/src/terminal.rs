//! Lines to the terminal: shown, never obeyed, and surviving a reader that went away.
//!
//! What `pyward` prints holds text a job chose: its stdout and stderr, a figure's
//! title, a table's cells, an exception's message, a quoted line of model-written code.
//! Such text may carry escape sequences that a terminal would act on (move the cursor,
//! retitle the window, write the clipboard with OSC 52, rewrite the lines above with
//! `\r`) or bidirectional overrides that reorder what is read. Every line goes through
//! [`printable`] at this one sink. A closed pipe (`pyward run ... | head -1`) drops the
//! line instead of panicking as `println!` does; the command still ends with the exit
//! code of what it did.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;

/// Writes one line to stdout; a failed write (a closed pipe) is not an error.
pub fn line(text: std::fmt::Arguments<'_>) {
    write_line(&mut std::io::stdout().lock(), text);
}

/// Writes one line to stderr, as [`line`] does to stdout.
pub fn error_line(text: std::fmt::Arguments<'_>) {
    write_line(&mut std::io::stderr().lock(), text);
}

fn write_line(to: &mut impl Write, text: std::fmt::Arguments<'_>) {
    let text = text.to_string();
    let _ = to
        .write_all(printable(&text).as_bytes())
        .and_then(|()| to.write_all(b"\n"));
}

/// `text` with every character a terminal would obey rather than show written as an
/// escape (`\x1b`, `\r`, `\u{202e}`): the C0 controls but newline and tab, DEL, the C1
/// controls, and the bidirectional embeddings, overrides and isolates.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(obeyed) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => shown.push_str("\\r"),
            c if obeyed(c) && (c as u32) < 0x100 => {
                let _ = write!(shown, "\\x{:02x}", c as u32);
            }
            c if obeyed(c) => {
                let _ = write!(shown, "\\u{{{:x}}}", c as u32);
            }
            c => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

/// Whether a terminal acts on `c` instead of showing it.
fn obeyed(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        // LRE, RLE, PDF, LRO, RLO; LRI, RLI, FSI, PDI.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `println!` that shows what it prints and never panics: see [`line`].
macro_rules! say {
    () => {
        $crate::terminal::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::terminal::line(format_args!($($arg)*))
    };
}
pub(crate) use say;

/// `eprintln!` that shows what it prints: see [`error_line`].
macro_rules! tell {
    ($($arg:tt)*) => {
        $crate::terminal::error_line(format_args!($($arg)*))
    };
}
pub(crate) use tell;

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn escapes_are_shown_and_text_is_kept() {
        let plain = "total 3\tdone\n部门 营收 ✓";
        assert!(matches!(printable(plain), std::borrow::Cow::Borrowed(_)));
        assert_eq!(printable(plain), plain);
        // Clear the screen, write the clipboard (OSC 52), retitle, overwrite a line.
        let hostile = "\x1b[2J\x1b]52;c;ZWNobyBoaQ==\x07\x1b]0;title\x07ok\rFAKE";
        assert_eq!(
            printable(hostile),
            "\\x1b[2J\\x1b]52;c;ZWNobyBoaQ==\\x07\\x1b]0;title\\x07ok\\rFAKE"
        );
        // DEL, a C1 CSI, a NUL; a right-to-left override and isolate.
        assert_eq!(
            printable("a\u{7f}b\u{9b}c\0d\u{202e}e\u{2067}f"),
            "a\\x7fb\\x9bc\\x00d\\u{202e}e\\u{2067}f"
        );
    }
}
