//! NFKC normalisation of identifiers.
//!
//! CPython normalises every identifier to NFKC while parsing (PEP 3131), so `ｅｖａｌ`
//! (fullwidth) *is* `eval` and `_＿class_＿` is `__class__`. rustpython-parser keeps the
//! raw spelling, so the gate normalises every identifier and attribute name itself
//! before any rule compares it.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

/// NFKC form of an identifier. ASCII is returned as is: NFKC leaves it unchanged, and
/// CPython also skips normalisation for pure-ASCII names.
pub(crate) fn ident(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.nfkc().collect())
    }
}

/// NFKC form of any text (used on string constants that may name attributes: runtime
/// `getattr` does not normalise, but a dunder spelled with compatibility characters in
/// a string is refused all the same, as a sign of evasion).
pub(crate) fn text(s: &str) -> Cow<'_, str> {
    ident(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fullwidth_folds() {
        assert_eq!(ident("ｅｖａｌ"), "eval");
        assert_eq!(ident("_\u{FF3F}class_\u{FF3F}"), "__class__");
        assert_eq!(ident("plain"), "plain");
    }
}
