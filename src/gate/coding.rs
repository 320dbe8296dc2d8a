//! PEP 263 coding declarations. The gate reads source as UTF-8; a declaration of another
//! codec would make a person, an editor or `python file.py` read the same bytes as
//! different text than the gate and the worker check and run. Such sources are refused.

/// The first coding declaration that names a codec other than UTF-8, as (line, the name
/// as written), following CPython's rule: line 1, or line 2 when line 1 holds only
/// blanks or a comment.
pub(crate) fn foreign_declaration(source: &str) -> Option<(u32, &str)> {
    let mut lines = source.split('\n');
    let first = lines.next().unwrap_or("");
    if let Some(name) = declared(first) {
        return (!is_utf8(name)).then_some((1, name));
    }
    let first = first.trim_matches([' ', '\t', '\x0c', '\r']);
    if !(first.is_empty() || first.starts_with('#')) {
        return None;
    }
    let name = declared(lines.next()?)?;
    (!is_utf8(name)).then_some((2, name))
}

/// The codec a line declares: `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`.
fn declared(line: &str) -> Option<&str> {
    let comment = line
        .trim_start_matches([' ', '\t', '\x0c'])
        .strip_prefix('#')?;
    let mut rest = comment;
    while let Some(at) = rest.find("coding") {
        let after = &rest[at + "coding".len()..];
        if let Some(value) = after.strip_prefix([':', '=']) {
            let value = value.trim_start_matches([' ', '\t']);
            let end = value
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
                .unwrap_or(value.len());
            if end > 0 {
                return Some(&value[..end]);
            }
        }
        rest = after;
    }
    None
}

/// CPython's names for UTF-8 (`utf-8`, `utf_8`, `utf8`, `utf-8-...`), any case.
fn is_utf8(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('_', "-");
    n == "utf-8" || n == "utf8" || n.starts_with("utf-8-")
}

#[cfg(test)]
mod tests {
    use super::foreign_declaration;

    #[test]
    fn utf8_and_absent_declarations_pass() {
        for src in [
            "x = 1\n",
            "# -*- coding: utf-8 -*-\nx = 1\n",
            "#!/usr/bin/env python\n# coding=UTF_8\n",
            "# vim: set fileencoding=utf8 :\n",
            "x = 1\n# coding: latin-1\n", // line 2 counts only after a comment line
            "print('coding: latin-1')\n",
        ] {
            assert_eq!(foreign_declaration(src), None, "{src:?}");
        }
    }

    #[test]
    fn other_codecs_are_found_on_line_one_or_two() {
        assert_eq!(
            foreign_declaration("# -*- coding: latin-1 -*-\n"),
            Some((1, "latin-1"))
        );
        assert_eq!(
            foreign_declaration("#!/usr/bin/python\n# vim: fileencoding=utf-7\n"),
            Some((2, "utf-7"))
        );
        assert_eq!(
            foreign_declaration("\n  # coding=cp1252\n"),
            Some((2, "cp1252"))
        );
    }
}
