//! Checks on the contents of string constants: format fields, pandas query strings,
//! style names and dunder spellings.

/// True for `__x__` (at least one character between the double underscores).
pub(crate) fn is_dunder(s: &str) -> bool {
    s.len() > 4 && s.starts_with("__") && s.ends_with("__")
}

/// True when the text contains a dunder-looking word (`__class__`, `__globals__`).
/// `"__main__"` alone is exempt (the `if __name__ == "__main__":` idiom).
pub(crate) fn contains_dunder(s: &str) -> bool {
    if s == "__main__" {
        return false;
    }
    let b = s.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'_' && b[i + 1] == b'_' {
            // scan a word body after "__"
            let mut j = i + 2;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            let word = &b[i..j];
            if word.len() > 4
                && word.ends_with(b"__")
                && word[2..word.len() - 2]
                    .iter()
                    .any(|c| c.is_ascii_alphanumeric())
            {
                return true;
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    false
}

/// True when a `str.format` string has a replacement field whose name traverses
/// attributes or indexes (`{0.x}`, `{a[k]}`, `{.x}`). Nested fields inside format
/// specs (`{x:{w.y}}`) are checked too, since scanning continues inside the spec.
pub(crate) fn format_traverses(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                if b.get(i + 1) == Some(&b'{') {
                    i += 2;
                    continue;
                }
                let mut j = i + 1;
                while j < b.len() && !matches!(b[j], b'}' | b'!' | b':' | b'{') {
                    if b[j] == b'.' || b[j] == b'[' {
                        return true;
                    }
                    j += 1;
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    false
}

/// Checks a pandas `query`/`eval` expression string. Allowed: column arithmetic and
/// comparisons, and `@name` references to the job's own variables. Refused: attribute
/// access (`.` followed by a letter), indexing, dunders, lambdas, and `@name(...)` calls.
/// Returns the `@` names (for the caller to check against banned names), or `None`
/// when the string is refused.
pub(crate) fn query_refs(s: &str) -> Option<Vec<&str>> {
    if s.len() > 2000 || s.contains("__") || s.contains('[') || s.contains("lambda") {
        return None;
    }
    let b = s.as_bytes();
    let mut refs = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'.' => {
                if let Some(n) = b.get(i + 1) {
                    if n.is_ascii_alphabetic() || *n == b'_' || *n >= 0x80 {
                        return None;
                    }
                }
            }
            b'@' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                if j == start || b.get(j).is_some_and(|c| *c >= 0x80) {
                    return None;
                }
                let mut k = j;
                while k < b.len() && b[k] == b' ' {
                    k += 1;
                }
                if b.get(k) == Some(&b'(') {
                    return None;
                }
                refs.push(&s[start..j]);
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Some(refs)
}

/// True for a bare matplotlib style name (`ggplot`, `seaborn-v0_8-darkgrid`): a name
/// from the style library, never a path or URL.
pub(crate) fn style_name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_fields() {
        assert!(!format_traverses("{:.2f} {} {0} {name:>10} {{0.x}}"));
        assert!(format_traverses("{0.__class__}"));
        assert!(format_traverses("{a[k]}"));
        assert!(format_traverses("{x:{y.z}}"));
    }

    #[test]
    fn dunders() {
        assert!(contains_dunder("a __class__ b"));
        assert!(!contains_dunder("__main__"));
        assert!(!contains_dunder("a__b"));
        assert!(!contains_dunder("____"));
    }

    #[test]
    fn queries() {
        assert_eq!(query_refs("a > 1.5 and b == 'x'"), Some(vec![]));
        assert_eq!(query_refs("a > @limit"), Some(vec!["limit"]));
        assert_eq!(query_refs("@pd.io"), None);
        assert_eq!(query_refs("@f (1)"), None);
        assert_eq!(query_refs("a.str.contains('x')"), None);
    }
}
