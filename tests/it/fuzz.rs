//! Bounded property tests of the gate: arbitrary bytes and mutated Python never panic,
//! never hang, and always give a verdict or a bad-input reason. The gate turns its own
//! panics into `BadInput::Internal` (it fails closed), so "never panics" is asserted as
//! "never answers Internal".

use proptest::prelude::*;
use pyward::gate::{self, BadInput, Policy};

const SEEDS: &[&str] = &[
    include_str!("../data/realistic_200.py"),
    "import numpy as np\nx = np.arange(3)\nprint(f'{x[0]:.2f}', '{:>4}'.format(1))\n",
    "class A(B):\n    def __init__(self, x=1, *a, **k):\n        super().__init__()\n        self._x = [i for i in a if i]\n",
    "try:\n    pass\nexcept* E:\n    pass\nmatch x:\n    case {'a': [1, *r]} | C(k=v):\n        pass\n",
    "async def f():\n    async with a as b:\n        await c\nlambda: (yield)\n",
    "x = f'{a!r:{w}.{p}}' b'\\x00' r'\\n' '''\n'''\n",
];

const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    ".",
    "+",
    "-",
    "*",
    "**",
    "=",
    ":=",
    "'",
    "\"",
    "'''",
    "f'",
    "{x.y}",
    "\n",
    "    ",
    "\t",
    "\\\n",
    "#",
    "\n%matplotlib inline\n",
    "\n!pip install x\n",
    "%",
    "!",
    "lambda",
    "if",
    "elif",
    "else",
    "def",
    "class",
    "import",
    "from",
    "as",
    "__class__",
    "ｅｖａｌ",
    "\u{feff}",
    "\u{202e}",
    "@",
    "yield",
    "await",
    "async",
    "not",
    "try",
    "except*",
    "match",
    "case",
    "0x",
    "1e",
    "é",
    "\r",
    "\0",
];

/// Fails the case when the gate's answer is its own failure (a panic it caught).
fn no_internal_failure<T>(answer: &Result<T, BadInput>) -> Result<(), TestCaseError> {
    if let Err(e @ BadInput::Internal { .. }) = answer {
        return Err(TestCaseError::fail(format!(
            "the gate failed internally: {e:?}"
        )));
    }
    Ok(())
}

fn mutate(seed: &str, edits: &[(usize, usize, usize)]) -> String {
    let mut s: Vec<char> = seed.chars().collect();
    for &(pos, tok, cut) in edits {
        if s.is_empty() {
            s.extend(TOKENS[tok % TOKENS.len()].chars());
            continue;
        }
        let p = pos % (s.len() + 1);
        match cut % 3 {
            0 => {
                let t: Vec<char> = TOKENS[tok % TOKENS.len()].chars().collect();
                s.splice(p..p, t);
            }
            1 => {
                let end = (p + cut % 7).min(s.len());
                s.drain(p..end);
            }
            _ => {
                let t: Vec<char> = TOKENS[tok % TOKENS.len()]
                    .repeat(1 + cut % 50)
                    .chars()
                    .collect();
                s.splice(p..p, t);
            }
        }
    }
    s.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        no_internal_failure(&gate::check_bytes(&bytes, &Policy::figures()))?;
    }

    #[test]
    fn arbitrary_strings_never_panic(s in "\\PC{0,400}") {
        no_internal_failure(&gate::check(&s, &Policy::figures()))?;
        no_internal_failure(&gate::check(&s, &Policy::gate_disabled_for_testing()))?;
    }

    #[test]
    fn mutated_python_never_panics(
        seed in 0usize..SEEDS.len(),
        edits in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<usize>()), 1..12)
    ) {
        let src = mutate(SEEDS[seed], &edits);
        let p = Policy::figures();
        let answer = gate::check(&src, &p);
        no_internal_failure(&answer)?;
        match answer {
            Ok(v) => {
                for x in &v.violations {
                    prop_assert!(x.line >= 1 && x.col >= 1);
                    prop_assert!(x.text.chars().count() <= 81);
                }
                let _ = v.teaching_text(&p);
            }
            Err(e) => { let _ = e.teaching_text(); }
        }
    }

    /// Notebook lines: the text the gate checks and the worker runs differs from the
    /// source (after its byte-order mark, which decoding drops) only where a `%` or `!`
    /// became `#`, at the same length.
    #[test]
    fn the_notebook_rewrite_changes_only_magic_characters(
        seed in 0usize..SEEDS.len(),
        edits in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<usize>()), 1..12)
    ) {
        let src = mutate(SEEDS[seed], &edits);
        let p = Policy::figures();
        no_internal_failure(&gate::check_bytes(src.as_bytes(), &p))?;
        if let Ok(text) = gate::decode_source(src.as_bytes(), &p) {
            let body = src.strip_prefix('\u{feff}').unwrap_or(&src);
            prop_assert_eq!(text.len(), body.len());
            for (a, b) in body.bytes().zip(text.bytes()) {
                prop_assert!(a == b || (matches!(a, b'%' | b'!') && b == b'#'), "{a} -> {b}");
            }
        }
    }
}
