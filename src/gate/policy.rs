//! The policy as data: what the gate allows, what it bans, and why.
//!
//! Every list is an allowlist or a reviewed denylist, and each entry carries its reason
//! ([`names::BANNED_NAME_REASONS`], [`names::BANNED_ATTRIBUTE_REASONS`], ...); the gate
//! quotes those reasons in its hints, so a model retrying its code learns *why*. This
//! file holds the [`Policy`] type: its profiles, loaders and validation, the hash that
//! run records carry, the questions the walk asks of it, and the [`RuntimeRules`] the
//! worker receives. The tables live beside it:
//!
//! - `names`: banned names, builtins and attributes, the dunders a job may define or
//!   read, and the teaching hints;
//! - `modules`: the import allowlist, denied submodules, members-only views, injected
//!   names and capability modules;
//! - `settings`: library settings a job may not write and registrars it may not call.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

mod module_members;
pub(crate) mod modules;
pub(crate) mod names;
mod settings;

use module_members::MODULE_MEMBERS;
use modules::{
    CAPABILITY_EXEMPT, CAPABILITY_MODULES, DENIED_MODULES, FIGURE_MODULES, INJECTED,
    TABLE_EXTRA_MODULES,
};
use names::{
    ALLOWED_DUNDER_METHODS, ALLOWED_DUNDER_READS, BANNED_ATTRIBUTE_PREFIXES,
    BANNED_ATTRIBUTE_REASONS, BANNED_BUILTIN_REASONS, BANNED_NAME_REASONS, SHADOWABLE_NAME_REASONS,
};
use settings::{DENIED_SETTING_PREFIXES, GUARDED_REGISTRARS, REGISTRAR_HINTS};

/// How a dotted module path may be reached (see [`Policy::module_access`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ModuleAccess {
    /// Allowed (or not a module path the policy names).
    Allowed,
    /// A denied submodule, or a path below one.
    Denied,
    /// A member of a module that allows only some members, and not one of them.
    NotAMember {
        /// The module.
        module: String,
        /// The members it allows.
        allowed: Vec<String>,
    },
}

/// Errors while loading a policy.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PolicyError {
    /// The TOML text did not parse or did not match the policy's shape.
    #[error("policy toml: {0}")]
    Toml(String),
    /// The JSON text did not parse or did not match the policy's shape.
    #[error("policy json: {0}")]
    Json(String),
    /// The policy parsed but a value is out of range.
    #[error("invalid policy: {0}")]
    Invalid(String),
}

/// A gate policy: which imports, names, builtins and attributes code may use.
///
/// Loadable from TOML/JSON; fields absent from the text take the [`Policy::figures`]
/// defaults, so a file can override one list only. All fields are private so a policy
/// can only be built through the profiles or the validated loaders.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Profile name, for records.
    pub(crate) profile: String,
    /// Static rules on; off only through [`Policy::gate_disabled_for_testing`].
    pub(crate) gate_enabled: bool,
    /// Largest accepted source in bytes (default 256 KiB).
    pub(crate) max_source_bytes: usize,
    /// Deepest accepted bracket nesting (default 200, CPython's own tokenizer limit).
    pub(crate) max_bracket_depth: usize,
    /// Deepest accepted syntax tree (default 1000; CPython's compiler gives up near 2000).
    pub(crate) max_ast_depth: usize,
    /// Top-level packages that may be imported.
    pub(crate) allowed_modules: BTreeSet<String>,
    /// Dotted submodules denied under an allowed package (prefix match).
    pub(crate) denied_modules: BTreeSet<String>,
    /// Modules a job may reach only through reviewed members: module -> member -> reason.
    pub(crate) module_members: BTreeMap<String, BTreeMap<String, String>>,
    /// Names rejected as attributes, imports, alias paths and module paths; as bare
    /// names too, unless a module's name the job binds for a value of its own
    /// (`names::is_bindable_module_name`).
    pub(crate) banned_names: BTreeSet<String>,
    /// Names rejected as bare names unless the job binds them itself.
    pub(crate) shadowable_names: BTreeSet<String>,
    /// Builtins rejected when called or referenced.
    pub(crate) banned_builtins: BTreeSet<String>,
    /// Attribute names rejected wherever they appear.
    pub(crate) banned_attributes: BTreeSet<String>,
    /// Attribute name prefixes rejected wherever they appear.
    pub(crate) banned_attribute_prefixes: BTreeSet<String>,
    /// Underscore-prefixed attribute names allowed on any object (reviewed; empty by
    /// default). `self._x` inside a job's own methods is allowed without listing.
    pub(crate) private_attribute_allowlist: BTreeSet<String>,
    /// Dunder methods a job's class may define.
    pub(crate) allowed_dunder_methods: BTreeSet<String>,
    /// Dunder attributes that may be read (never written).
    pub(crate) allowed_dunder_reads: BTreeSet<String>,
    /// Registering functions refused when reached through a module: name -> hint.
    pub(crate) registrars: BTreeMap<String, String>,
    /// Setting keys (rcParams, pandas options) that may not be written (prefix match).
    pub(crate) denied_setting_prefixes: BTreeSet<String>,
    /// Names injected into the job's globals, mapped to the module path they stand for
    /// (empty path: a helper, not a module).
    pub(crate) injected_names: BTreeMap<String, String>,
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn names_of(table: &[(&str, &str)]) -> BTreeSet<String> {
    table.iter().map(|(n, _)| n.to_string()).collect()
}

impl Default for Policy {
    fn default() -> Self {
        Policy::figures()
    }
}

impl Policy {
    /// The default profile for figure code: numpy, scipy, matplotlib, pandas and a
    /// reviewed set of pure stdlib modules.
    pub fn figures() -> Policy {
        Policy {
            profile: "figures".into(),
            gate_enabled: true,
            max_source_bytes: 256 * 1024,
            max_bracket_depth: 200,
            max_ast_depth: 1000,
            allowed_modules: set(FIGURE_MODULES),
            denied_modules: set(DENIED_MODULES),
            module_members: MODULE_MEMBERS
                .iter()
                .map(|(m, members)| {
                    let members = members
                        .iter()
                        .map(|(n, r)| (n.to_string(), r.to_string()))
                        .collect();
                    (m.to_string(), members)
                })
                .collect(),
            banned_names: names_of(BANNED_NAME_REASONS),
            shadowable_names: names_of(SHADOWABLE_NAME_REASONS),
            banned_builtins: names_of(BANNED_BUILTIN_REASONS),
            banned_attributes: names_of(BANNED_ATTRIBUTE_REASONS),
            banned_attribute_prefixes: set(BANNED_ATTRIBUTE_PREFIXES),
            private_attribute_allowlist: BTreeSet::new(),
            allowed_dunder_methods: set(ALLOWED_DUNDER_METHODS),
            allowed_dunder_reads: set(ALLOWED_DUNDER_READS),
            denied_setting_prefixes: set(DENIED_SETTING_PREFIXES),
            registrars: REGISTRAR_HINTS
                .iter()
                .map(|(n, h)| (n.to_string(), h.to_string()))
                .collect(),
            injected_names: INJECTED
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        }
    }

    /// The pandas/table profile: the figure profile plus a few pure stdlib helpers that
    /// table code uses (`calendar`, `unicodedata`, `pprint`).
    pub fn tables() -> Policy {
        let mut p = Policy::figures();
        p.profile = "tables".into();
        p.allowed_modules
            .extend(TABLE_EXTRA_MODULES.iter().map(|s| s.to_string()));
        p
    }

    /// **Testing only**: every static rule off. Syntax, encoding, size and depth are still
    /// checked (they protect the host, not the job), and [`Policy::runtime_rules`] are the
    /// figure profile's, so containment tests prove the run-time layers alone.
    pub fn gate_disabled_for_testing() -> Policy {
        let mut p = Policy::figures();
        p.profile = "gate-disabled-for-testing".into();
        p.gate_enabled = false;
        p
    }

    /// Whether the static rules run.
    pub fn gate_enabled(&self) -> bool {
        self.gate_enabled
    }

    /// Profile name.
    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// Loads a policy from TOML; absent fields take the figure defaults.
    pub fn from_toml(s: &str) -> Result<Policy, PolicyError> {
        let p: Policy = toml::from_str(s).map_err(|e| PolicyError::Toml(e.to_string()))?;
        p.validate()
    }

    /// Loads a policy from JSON; absent fields take the figure defaults.
    pub fn from_json(s: &str) -> Result<Policy, PolicyError> {
        let p: Policy = serde_json::from_str(s).map_err(|e| PolicyError::Json(e.to_string()))?;
        p.validate()
    }

    /// Serialises the policy as JSON (the canonical form hashed by [`Policy::hash`]).
    pub fn to_json(&self) -> String {
        // Serialising plain strings, sets and maps cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    fn validate(self) -> Result<Policy, PolicyError> {
        if self.max_source_bytes == 0 {
            return Err(PolicyError::Invalid("max_source_bytes must be > 0".into()));
        }
        if self.max_bracket_depth == 0 || self.max_ast_depth == 0 {
            return Err(PolicyError::Invalid("depth limits must be > 0".into()));
        }
        // The hard ceilings keep the big-stack walk within its stack (see mod.rs).
        if self.max_bracket_depth > 10_000 || self.max_ast_depth > 100_000 {
            return Err(PolicyError::Invalid(
                "depth limits above the hard ceiling".into(),
            ));
        }
        // Hard ceiling: a tree level costs at least one source byte, and the gate's
        // big-stack thread is sized for trees of this many levels (see gate::BIG_STACK).
        if self.max_source_bytes > 1024 * 1024 {
            return Err(PolicyError::Invalid("max_source_bytes above 1 MiB".into()));
        }
        for (m, members) in &self.module_members {
            if self.denied_modules.contains(m) {
                return Err(PolicyError::Invalid(format!(
                    "module {m:?} is both denied and limited to members"
                )));
            }
            if let Some(bad) = members
                .keys()
                .find(|n| n.starts_with('_') || n.contains('.'))
            {
                return Err(PolicyError::Invalid(format!(
                    "member {bad:?} of {m:?}: members are public names"
                )));
            }
        }
        for m in &self.allowed_modules {
            if m.contains('.') || m.is_empty() {
                return Err(PolicyError::Invalid(format!(
                    "allowed_modules holds top-level packages, not {m:?}"
                )));
            }
            // A banned name is importable only as a view of reviewed members (`os`).
            if self.banned_names.contains(m) && !self.module_members.contains_key(m) {
                return Err(PolicyError::Invalid(format!("module {m:?} is also banned")));
            }
        }
        Ok(self)
    }

    /// Largest accepted source in bytes (default 256 KiB).
    pub fn max_source_bytes(&self) -> usize {
        self.max_source_bytes
    }

    /// Deepest accepted bracket nesting.
    pub fn max_bracket_depth(&self) -> usize {
        self.max_bracket_depth
    }

    /// Deepest accepted syntax tree.
    pub fn max_ast_depth(&self) -> usize {
        self.max_ast_depth
    }

    /// Stable hex hash (FNV-1a 64) of the canonical JSON form; sets serialise sorted.
    pub fn hash(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.to_json().as_bytes() {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }

    /// What the worker enforces at run time with the same lists.
    pub fn runtime_rules(&self) -> RuntimeRules {
        let mut attrs: BTreeSet<String> = self.banned_attributes.clone();
        attrs.extend(self.banned_names.iter().cloned());
        RuntimeRules {
            allowed_modules: self.allowed_modules.iter().cloned().collect(),
            denied_modules: self.denied_modules.iter().cloned().collect(),
            module_members: self
                .module_members
                .iter()
                .map(|(m, members)| (m.clone(), members.keys().cloned().collect()))
                .collect(),
            // `__import__` is replaced by the guarded import rather than removed, and
            // `__build_class__` must stay for `class` statements to work.
            banned_builtins: self
                .banned_builtins
                .iter()
                .filter(|b| *b != "__import__" && *b != "__build_class__")
                .cloned()
                .collect(),
            banned_attributes: attrs.into_iter().collect(),
            banned_attribute_prefixes: self.banned_attribute_prefixes.iter().cloned().collect(),
            guarded_setting_prefixes: settings::GUARDED_SETTING_PREFIXES
                .iter()
                .map(|p| p.to_string())
                .collect(),
            injected: self
                .injected_names
                .iter()
                .map(|(n, t)| (n.clone(), t.clone()))
                .collect(),
            allowed_dunder_reads: self.allowed_dunder_reads.iter().cloned().collect(),
            reviewed_paths: names::REVIEWED_PATHS
                .iter()
                .map(|(p, _)| p.to_string())
                .collect(),
            capability_exempt: CAPABILITY_EXEMPT
                .iter()
                .map(|(n, _)| n.to_string())
                .collect(),
            capability_modules: self
                .banned_names
                .iter()
                .chain(&self.shadowable_names)
                .map(String::as_str)
                .chain(CAPABILITY_MODULES.iter().map(|(m, _)| *m))
                .map(str::to_string)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
        }
    }

    /// Allowed top-level packages, sorted (for teaching texts).
    pub fn allowed_imports(&self) -> Vec<String> {
        self.allowed_modules.iter().cloned().collect()
    }

    /// The dotted path an injected name stands for (`pd`: `pandas`, `loadmat`:
    /// `scipy.io.loadmat`); `None` for names that are no module or member.
    pub(crate) fn module_for_injected(&self, name: &str) -> Option<String> {
        self.injected_names
            .get(name)
            .filter(|s| !s.is_empty())
            .map(|s| s.replace(':', "."))
    }

    /// The names every job finds in its globals.
    pub(crate) fn injected_names(&self) -> impl Iterator<Item = &str> {
        self.injected_names.keys().map(String::as_str)
    }

    /// True when `path` (dotted) may not be reached: a denied submodule or a path below
    /// one, or a member a members-only module does not allow.
    pub(crate) fn module_denied(&self, path: &str) -> bool {
        self.module_access(path) != ModuleAccess::Allowed
    }

    /// How `path` (dotted) may be reached. A members-only module itself is allowed (the
    /// job gets a view that holds only the members), and so is anything below an allowed
    /// member.
    pub(crate) fn module_access(&self, path: &str) -> ModuleAccess {
        let under = |p: &str, d: &str| p.starts_with(d) && p.as_bytes().get(d.len()) == Some(&b'.');
        for (alias, package) in modules::PACKAGE_ALIASES {
            if path == *alias || under(path, alias) {
                return self.module_access(&format!("{package}{}", &path[alias.len()..]));
            }
        }
        // Deepest module first: a module sorts before the modules below it, so in reverse
        // order `os.path` is judged before `os` (whose member `path` it is).
        for (module, members) in self.module_members.iter().rev() {
            if path == module {
                return ModuleAccess::Allowed;
            }
            if under(path, module) {
                let member = path[module.len() + 1..].split('.').next().unwrap_or("");
                return if members.contains_key(member) {
                    ModuleAccess::Allowed
                } else {
                    ModuleAccess::NotAMember {
                        module: module.clone(),
                        allowed: members.keys().cloned().collect(),
                    }
                };
            }
        }
        if self
            .denied_modules
            .iter()
            .any(|d| path == d || under(path, d))
        {
            ModuleAccess::Denied
        } else {
            ModuleAccess::Allowed
        }
    }

    /// The hint for a registrar the job may not call at `path` (`matplotlib.units.
    /// registry`...`.register`), named `name`; `None` when it may (no registrar, or one
    /// of a registry the state guard restores).
    pub(crate) fn registrar_hint(&self, name: &str, path: &str) -> Option<&str> {
        if GUARDED_REGISTRARS.contains(&path) {
            return None;
        }
        self.registrars.get(name).map(String::as_str)
    }

    /// The hint for a path [`Policy::module_access`] refuses.
    pub(crate) fn module_hint(&self, path: &str) -> String {
        match self.module_access(path) {
            ModuleAccess::NotAMember { module, allowed } => {
                // The name after the module's (`path` of `sys.path.insert`).
                let member = path
                    .strip_prefix(module.as_str())
                    .and_then(|rest| rest.strip_prefix('.'))
                    .and_then(|rest| rest.split('.').next())
                    .unwrap_or_default();
                let why = match (module.as_str(), member) {
                    (_, "remove" | "unlink" | "rmdir" | "removedirs" | "rename" | "replace") => {
                        "files are not deleted or moved here (the job's folder starts empty: \
                         write each file once, under its final name); "
                    }
                    ("sys", "path") => {
                        "the allowed packages import without sys.path (a script's own folder \
                         holds no module here): delete the line; "
                    }
                    ("contextlib", "redirect_stdout" | "redirect_stderr") => {
                        "print(..., file=f) writes to a file you opened, and print() alone is \
                         already captured as the job's output; "
                    }
                    _ => "",
                };
                format!(
                    "{why}{module} offers only these names here: {}",
                    allowed.join(", ")
                )
            }
            _ if path.starts_with("pandas.io.formats.excel") => {
                "to restyle the header pandas writes, style its cells after to_excel: \
                 for cell in writer.sheets['Sheet1'][1]: cell.font = Font(bold=False); \
                 cell.border = Border()"
                    .into()
            }
            _ if path.split('.').any(|part| part == "testing") => {
                names::attribute_hint("testing").into()
            }
            _ => "use the package's public plotting/analysis API".into(),
        }
    }

    /// True when a setting key (rcParams / pandas option) may not be written.
    pub(crate) fn setting_denied(&self, key: &str) -> bool {
        let k = key.trim().to_ascii_lowercase();
        self.denied_setting_prefixes
            .iter()
            .any(|p| k.starts_with(p.as_str()))
    }

    /// Denied setting prefixes that contain a dot: safe to look for in any string constant.
    pub(crate) fn setting_denied_dotted(&self, key: &str) -> bool {
        if key.len() > 64 || !key.contains('.') {
            return false;
        }
        let k = key.trim().to_ascii_lowercase();
        self.denied_setting_prefixes
            .iter()
            .filter(|p| p.contains('.'))
            .any(|p| k.starts_with(p.as_str()))
    }
}

/// Rules the Python worker enforces at run time (guarded `__import__`, module proxies,
/// curated builtins). Sent to the worker as JSON.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct RuntimeRules {
    /// Top-level packages allowed.
    pub allowed_modules: Vec<String>,
    /// Dotted submodules denied even under an allowed package (`numpy.f2py`, ...).
    pub denied_modules: Vec<String>,
    /// Members-only modules: the job's view of each holds only these names.
    #[serde(default)]
    pub module_members: BTreeMap<String, Vec<String>>,
    /// Names removed from the job's builtins.
    pub banned_builtins: Vec<String>,
    /// Modules whose classes and functions give file, process or import access: a
    /// module proxy refuses such an object wherever an allowed module re-exports it.
    #[serde(default)]
    pub capability_modules: Vec<String>,
    /// `module.name` of re-exported classes and functions of capability modules that
    /// give no capability (`io.StringIO`): the proxy lets these through.
    #[serde(default)]
    pub capability_exempt: Vec<String>,
    /// Attribute names a module proxy must refuse (`os`, `sys`, `subprocess`, ...); a
    /// proxy must also refuse any `_`-prefixed name and any attribute whose value is a
    /// module outside the allowlist.
    pub banned_attributes: Vec<String>,
    /// Attribute prefixes of frame, generator and code objects (`gi_`, `tb_`, ...),
    /// refused by the curated `getattr`/`hasattr`.
    #[serde(default)]
    pub banned_attribute_prefixes: Vec<String>,
    /// Lower-case prefixes of the settings (rcParams) a job may not change whatever key
    /// it computes (`GUARDED_SETTING_PREFIXES`, src/gate/policy/settings.rs): the worker's
    /// `RcParams.__setitem__` judges every key a job writes
    /// (python/library_guards/libraries.py).
    #[serde(default)]
    pub guarded_setting_prefixes: Vec<String>,
    /// Names every job finds in its globals: (name, module or `module:member`, or
    /// empty for the prelude's own helpers).
    #[serde(default)]
    pub injected: Vec<(String, String)>,
    /// Dunder attributes that hold plain strings (`__name__`, `__doc__`, ...): the
    /// gate's `allowed_dunder_reads`. A replacement field of a format string may read
    /// these (`'{cls.__name__}'`, in matplotlib's own error messages); every other `_`
    /// name is refused there, as by the curated `getattr`.
    #[serde(default)]
    pub allowed_dunder_reads: Vec<String>,
    /// Dotted paths whose last component is named like a banned module but is an
    /// allowed package's own (`pandas.api.types`): a module proxy lets these through.
    #[serde(default)]
    pub reviewed_paths: Vec<String>,
}
