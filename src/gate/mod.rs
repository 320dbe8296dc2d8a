//! Interim static gate: syntax, import allowlist and banned builtins (token level).
//! The full AST policy engine replaces this module.

use rustpython_parser::{lexer::lex, source_code::RandomLocator, Mode, Tok};
use serde::{Deserialize, Serialize};

/// The policy.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Policy {
    enabled: bool,
    allowed: Vec<String>,
    banned_builtins: Vec<String>,
    max_source_bytes: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Self::figures()
    }
}

impl Policy {
    /// Figures profile.
    pub fn figures() -> Policy {
        Policy {
            enabled: true,
            allowed: [
                "numpy",
                "scipy",
                "matplotlib",
                "pandas",
                "math",
                "statistics",
                "json",
                "csv",
                "datetime",
                "collections",
                "itertools",
                "functools",
                "re",
                "random",
                "mpl_toolkits",
            ]
            .map(String::from)
            .to_vec(),
            banned_builtins: [
                "eval",
                "exec",
                "compile",
                "__import__",
                "open",
                "getattr",
                "setattr",
                "delattr",
                "globals",
                "locals",
                "vars",
                "input",
                "breakpoint",
                "help",
                "exit",
                "quit",
            ]
            .map(String::from)
            .to_vec(),
            max_source_bytes: 256 * 1024,
        }
    }
    /// Static rules off.
    pub fn gate_disabled_for_testing() -> Policy {
        Policy {
            enabled: false,
            ..Self::figures()
        }
    }
    /// Whether the static rules run.
    pub fn gate_enabled(&self) -> bool {
        self.enabled
    }
    /// Size cap.
    pub fn max_source_bytes(&self) -> usize {
        self.max_source_bytes
    }
    /// Runtime rules.
    pub fn runtime_rules(&self) -> RuntimeRules {
        RuntimeRules {
            allowed_modules: self.allowed.clone(),
            denied_modules: vec!["numpy.f2py".into(), "numpy.ctypeslib".into()],
            banned_builtins: self.banned_builtins.clone(),
            banned_attributes: vec![],
        }
    }
    /// Allowed imports.
    pub fn allowed_imports(&self) -> Vec<String> {
        self.allowed.clone()
    }
    /// Stable hash.
    pub fn hash(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        let mut h: u64 = 0xcbf29ce484222325;
        for b in json {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
        format!("{h:016x}")
    }
}

/// Runtime rules.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct RuntimeRules {
    /// Allowed top-level packages.
    pub allowed_modules: Vec<String>,
    /// Denied submodules.
    pub denied_modules: Vec<String>,
    /// Builtins removed.
    pub banned_builtins: Vec<String>,
    /// Attribute names refused on modules.
    pub banned_attributes: Vec<String>,
}

/// Verdict.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Violations.
    pub violations: Vec<Violation>,
}

impl Verdict {
    /// No violations.
    pub fn is_allowed(&self) -> bool {
        self.violations.is_empty()
    }
    /// Teaching text.
    pub fn teaching_text(&self, policy: &Policy) -> String {
        let mut s = String::from("the code was refused before running:\n");
        for v in &self.violations {
            s.push_str(&format!("- line {}: {} ({})\n", v.line, v.message, v.hint));
        }
        s.push_str(&format!(
            "allowed imports: {}. read inputs with srcpath('name'); save with plt.savefig(OUT).\n",
            policy.allowed.join(", ")
        ));
        s
    }
}

/// One violation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Violation {
    /// Rule.
    pub rule: Rule,
    /// Line.
    pub line: u32,
    /// Column.
    pub col: u32,
    /// Offending text.
    pub text: String,
    /// Message.
    pub message: String,
    /// Hint.
    pub hint: String,
}

/// Rule ids.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// Syntax error.
    Syntax,
    /// Import outside the allowlist.
    ImportNotAllowed,
    /// Banned builtin.
    BannedBuiltin,
    /// Dunder attribute.
    DunderAttribute,
}

impl Rule {
    /// Stable id.
    pub fn id(&self) -> &'static str {
        match self {
            Rule::Syntax => "syntax",
            Rule::ImportNotAllowed => "import-not-allowed",
            Rule::BannedBuiltin => "banned-builtin",
            Rule::DunderAttribute => "dunder-attribute",
        }
    }
}

/// Bad input.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum BadInput {
    /// Not UTF-8.
    #[error("source is not valid utf-8 (at byte {offset})")]
    NotUtf8 {
        /// Offset.
        offset: usize,
    },
    /// NUL byte.
    #[error("source contains a nul byte (at byte {offset})")]
    NulByte {
        /// Offset.
        offset: usize,
    },
    /// Too large.
    #[error("source is {bytes} bytes, over the limit of {limit}")]
    TooLarge {
        /// Size.
        bytes: usize,
        /// Limit.
        limit: usize,
    },
}

/// Checks bytes.
pub fn check_bytes(source: &[u8], policy: &Policy) -> Result<Verdict, BadInput> {
    if source.len() > policy.max_source_bytes {
        return Err(BadInput::TooLarge {
            bytes: source.len(),
            limit: policy.max_source_bytes,
        });
    }
    let text = std::str::from_utf8(source).map_err(|e| BadInput::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    check(text, policy)
}

/// Checks source.
pub fn check(source: &str, policy: &Policy) -> Result<Verdict, BadInput> {
    if let Some(offset) = source.find('\0') {
        return Err(BadInput::NulByte { offset });
    }
    let mut loc = RandomLocator::new(source);
    let mut violations = Vec::new();
    if let Err(e) = rustpython_parser::parse(source, Mode::Module, "<job>") {
        let at = loc.locate(e.offset);
        violations.push(Violation {
            rule: Rule::Syntax,
            line: at.row.get(),
            col: at.column.get(),
            text: String::new(),
            message: format!("syntax error: {}", e.error),
            hint: "fix the syntax".into(),
        });
        return Ok(Verdict { violations });
    }
    if !policy.enabled {
        return Ok(Verdict { violations });
    }
    let toks: Vec<_> = lex(source, Mode::Module).filter_map(Result::ok).collect();
    let mut push = |rule, off, text: &str, message: String, hint: &str| {
        let at = loc.locate(off);
        violations.push(Violation {
            rule,
            line: at.row.get(),
            col: at.column.get(),
            text: text.to_string(),
            message,
            hint: hint.to_string(),
        });
    };
    let mut in_from = false;
    for (i, (tok, range)) in toks.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| &toks[p].0);
        match tok {
            Tok::From => in_from = true,
            Tok::Newline => in_from = false,
            _ => {}
        }
        if let Tok::Name { name } = tok {
            let after_import =
                matches!(prev, Some(Tok::From)) || (matches!(prev, Some(Tok::Import)) && !in_from);
            let after_dot = matches!(prev, Some(Tok::Dot));
            if after_import && !policy.allowed.iter().any(|a| a == name.as_str()) {
                push(
                    Rule::ImportNotAllowed,
                    range.start(),
                    name,
                    format!("import of '{name}' is not allowed"),
                    "use only the allowed modules",
                );
            } else if !after_dot && policy.banned_builtins.iter().any(|b| b == name.as_str()) {
                push(
                    Rule::BannedBuiltin,
                    range.start(),
                    name,
                    format!("'{name}' is not available"),
                    "see the allowed helpers",
                );
            } else if after_dot && name.starts_with("__") && name.ends_with("__") {
                push(
                    Rule::DunderAttribute,
                    range.start(),
                    name,
                    format!("attribute '{name}' is not allowed"),
                    "dunder attributes are refused",
                );
            }
        }
    }
    Ok(Verdict { violations })
}
