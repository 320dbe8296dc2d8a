//! What the gate says: a [`Verdict`] with every [`Violation`] found, or [`BadInput`] for
//! source that was never parsed. Also the teaching text a model reads to fix its code.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::gate::policy::Policy;

/// Longest untrusted text quoted in a violation, in characters.
pub(crate) const MAX_QUOTED_CHARS: usize = 80;

/// A stable rule id. Ids are part of the interface (records, tests, callers' matches):
/// rename never, add freely.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Rule {
    /// The source does not parse (position and the parser's message).
    Syntax,
    /// Import of a top-level package outside the allowlist.
    ImportNotAllowed,
    /// Import or attribute path that reaches a denied submodule (`numpy.f2py`, ...).
    SubmoduleDenied,
    /// Relative import or `import *`.
    ImportForm,
    /// A banned name (`os`, `sys`, `subprocess`, ...) in any position.
    BannedName,
    /// A banned builtin called or referenced (`eval`, `open`, `getattr`, ...).
    BannedBuiltin,
    /// A restricted builtin outside its one allowed position (`type` with 3 args,
    /// `super(...)` with args, `object` as a value, ...).
    RestrictedBuiltin,
    /// Access to a `__dunder__` attribute.
    DunderAttribute,
    /// A `__dunder__` bare name, or a dunder method definition outside the allowlist.
    DunderName,
    /// Access to an `_private` attribute of an object the job did not create.
    PrivateAttribute,
    /// A banned attribute name (`np.ctypeslib`, `x.system`, `pd.read_pickle`, ...).
    BannedAttribute,
    /// Frame, generator, coroutine, traceback or code-object attribute.
    IntrospectionAttribute,
    /// A format string that traverses attributes or indexes (`"{0.x}"`, `"{0[k]}"`).
    FormatTraversal,
    /// A string constant naming a dunder (attribute-taking APIs accept strings).
    DunderString,
    /// Code hidden in strings evaluated by a library (`df.query("@x.y")`, `pd.eval`).
    StringEvaluation,
    /// A setting that starts programs, imports modules or reads files (rcParams writer
    /// paths, `text.usetex`, style files, backends, pandas options).
    DangerousSetting,
    /// Assignment or deletion of an attribute of an imported module (`np.x = ...`).
    ModuleMutation,
    /// Registering into a process-wide library registry (`matplotlib.colormaps.register`,
    /// `register_scale`, pandas accessors): state a later job would see.
    RegistryMutation,
    /// A keyword argument that enables a dangerous mode (`allow_pickle=True`,
    /// `usetex=True`, `metaclass=...`, `**` into a loader).
    BannedKeyword,
    /// Syntax the gate does not support (async, `except*`, type parameters).
    UnsupportedSyntax,
    /// A class that answers for a string: a subclass of `str`, `bytes` or another string
    /// type with behaviour of its own (a method, a mixin, a computed member), an
    /// attribute stored on one or named like a string method, or a class whose base is
    /// computed at run time and could be one. Run-time guards judge names; a name whose
    /// class answers `startswith` or `__eq__` for itself would judge itself.
    StringClass,
}

impl Rule {
    /// The stable kebab-case id (same as the serde form).
    pub fn id(&self) -> &'static str {
        match self {
            Rule::Syntax => "syntax",
            Rule::ImportNotAllowed => "import-not-allowed",
            Rule::SubmoduleDenied => "submodule-denied",
            Rule::ImportForm => "import-form",
            Rule::BannedName => "banned-name",
            Rule::BannedBuiltin => "banned-builtin",
            Rule::RestrictedBuiltin => "restricted-builtin",
            Rule::DunderAttribute => "dunder-attribute",
            Rule::DunderName => "dunder-name",
            Rule::PrivateAttribute => "private-attribute",
            Rule::BannedAttribute => "banned-attribute",
            Rule::IntrospectionAttribute => "introspection-attribute",
            Rule::FormatTraversal => "format-traversal",
            Rule::DunderString => "dunder-string",
            Rule::StringEvaluation => "string-evaluation",
            Rule::DangerousSetting => "dangerous-setting",
            Rule::ModuleMutation => "module-mutation",
            Rule::RegistryMutation => "registry-mutation",
            Rule::BannedKeyword => "banned-keyword",
            Rule::UnsupportedSyntax => "unsupported-syntax",
            Rule::StringClass => "string-class",
        }
    }
}

/// One refused construct.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Violation {
    /// Which rule.
    pub rule: Rule,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub col: u32,
    /// The offending source text (first line, truncated, escaped).
    pub text: String,
    /// Short lowercase fragment: what was refused.
    pub message: String,
    /// One line: what to do instead.
    pub hint: String,
}

/// The gate's answer for source that parsed (or failed to parse: a `Syntax` violation).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[non_exhaustive]
pub struct Verdict {
    /// Every violation found, in source order.
    pub violations: Vec<Violation>,
}

/// Source refused before parsing: it could harm the host or is not text.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "reason")]
#[non_exhaustive]
pub enum BadInput {
    /// Not valid UTF-8 at this byte offset.
    #[error("bad input: not utf-8 at byte {offset}")]
    NotUtf8 {
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// A NUL byte (CPython refuses these in source).
    #[error("bad input: nul byte at byte {offset}")]
    NulByte {
        /// Byte offset of the NUL.
        offset: usize,
    },
    /// Larger than the policy's cap.
    #[error("bad input: source is {bytes} bytes, limit {limit}")]
    TooLarge {
        /// Source size in bytes.
        bytes: usize,
        /// The policy's cap.
        limit: usize,
    },
    /// Nests deeper than the policy's cap (brackets or syntax tree).
    #[error("bad input: nesting deeper than {limit}")]
    TooDeep {
        /// The cap that was exceeded.
        limit: usize,
    },
    /// A PEP 263 coding declaration names a codec other than UTF-8: a person or
    /// `python file.py` would read the bytes as other text than the gate checks.
    #[error("bad input: coding declaration {declared:?} on line {line}; only utf-8 is accepted")]
    ForeignEncoding {
        /// Line of the declaration (1 or 2).
        line: u32,
        /// The codec as declared (at most 40 characters).
        declared: String,
    },
    /// The gate itself failed (a caught panic or a thread that could not start). The
    /// source is refused: failing closed.
    #[error("bad input: gate failure: {message}")]
    Internal {
        /// Short description.
        message: String,
    },
}

impl BadInput {
    /// Text for a model: why the source was not even checked.
    pub fn teaching_text(&self) -> String {
        match self {
            BadInput::NotUtf8 { .. } => "The code is not valid UTF-8 text. Send plain UTF-8 Python source.".into(),
            BadInput::NulByte { .. } => "The code contains a NUL byte. Remove it.".into(),
            BadInput::TooLarge { limit, .. } => format!(
                "The code is too large (limit {limit} bytes). Write a shorter script; read data from files with srcpath('name') instead of embedding it."
            ),
            BadInput::TooDeep { limit } => format!(
                "The code nests too deeply (limit {limit}). Split long expressions and deep nesting into separate statements or loops."
            ),
            BadInput::ForeignEncoding { .. } => "The code declares a source encoding other than UTF-8 (a '# coding: ...' line). Send UTF-8 text without a coding line.".into(),
            BadInput::Internal { .. } => "The code could not be checked. Simplify it and try again.".into(),
        }
    }
}

impl Verdict {
    /// True when nothing was refused.
    pub fn is_allowed(&self) -> bool {
        self.violations.is_empty()
    }

    /// A text written for a model to fix its code in one retry: what was refused here and
    /// why, what to use instead, and only the rules of the environment that apply (the
    /// allowed imports for a refused import, how to read inputs for a file access, ...).
    /// A syntax error reads as CPython prints it.
    pub fn teaching_text(&self, policy: &Policy) -> String {
        let mut t = String::new();
        if self.is_allowed() {
            t.push_str("The code passed the safety check.\n\nRules for this environment:\n");
            for section in Section::ALL {
                section.write(&mut t, policy);
            }
            return t;
        }
        if let [v] = self.violations.as_slice() {
            if v.rule == Rule::Syntax {
                let _ = writeln!(
                    t,
                    "The code has a syntax error at line {}, column {}: {}\n    {}",
                    v.line, v.col, v.message, v.text
                );
                if v.text.chars().count() < MAX_QUOTED_CHARS {
                    let _ = writeln!(t, "    {}^", " ".repeat(v.col.saturating_sub(1) as usize));
                }
                t.push_str("Fix it and send the whole script again (Python 3.11).\n");
                return t;
            }
        }
        let _ = writeln!(
            t,
            "The code was refused before running ({} problem{}):",
            self.violations.len(),
            if self.violations.len() == 1 { "" } else { "s" }
        );
        for v in self.violations.iter().take(30) {
            let _ = writeln!(
                t,
                "- line {}, col {}: {} [{}] `{}` -> {}",
                v.line,
                v.col,
                v.message,
                v.rule.id(),
                v.text,
                v.hint
            );
        }
        if self.violations.len() > 30 {
            let _ = writeln!(t, "- ... and {} more", self.violations.len() - 30);
        }
        let sections: Vec<Section> = Section::ALL
            .into_iter()
            .filter(|s| self.violations.iter().any(|v| s.applies_to(v)))
            .collect();
        if !sections.is_empty() {
            t.push_str("\nRules that apply:\n");
            for section in sections {
                section.write(&mut t, policy);
            }
        }
        t
    }
}

/// A part of the environment's rules, shown with a refusal only when one of its
/// violations is about it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Imports,
    Inputs,
    Saving,
    NotAvailable,
    Allowed,
}

impl Section {
    const ALL: [Section; 5] = [
        Section::Imports,
        Section::Inputs,
        Section::Saving,
        Section::NotAvailable,
        Section::Allowed,
    ];

    fn applies_to(self, v: &Violation) -> bool {
        let about_files = v.message.contains("file")
            || ["open", "os", "io", "pathlib", "sys", "glob", "shutil"]
                .contains(&v.text.split('.').next().unwrap_or_default());
        match self {
            Section::Imports => matches!(
                v.rule,
                Rule::ImportNotAllowed | Rule::SubmoduleDenied | Rule::ImportForm
            ),
            Section::Inputs => about_files,
            Section::Saving => v.message.contains("savefig") || v.message.contains("output"),
            Section::NotAvailable => {
                !matches!(
                    v.rule,
                    Rule::ImportNotAllowed
                        | Rule::SubmoduleDenied
                        | Rule::ImportForm
                        | Rule::Syntax
                        | Rule::UnsupportedSyntax
                ) && !about_files
            }
            Section::Allowed => matches!(
                v.rule,
                Rule::DunderName
                    | Rule::DunderAttribute
                    | Rule::RestrictedBuiltin
                    | Rule::UnsupportedSyntax
                    | Rule::FormatTraversal
                    | Rule::StringClass
            ),
        }
    }

    fn write(self, t: &mut String, policy: &Policy) {
        match self {
            Section::Imports => {
                let _ = writeln!(
                    t,
                    "- Allowed imports (top-level packages): {}.",
                    policy.allowed_imports().join(", ")
                );
                t.push_str("- Already available without import: np (numpy), plt (matplotlib.pyplot), pd (pandas), loadmat, SRC, OUT, srcpath, listdir, walkfiles.\n");
            }
            Section::Inputs => t.push_str("- Read input data: srcpath('file.csv') gives the path of an input file; listdir() lists the input folder and walkfiles() lists it recursively. Examples: pd.read_csv(srcpath('data.csv')), np.loadtxt(srcpath('x.txt')), loadmat(srcpath('x.mat')).\n"),
            Section::Saving => t.push_str("- Save the figure with plt.savefig(OUT) or fig.savefig(OUT, dpi=150, bbox_inches='tight'); do not choose your own output path.\n"),
            Section::NotAvailable => t.push_str("- Not available: file, process, network and interpreter access (os, sys, subprocess, open, eval, exec, setattr, __import__, ...), any __dunder__ attribute, _private attributes of library objects (getattr and hasattr work for public names only), pickle loading, changing library modules (np.x = ...), settings that start programs (text.usetex, animation writers, backends).\n"),
            Section::Allowed => t.push_str("- Allowed: functions, classes (defining __init__, __repr__ etc. and calling super().__init__()), lambdas, comprehensions, try/except, with np.errstate(...), f-strings and '{:.2f}'.format(x) with plain fields, plt.rcParams['font.size'] = 12, plt.style.use('ggplot').\n"),
        }
    }
}

/// Escapes untrusted text for messages: control, bidi and invisible characters become
/// `\u{..}`, and the result is cut to [`MAX_QUOTED_CHARS`] characters.
pub(crate) fn quote(s: &str) -> String {
    let first = s.lines().next().unwrap_or("");
    let mut out = String::new();
    let mut n = 0usize; // characters in `out`
    let mut cut = first.len() < s.len();
    for c in first.chars() {
        let invisible = matches!(c as u32,
            0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2069 | 0xFEFF | 0x00AD);
        let piece = if c.is_control() || invisible || c == '`' {
            format!("\\u{{{:x}}}", c as u32)
        } else {
            c.to_string()
        };
        let len = piece.chars().count();
        if n + len > MAX_QUOTED_CHARS {
            cut = true;
            break;
        }
        out.push_str(&piece);
        n += len;
    }
    if cut {
        out.push('…');
    }
    out
}
