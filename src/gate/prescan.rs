//! A cheap byte scan before parsing: bracket depth, brace depth inside strings, and an
//! upper bound on how deep the syntax tree can be.
//!
//! Why: the parser and the tree's destructor recurse per nesting level, and a stack
//! overflow aborts the *host* process (it is not a panic). 100,000 nested parentheses are
//! refused here without parsing. For flat-but-deep source (`a+a+a…`, `x.y.y…`, long
//! `elif` ladders) the scan gives a bound that decides whether the check runs inline or
//! on a thread with a large, known stack (see `mod.rs`).

/// What the scan found.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Scan {
    /// Deepest `(`/`[`/`{` nesting outside strings and comments.
    pub bracket_depth: usize,
    /// Deepest `{` nesting inside any string literal (f-string fields recurse in the
    /// parser).
    pub string_brace_depth: usize,
    /// An upper bound on syntax-tree depth: every tree level consumes at least one byte
    /// of its logical line, and statement nesting (blocks, `elif`) needs a line per level.
    pub depth_bound: usize,
}

/// Scans `src`. Never fails; limits are applied by the caller.
pub(crate) fn scan(src: &str) -> Scan {
    let b = src.as_bytes();
    let mut s = Scan::default();
    let mut depth: usize = 0;
    let mut line_start = 0usize;
    let mut max_line = 0usize;
    let mut lines = 1usize;
    let mut i = 0usize;
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\'' | b'"' => {
                let triple = i + 2 < b.len() && b[i + 1] == c && b[i + 2] == c;
                let qlen = if triple { 3 } else { 1 };
                i += qlen;
                let mut brace = 0usize;
                while i < b.len() {
                    let d = b[i];
                    if d == b'\\' {
                        i += 2;
                        continue;
                    }
                    if d == b'\n' {
                        lines += 1;
                        if !triple {
                            break;
                        }
                    }
                    if d == b'{' {
                        brace += 1;
                        s.string_brace_depth = s.string_brace_depth.max(brace);
                    } else if d == b'}' {
                        brace = brace.saturating_sub(1);
                    }
                    if d == c && (!triple || (i + 2 < b.len() && b[i + 1] == c && b[i + 2] == c)) {
                        i += qlen;
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                s.bracket_depth = s.bracket_depth.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            // line continuation: the logical line goes on
            b'\\' if b.get(i + 1) == Some(&b'\n') => {
                lines += 1;
                i += 2;
                continue;
            }
            b'\n' => {
                lines += 1;
                if depth == 0 {
                    max_line = max_line.max(i - line_start);
                    line_start = i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    max_line = max_line.max(b.len().saturating_sub(line_start));
    s.depth_bound = max_line + lines + s.string_brace_depth;
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_and_strings() {
        let s = scan("x = ((1))\ny = '((((('\n# (((((\n");
        assert_eq!(s.bracket_depth, 2);
        let s = scan("f'{a:{b}}'");
        assert_eq!(s.string_brace_depth, 2);
        assert_eq!(scan(&"(".repeat(1000)).bracket_depth, 1000);
    }
}
