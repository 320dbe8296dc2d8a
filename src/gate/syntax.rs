//! CPython's wording for the syntax errors models make most, at the line CPython names.
//!
//! The gate parses with rustpython's parser, whose errors differ from CPython 3.11's: an
//! unclosed bracket is reported where the parser gave up ("unexpected token 'plt'" one
//! line later), a missing colon as an unexpected newline. A model fixes faster from the
//! message it was trained on, so before falling back to the parser's message this module
//! looks for the usual causes itself, in source order: an unterminated string, a closing
//! bracket that does not match, a bracket never closed, a block header without its
//! colon or its indented body, a stray indent, a Python 2 `print`.

/// A syntax error as CPython would word it: byte offset and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxProblem {
    /// Byte offset of the position CPython reports.
    pub offset: usize,
    /// CPython's message.
    pub message: String,
}

/// The CPython-worded error for `source`, given where the parser failed (`parser_at`,
/// a byte offset) and its message.
pub(crate) fn explain(source: &str, parser_at: usize, parser_message: &str) -> SyntaxProblem {
    let scan = Scan::new(source);
    let parser_line = line_of(source, parser_at);
    let lexical = scan.lexical_error(source);
    if let Some(p) = lexical
        .clone()
        .filter(|p| line_of(source, p.offset) <= parser_line)
    {
        return p;
    }
    // CPython: a parse error after the line of a bracket still open there is reported
    // as that bracket never being closed.
    if let Some(&(open, c)) = scan.open_at(parser_at).last() {
        if line_of(source, open) < parser_line {
            return SyntaxProblem {
                offset: open,
                message: format!("'{}' was never closed", c as char),
            };
        }
    }
    if let Some(p) = scan
        .line_errors()
        .into_iter()
        .find(|p| line_of(source, p.offset) <= parser_line)
    {
        return p;
    }
    if let Some(p) = lexical {
        return p;
    }
    let message = match parser_message.split_once("Got unexpected token ") {
        Some((_, token)) if token.trim() != "Newline" => {
            format!("invalid syntax (unexpected {})", token.trim())
        }
        _ => "invalid syntax".to_string(),
    };
    SyntaxProblem {
        offset: parser_at,
        message,
    }
}

fn line_of(source: &str, offset: usize) -> usize {
    source.as_bytes()[..offset.min(source.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// The source with strings blanked and comments dropped, and its brackets.
struct Scan {
    /// ASCII, as long as the source: string contents and comments are spaces.
    masked: String,
    /// Bracket depth before each byte offset (and at the end).
    depth: Vec<u32>,
    /// Every bracket event: (offset, byte), in order.
    brackets: Vec<(usize, u8)>,
    /// An unterminated string: (offset of its quote, triple-quoted).
    unterminated: Option<(usize, bool)>,
}

impl Scan {
    fn new(source: &str) -> Scan {
        let b = source.as_bytes();
        let mut masked = b.to_vec();
        let mut brackets = Vec::new();
        let mut unterminated = None;
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'#' => {
                    while i < b.len() && b[i] != b'\n' {
                        masked[i] = b' ';
                        i += 1;
                    }
                    continue;
                }
                q @ (b'\'' | b'"') => {
                    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
                    let start = i;
                    i += if triple { 3 } else { 1 };
                    let mut closed = false;
                    while i < b.len() {
                        if b[i] == b'\\' {
                            masked[i] = b' ';
                            if b.get(i + 1).is_some_and(|&c| c != b'\n') {
                                masked[i + 1] = b' ';
                            }
                            i += 2;
                            continue;
                        }
                        if b[i] == b'\n' && !triple {
                            break;
                        }
                        if b[i] == q
                            && (!triple || (b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q)))
                        {
                            i += if triple { 3 } else { 1 };
                            closed = true;
                            break;
                        }
                        if b[i] != b'\n' {
                            masked[i] = b' ';
                        }
                        i += 1;
                    }
                    if !closed {
                        unterminated.get_or_insert((start, triple));
                        if triple {
                            break;
                        }
                    }
                    continue;
                }
                c @ (b'(' | b'[' | b'{' | b')' | b']' | b'}') => brackets.push((i, c)),
                _ => {}
            }
            i += 1;
        }
        // Non-ASCII bytes left (identifiers) become one ASCII letter each: the masked
        // text is ASCII, byte for byte as long as the source.
        for m in &mut masked {
            if !m.is_ascii() {
                *m = b'x';
            }
        }
        let mut depth = Vec::with_capacity(b.len() + 1);
        let mut events = brackets.iter().peekable();
        let mut level = 0u32;
        for i in 0..=b.len() {
            while let Some(&&(at, c)) = events.peek() {
                if at >= i {
                    break;
                }
                level = if matches!(c, b'(' | b'[' | b'{') {
                    level + 1
                } else {
                    level.saturating_sub(1)
                };
                events.next();
            }
            depth.push(level);
        }
        Scan {
            masked: String::from_utf8(masked).unwrap_or_default(),
            depth,
            brackets,
            unterminated,
        }
    }

    /// Whether a bracket is open just before `offset`.
    fn in_brackets(&self, offset: usize) -> bool {
        self.depth.get(offset).is_some_and(|&d| d > 0)
    }

    /// Brackets still open just before `offset`: (offset, byte), outermost first.
    fn open_at(&self, offset: usize) -> Vec<(usize, u8)> {
        let mut stack: Vec<(usize, u8)> = Vec::new();
        for &(at, c) in self.brackets.iter().take_while(|(at, _)| *at < offset) {
            match c {
                b'(' | b'[' | b'{' => stack.push((at, c)),
                _ => {
                    stack.pop();
                }
            }
        }
        stack
    }

    /// The first tokenizer-level error: an unterminated string, a closing bracket that
    /// matches no opening one, or a bracket open at the end.
    fn lexical_error(&self, source: &str) -> Option<SyntaxProblem> {
        let mut stack: Vec<(usize, u8)> = Vec::new();
        let mut found = None;
        for &(at, c) in &self.brackets {
            let want = match c {
                b')' => b'(',
                b']' => b'[',
                b'}' => b'{',
                _ => {
                    stack.push((at, c));
                    continue;
                }
            };
            match stack.pop() {
                Some((_, open)) if open == want => {}
                Some((open_at, open)) => {
                    let same_line = line_of(source, open_at) == line_of(source, at);
                    let place = if same_line {
                        String::new()
                    } else {
                        format!(" on line {}", line_of(source, open_at) + 1)
                    };
                    found = Some(SyntaxProblem {
                        offset: at,
                        message: format!(
                            "closing parenthesis '{}' does not match opening parenthesis '{}'{place}",
                            c as char, open as char
                        ),
                    });
                    break;
                }
                None => {
                    found = Some(SyntaxProblem {
                        offset: at,
                        message: format!("unmatched '{}'", c as char),
                    });
                    break;
                }
            }
        }
        if let Some((at, triple)) = self.unterminated {
            if found.as_ref().is_none_or(|f| at < f.offset) {
                let detected = if triple {
                    line_of(source, source.len()) + 1
                } else {
                    line_of(source, at) + 1
                };
                let what = if triple {
                    "unterminated triple-quoted string literal"
                } else {
                    "unterminated string literal"
                };
                return Some(SyntaxProblem {
                    offset: at,
                    message: format!("{what} (detected at line {detected})"),
                });
            }
        }
        if found.is_none() {
            if let Some(&(at, c)) = stack.last() {
                found = Some(SyntaxProblem {
                    offset: at,
                    message: format!("'{}' was never closed", c as char),
                });
            }
        }
        found
    }

    /// Errors of whole logical lines, in order: a block header without its colon or its
    /// indented body, an unexpected indent, a Python 2 `print` statement.
    fn line_errors(&self) -> Vec<SyntaxProblem> {
        let masked = &self.masked;
        let mut found = Vec::new();
        let mut offset = 0usize;
        // (indent, header keyword, line number) of the previous logical line.
        let mut previous: Option<(usize, Option<&'static str>, usize)> = None;
        let mut indents = vec![0usize];
        for (n, line) in masked.split('\n').enumerate() {
            let start = offset;
            offset += line.len() + 1;
            let text = line.trim_end();
            let body = text.trim_start();
            if body.is_empty() || self.in_brackets(start) {
                continue; // blank, or a continuation inside brackets
            }
            let indent = text.len() - body.len();
            let keyword = block_keyword(body);
            if let Some((before, header, header_line)) = previous {
                match header {
                    Some(kw) if indent <= before => found.push(SyntaxProblem {
                        offset: start + indent,
                        message: format!(
                            "expected an indented block after {} on line {}",
                            describe_block(kw),
                            header_line + 1
                        ),
                    }),
                    None if indent > before => found.push(SyntaxProblem {
                        offset: start + indent,
                        message: "unexpected indent".into(),
                    }),
                    _ => {}
                }
            }
            if indent < *indents.last().unwrap_or(&0) {
                while indents.last().is_some_and(|&i| i > indent) {
                    indents.pop();
                }
                if indents.last() != Some(&indent) {
                    found.push(SyntaxProblem {
                        offset: start + indent,
                        message: "unindent does not match any outer indentation level".into(),
                    });
                    indents.push(indent);
                }
            } else if indent > *indents.last().unwrap_or(&0) {
                indents.push(indent);
            }
            // The logical line ends where its brackets close.
            let end = logical_end(masked, start, self);
            let logical = masked[start..end].trim_end();
            let opens_block = keyword.is_some() && logical.ends_with(':');
            if let Some(kw) = keyword {
                if !logical.ends_with(':') && !has_top_level_colon(logical, start, self) {
                    found.push(SyntaxProblem {
                        offset: start + logical.len(),
                        message: "expected ':'".into(),
                    });
                } else if matches!(kw, "if" | "elif" | "while") {
                    let condition = logical
                        .char_indices()
                        .find(|&(i, c)| c == ':' && !self.in_brackets(start + i))
                        .map_or(logical, |(i, _)| &logical[..i]);
                    if let Some(eq) = single_equals(condition) {
                        found.push(SyntaxProblem {
                            offset: start + eq,
                            message: "invalid syntax. Maybe you meant '==' or ':=' instead of '='?"
                                .into(),
                        });
                    }
                }
            }
            if is_print_statement(body) {
                found.push(SyntaxProblem {
                    offset: start + indent,
                    message: "Missing parentheses in call to 'print'. Did you mean print(...)?"
                        .into(),
                });
            }
            previous = Some((indent, opens_block.then_some(keyword).flatten(), n));
        }
        found.sort_by_key(|p| p.offset);
        found
    }
}

/// Where the logical line starting at `start` ends (its brackets closed, or the end).
fn logical_end(masked: &str, start: usize, scan: &Scan) -> usize {
    let mut at = start;
    loop {
        let end = masked[at..].find('\n').map_or(masked.len(), |i| at + i);
        if end >= masked.len() || !scan.in_brackets(end) {
            return end;
        }
        at = end + 1;
    }
}

/// A `:` outside brackets (a one-line block `if x: y`, a lambda in a header).
fn has_top_level_colon(logical: &str, start: usize, scan: &Scan) -> bool {
    logical
        .char_indices()
        .any(|(i, c)| c == ':' && !scan.in_brackets(start + i))
}

const BLOCK_KEYWORDS: &[&str] = &[
    "for", "while", "if", "elif", "else", "try", "except", "finally", "with", "def", "class",
];

fn block_keyword(body: &str) -> Option<&'static str> {
    BLOCK_KEYWORDS.iter().copied().find(|kw| {
        body.strip_prefix(kw)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ':', '(', '\t']))
    })
}

fn describe_block(keyword: &str) -> String {
    match keyword {
        "def" => "function definition".into(),
        "class" => "class definition".into(),
        kw => format!("'{kw}' statement"),
    }
}

/// The offset of a lone `=` in a condition (`if x = 3:`).
fn single_equals(logical: &str) -> Option<usize> {
    let b = logical.as_bytes();
    (0..b.len()).find(|&i| {
        b[i] == b'='
            && b.get(i + 1) != Some(&b'=')
            && (i == 0 || !b"=<>!:+-*/%&|^@".contains(&b[i - 1]))
    })
}

/// `print x`, `print 'done'` (but not `print(...)`, `print = f`, `print.x`).
fn is_print_statement(body: &str) -> bool {
    let Some(rest) = body.strip_prefix("print") else {
        return false;
    };
    let Some(after) = rest.strip_prefix(' ') else {
        return false;
    };
    let after = after.trim_start();
    !after.is_empty()
        && !after.starts_with(['(', '=', '.', '[', ',', ')'])
        && !after.starts_with("is ")
        && !after.starts_with("in ")
        && !after.starts_with("if ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(source: &str, parser_at: usize) -> (usize, String) {
        let p = explain(
            source,
            parser_at,
            "invalid syntax. Got unexpected token 'x'",
        );
        (line_of(source, p.offset) + 1, p.message)
    }

    #[test]
    fn an_unclosed_bracket_is_reported_where_it_opened() {
        let src = "x = 1\nplt.plot(x, f(x)\nplt.savefig(OUT)\n";
        let parser_at = src.find("plt.savefig").unwrap();
        assert_eq!(at(src, parser_at), (2, "'(' was never closed".into()));
    }

    #[test]
    fn mismatched_and_unmatched_brackets() {
        let src = "plt.plot([1, 4, 9)\n";
        assert_eq!(
            at(src, 17),
            (
                1,
                "closing parenthesis ')' does not match opening parenthesis '['".into()
            )
        );
        assert_eq!(at("x = 1)\n", 5), (1, "unmatched ')'".into()));
    }

    #[test]
    fn strings_and_comments_hide_their_brackets() {
        let src = "s = '(' # )\nplt.title('Revenue)\nplt.show()\n";
        let (line, message) = at(src, src.len() - 1);
        assert_eq!(line, 2);
        assert_eq!(message, "unterminated string literal (detected at line 2)");
    }

    #[test]
    fn block_headers_need_a_colon_and_a_body() {
        let src = "for i in range(3)\n    plt.plot(i)\n";
        assert_eq!(at(src, 17), (1, "expected ':'".into()));
        let src = "for i in range(3):\nplt.plot(i)\n";
        assert_eq!(
            at(src, 19),
            (
                2,
                "expected an indented block after 'for' statement on line 1".into()
            )
        );
        let src = "x = 1\n    y = 2\n";
        assert_eq!(at(src, 10), (2, "unexpected indent".into()));
        let src = "if x: y = 1\nz = (1,\n  2)\n";
        assert_eq!(at(src, 0).1, "invalid syntax (unexpected 'x')");
    }

    #[test]
    fn python_2_print_and_assignment_in_a_condition() {
        let src = "x = 1\nprint 'done'\n";
        assert_eq!(
            at(src, 12),
            (
                2,
                "Missing parentheses in call to 'print'. Did you mean print(...)?".into()
            )
        );
        let src = "if x = 3:\n    pass\n";
        assert_eq!(
            at(src, 5).1,
            "invalid syntax. Maybe you meant '==' or ':=' instead of '='?"
        );
    }
}
