//! The static gate: a policy engine over the Python AST.
//!
//! [`check`] parses the source with rustpython-parser and walks the tree against a
//! [`Policy`]; it returns a [`Verdict`] listing *every* violation (rule, line, column,
//! offending text, hint), or [`BadInput`] for source that is not safe to parse at all.
//!
//! # Order of steps, and why
//!
//! 1. **Size, NUL, encoding** ([`check_bytes`]): cheap, and they bound everything after.
//! 2. **Pre-scan** (`prescan.rs`): bracket depth over the policy cap is refused without
//!    parsing (100,000 nested parentheses cost one pass over the bytes). The scan also
//!    bounds how deep the tree can be.
//! 3. **Parse, walk, drop**: the walk is iterative and *consumes* the tree, so checking
//!    and dropping never recurse. The parser itself can still drop a deep partial tree
//!    recursively when it fails on a syntax error, so when the pre-scan bound is large
//!    the whole step runs on a scoped thread with a [`BIG_STACK`] stack; small sources
//!    (the common case) run inline and pay no thread start.
//! 4. **Panics** are caught (`catch_unwind` inline, `join` on the thread) and become
//!    [`BadInput::Internal`]: the gate fails closed and never takes the host down.
//!
//! # Decisions (see `policy.rs` and the tables in `policy/` for every list and
//! the reason for each entry)
//!
//! - Identifiers are NFKC-normalised before any rule, as CPython does when it parses.
//! - Dunder *attributes* are always refused, except `super().__init__` and the other
//!   dunder methods a job may define; dunder *method definitions* are allowed in a class
//!   body from a reviewed list (`__init__`, `__repr__`, ...). Bare dunder names are refused
//!   except reading `__name__`.
//! - `_private` attributes are refused, except `self._x` inside a method of the job's own
//!   class when `self` is never rebound there, and names whose stripped form is banned
//!   (`self._os`) are refused even then.
//! - `io`, `signal`, `code` are refused as bare names only if the job never binds them
//!   (so `from scipy import signal` and `signal = np.sin(t)` pass).
//! - A UTF-8 BOM is accepted and stripped by [`check_bytes`] (CPython accepts it in
//!   bytes); in a `&str` given to [`check`] it is a syntax error, as CPython's
//!   `compile(str)` rejects it. Notebook lines (`%matplotlib inline`) become comments in
//!   [`check_bytes`] too (`notebook.rs`). Callers run the text returned by
//!   [`decode_source`].
//! - Columns are 1-based and counted in characters.

mod coding;
mod normalize;
mod notebook;
mod policy;
mod prescan;
mod strings;
mod syntax;
mod verdict;
mod walk;

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rustpython_parser::{ast, Parse};

pub use crate::gate::policy::{Policy, PolicyError, RuntimeRules};
pub use crate::gate::verdict::{BadInput, Rule, Verdict, Violation};

use crate::gate::verdict::quote;
use crate::gate::walk::{Raw, Walker};

/// Stack of the thread that parses, walks and drops large or deep sources. It is only
/// reserved address space: pages are touched as the parser's error path recurses.
/// With the 1 MiB hard cap on `max_source_bytes` (a tree level costs at least one source
/// byte) this covers the deepest tree any accepted source can produce.
pub const BIG_STACK: usize = 256 * 1024 * 1024;

/// Sources whose pre-scan depth bound is at most this run inline on the caller's thread:
/// at a measured ~100 bytes of stack per level of the parser's error-path drop (release
/// and debug alike; 10,000 levels fit in 1 MiB, 20,000 do not),
/// this keeps the inline path well under 1 MiB of the caller's stack.
pub const INLINE_DEPTH_BOUND: usize = 1500;

/// Checks `source` against `policy`.
///
/// `Ok` carries the verdict (a syntax error is a [`Rule::Syntax`] violation); `Err` means
/// the source was refused before parsing: too large, NUL, too deep, or a gate failure.
pub fn check(source: &str, policy: &Policy) -> Result<Verdict, BadInput> {
    if source.len() > policy.max_source_bytes() {
        return Err(BadInput::TooLarge {
            bytes: source.len(),
            limit: policy.max_source_bytes(),
        });
    }
    if let Some(offset) = source.bytes().position(|b| b == 0) {
        return Err(BadInput::NulByte { offset });
    }
    if let Some((line, declared)) = coding::foreign_declaration(source) {
        return Err(BadInput::ForeignEncoding {
            line,
            declared: declared.chars().take(40).collect(),
        });
    }
    if source.starts_with('\u{feff}') {
        return Ok(Verdict {
            violations: vec![Violation {
                rule: Rule::Syntax,
                line: 1,
                col: 1,
                text: "\\u{feff}".into(),
                message: "byte order mark at the start of a text source".into(),
                hint: "remove the BOM (or pass the bytes through check_bytes, which strips it)"
                    .into(),
            }],
        });
    }
    let scan = prescan::scan(source);
    if scan.bracket_depth > policy.max_bracket_depth()
        || scan.string_brace_depth > policy.max_bracket_depth()
    {
        return Err(BadInput::TooDeep {
            limit: policy.max_bracket_depth(),
        });
    }
    if scan.depth_bound <= INLINE_DEPTH_BOUND {
        match catch_unwind(AssertUnwindSafe(|| run(source, policy))) {
            Ok(r) => r,
            Err(_) => Err(BadInput::Internal {
                message: "gate panicked".into(),
            }),
        }
    } else {
        std::thread::scope(|s| {
            let h = std::thread::Builder::new()
                .name("pyward-gate".into())
                .stack_size(BIG_STACK)
                .spawn_scoped(s, || run(source, policy));
            match h {
                Ok(h) => h.join().unwrap_or_else(|_| {
                    Err(BadInput::Internal {
                        message: "gate panicked".into(),
                    })
                }),
                Err(_) => Err(BadInput::Internal {
                    message: "could not start the gate thread".into(),
                }),
            }
        })
    }
}

/// Decodes job source bytes the way the gate sees them: size cap, UTF-8, NUL, one
/// leading UTF-8 BOM stripped, and notebook lines (`%matplotlib inline`, `!pip install
/// x`) turned into comments of the same length (`notebook.rs`). Run exactly the text
/// this returns.
pub fn decode_source<'b>(source: &'b [u8], policy: &Policy) -> Result<Cow<'b, str>, BadInput> {
    if source.len() > policy.max_source_bytes() {
        return Err(BadInput::TooLarge {
            bytes: source.len(),
            limit: policy.max_source_bytes(),
        });
    }
    let body = source.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(source);
    let bom = source.len() - body.len();
    let text = std::str::from_utf8(body).map_err(|e| BadInput::NotUtf8 {
        offset: e.valid_up_to() + bom,
    })?;
    if let Some(i) = body.iter().position(|b| *b == 0) {
        return Err(BadInput::NulByte { offset: i + bom });
    }
    Ok(notebook::comment_out(text, INLINE_DEPTH_BOUND))
}

/// Checks source given as bytes: [`decode_source`], then [`check`].
pub fn check_bytes(source: &[u8], policy: &Policy) -> Result<Verdict, BadInput> {
    let text = decode_source(source, policy)?;
    check(&text, policy)
}

/// Parse, walk (consuming the tree) and turn offsets into positions.
fn run(source: &str, policy: &Policy) -> Result<Verdict, BadInput> {
    let body = match ast::Suite::parse(source, "<job>") {
        Ok(b) => b,
        Err(e) => {
            let problem =
                syntax::explain(source, u32::from(e.offset) as usize, &e.error.to_string());
            let (line, col) = LineIndex::new(source).position(problem.offset);
            return Ok(Verdict {
                violations: vec![Violation {
                    rule: Rule::Syntax,
                    line,
                    col,
                    text: quote(line_text(source, problem.offset)),
                    message: quote(&problem.message),
                    hint: "fix the syntax (python 3.11)".into(),
                }],
            });
        }
    };
    let res = Walker::new(policy, policy.gate_enabled()).run(body);
    if res.too_deep {
        return Err(BadInput::TooDeep {
            limit: policy.max_ast_depth(),
        });
    }
    let idx = LineIndex::new(source);
    let mut seen = std::collections::HashSet::new();
    let violations = res
        .violations
        .into_iter()
        .filter(|r| seen.insert((r.rule, r.start, r.end, r.message.clone())))
        .map(|r| to_violation(source, &idx, r))
        .collect();
    Ok(Verdict {
        violations: one_per_root_cause(violations),
    })
}

/// A refused import is one problem, not three: the banned-name report on the same
/// import and on every later use of the module's name follow from it.
fn one_per_root_cause(violations: Vec<Violation>) -> Vec<Violation> {
    let refused: Vec<(u32, u32, String)> = violations
        .iter()
        .filter(|v| v.rule == Rule::ImportNotAllowed)
        .map(|v| {
            let root = v.text.split(['.', ' ']).next().unwrap_or("").to_string();
            (v.line, v.col, root)
        })
        .collect();
    violations
        .into_iter()
        .filter(|v| {
            v.rule == Rule::ImportNotAllowed
                || !refused.iter().any(|(line, col, root)| {
                    (v.line, v.col) == (*line, *col)
                        || (v.rule == Rule::BannedName && &v.text == root)
                })
        })
        .collect()
}

fn to_violation(source: &str, idx: &LineIndex, r: Raw) -> Violation {
    let (line, col) = idx.position(r.start as usize);
    let start = (r.start as usize).min(source.len());
    let end = (r.end as usize).clamp(start, source.len());
    let text = source.get(start..end).unwrap_or("");
    Violation {
        rule: r.rule,
        line,
        col,
        text: quote(text),
        message: r.message,
        hint: r.hint,
    }
}

fn line_text(source: &str, off: usize) -> &str {
    let off = off.min(source.len());
    let start = source[..floor_char(source, off)]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let end = source[start..]
        .find('\n')
        .map_or(source.len(), |i| start + i);
    &source[start..end]
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Line starts, to turn byte offsets into 1-based line and character column.
struct LineIndex<'s> {
    src: &'s str,
    starts: Vec<usize>,
}

impl<'s> LineIndex<'s> {
    fn new(src: &'s str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            src.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { src, starts }
    }

    fn position(&self, off: usize) -> (u32, u32) {
        let off = floor_char(self.src, off.min(self.src.len()));
        let line = self.starts.partition_point(|s| *s <= off).max(1);
        let start = self.starts[line - 1];
        let col = self.src[start..off].chars().count() + 1;
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(col).unwrap_or(u32::MAX),
        )
    }
}

/// Whether `source` has the identifier `name` anywhere as a token (not in a string or
/// comment). Conservative: an attribute of that name counts too. Used to warm up only
/// what a one-off job needs (pandas only when it names `pd`); source that does not
/// lex counts as naming it.
pub fn mentions_name(source: &str, name: &str) -> bool {
    use rustpython_parser::{lexer, Mode, Tok};
    lexer::lex(source, Mode::Module).any(|t| match t {
        Ok((Tok::Name { name: n }, _)) => n == name,
        Ok(_) => false,
        Err(_) => true,
    })
}

#[cfg(test)]
mod mention_tests {
    use super::mentions_name;

    #[test]
    fn a_name_counts_as_a_token_not_inside_strings_or_comments() {
        assert!(mentions_name("df = pd.read_csv(x)", "pd"));
        assert!(mentions_name("import pandas as pd", "pd"));
        assert!(!mentions_name("s = 'pd'  # pd\nx = pdx + 1", "pd"));
        assert!(
            mentions_name("x = '''", "pd"),
            "unlexable source counts as naming it"
        );
    }
}
