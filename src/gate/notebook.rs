//! Notebook lines in a script: IPython's line magics and shell escapes (`%matplotlib
//! inline`, `!pip install seaborn`, `%%time`) that models copy from notebooks. They are
//! not Python and have nothing to do here (pyward chooses the backend, the packages are
//! installed), so each becomes a comment: its `%` or `!` is replaced by `#`, which keeps
//! the length, so every line and column the gate and the traceback report is the one the
//! model wrote. A line is rewritten only where the parser fails on exactly its first
//! character: a `%` or `!` that Python accepts there (an operator continuing a bracketed
//! expression, `!=`) is never touched, and the gate then checks the rewritten text like
//! any other.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rustpython_parser::{ast, Parse};

use crate::gate::prescan;

/// At most this many notebook lines are turned into comments (one parse each).
const MAX_NOTEBOOK_LINES: usize = 64;

/// `text` with its notebook lines commented out, or `text` itself when it has none.
/// The parses run on the caller's stack: a source whose tree may be deeper than
/// `inline_depth` is left as it is to the gate, which reports its syntax error from a
/// thread of its own.
pub(crate) fn comment_out(text: &str, inline_depth: usize) -> Cow<'_, str> {
    if !text.lines().any(|l| notebook_start(l).is_some())
        || prescan::scan(text).depth_bound > inline_depth
    {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_owned();
    for _ in 0..MAX_NOTEBOOK_LINES {
        let offset = match catch_unwind(AssertUnwindSafe(|| ast::Suite::parse(&out, "<job>").err()))
        {
            Ok(Some(e)) => u32::from(e.offset) as usize,
            _ => break,
        };
        let Some(at) = magic_at(&out, offset) else {
            break;
        };
        out.replace_range(at..at + 1, "#");
    }
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

/// The byte offset of a line's `%` or `!`, when its first non-blank character is one.
fn notebook_start(line: &str) -> Option<usize> {
    let blank = line.len() - line.trim_start_matches([' ', '\t']).len();
    matches!(line.as_bytes().get(blank), Some(b'%' | b'!')).then_some(blank)
}

/// The offset of the notebook character the parse error at `offset` is on: the error's
/// line starts with `%` or `!` and the error points at that character.
fn magic_at(text: &str, offset: usize) -> Option<usize> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let at = start + notebook_start(&text[start..end])?;
    (offset == at).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::comment_out;

    #[test]
    fn magics_and_shell_escapes_become_comments_of_the_same_length() {
        let src = "%matplotlib inline\n!pip install seaborn\nimport numpy as np\nfor i in range(2):\n    %time x = i\n%%capture\nprint(1)\n";
        assert_eq!(
            comment_out(src, 1500),
            "#matplotlib inline\n#pip install seaborn\nimport numpy as np\nfor i in range(2):\n    #time x = i\n#%capture\nprint(1)\n"
        );
    }

    #[test]
    fn python_that_starts_a_line_with_percent_or_bang_is_untouched() {
        for src in [
            "x = (10\n     % 3)\n",
            "ok = (1\n      != 2)\n",
            "s = '''\n%matplotlib inline\n'''\n",
            "x = 1\n",
        ] {
            assert!(
                matches!(comment_out(src, 1500), std::borrow::Cow::Borrowed(_)),
                "{src}"
            );
        }
        // A syntax error elsewhere is left for the gate to report.
        assert_eq!(
            comment_out("%matplotlib inline\nx = (\n", 1500),
            "#matplotlib inline\nx = (\n"
        );
    }
}
