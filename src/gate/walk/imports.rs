//! The rules on imports: the allowlist, denied submodules, members-only modules and
//! the aliases the whole-program pass resolves.

use super::*;

/// `from __future__ import` names that are compiler directives.
const FUTURE_FEATURES: &[&str] = &[
    "annotations",
    "division",
    "absolute_import",
    "print_function",
    "unicode_literals",
    "generators",
    "nested_scopes",
    "with_statement",
    "generator_stop",
];

impl Walker<'_> {
    /// Checks a dotted module path; returns the normalised path.
    pub(super) fn module_path(&mut self, raw: &str, range: TextRange) -> String {
        let comps: Vec<String> = raw
            .split('.')
            .map(|c| normalize::ident(c).into_owned())
            .collect();
        let path = comps.join(".");
        let top = comps.first().map(String::as_str).unwrap_or("");
        if !self.policy.allowed_modules.contains(top) {
            let why = if self.policy.shadowable_names.contains(top) {
                "a standard-library module jobs cannot use"
            } else if self.policy.banned_names.contains(top) {
                reason_for(top)
            } else {
                "not available here"
            };
            self.report(
                Rule::ImportNotAllowed,
                range,
                format!("import of {top}: {why}"),
                crate::gate::policy::modules::import_alternative(top),
            );
            return path;
        }
        for (i, c) in comps.iter().enumerate().skip(1) {
            let reviewed = crate::gate::policy::names::is_reviewed_path(&comps[..=i].join("."));
            if !reviewed && !self.attr_name(c, range, false) {
                return path;
            }
            if c.starts_with('_') {
                self.report(
                    Rule::PrivateAttribute,
                    range,
                    format!("private module {c}"),
                    "import public modules only",
                );
                return path;
            }
        }
        if self.policy.module_denied(&path) {
            self.report(
                Rule::SubmoduleDenied,
                range,
                format!("submodule {path} is denied"),
                self.policy.module_hint(&path),
            );
        }
        path
    }

    /// Whether an import of `raw` is one of a package this environment lacks, written
    /// where its `ImportError` falls into the job's own fallback: it binds its names and
    /// reports nothing. Banned modules are judged as anywhere else.
    fn is_fallback_import(&self, raw: &str, ctx: Ctx) -> bool {
        let top = normalize::ident(raw.split('.').next().unwrap_or(""));
        let top = top.as_ref();
        ctx.has(F_IMPORT_FALLBACK)
            && !self.policy.allowed_modules.contains(top)
            && !self.policy.banned_names.contains(top)
            && !self.policy.shadowable_names.contains(top)
            && !self.policy.banned_builtins.contains(top)
            && !strings::is_dunder(top)
    }

    pub(super) fn import(&mut self, names: Vec<ast::Alias>, ctx: Ctx) {
        for al in names {
            if !self.checking {
                continue;
            }
            if self.is_fallback_import(al.name.as_str(), ctx) {
                let bound = al.asname.as_ref().map_or_else(
                    || al.name.as_str().split('.').next().unwrap_or(""),
                    |a| a.as_str(),
                );
                self.bind_import_name(bound, al.range, ctx);
                continue;
            }
            let path = self.module_path(al.name.as_str(), al.range);
            match &al.asname {
                Some(asn) => {
                    self.bind_import_name(asn.as_str(), al.range, ctx);
                    let n = normalize::ident(asn.as_str()).into_owned();
                    self.aliases.insert(n, path);
                }
                None => {
                    let top = path.split('.').next().unwrap_or("").to_string();
                    if self.is_module_view(&top) {
                        self.bind_module_view(&top, ctx);
                    } else {
                        self.bind_import_name(&top, al.range, ctx);
                    }
                    self.aliases.insert(top.clone(), top);
                }
            }
        }
    }

    pub(super) fn import_from(&mut self, f: ast::StmtImportFrom, ctx: Ctx) {
        if !self.checking {
            return;
        }
        let level = f.level.map(|l| l.to_u32()).unwrap_or(0);
        if level == 0
            && f.module
                .as_ref()
                .is_some_and(|m| m.as_str() == "__future__")
        {
            // Compiler directives: they change how the job's code compiles, not what it
            // can reach (the import itself gets a fresh placeholder module at run time).
            for al in &f.names {
                let n = normalize::ident(al.name.as_str());
                if !FUTURE_FEATURES.contains(&n.as_ref()) || al.asname.is_some() {
                    self.report(
                        Rule::ImportNotAllowed,
                        al.range,
                        format!("from __future__ import {n}"),
                        "only compiler directives such as `from __future__ import annotations`",
                    );
                }
            }
            return;
        }
        let module = match (&f.module, level) {
            (Some(m), 0) => m.as_str().to_string(),
            _ => {
                self.report(
                    Rule::ImportForm,
                    f.range,
                    "relative import".into(),
                    "import packages by their absolute name",
                );
                return;
            }
        };
        if self.is_fallback_import(&module, ctx) {
            for al in &f.names {
                let bound = al.asname.as_ref().unwrap_or(&al.name);
                if bound.as_str() != "*" {
                    self.bind_import_name(bound.as_str(), al.range, ctx);
                }
            }
            return;
        }
        let path = self.module_path(&module, f.range);
        for al in f.names {
            let n = normalize::ident(al.name.as_str()).into_owned();
            if n == "*" {
                self.report(
                    Rule::ImportForm,
                    al.range,
                    "import *".into(),
                    "import the names you use explicitly",
                );
                continue;
            }
            if !self.attr_name(&n, al.range, false) {
                continue;
            }
            if n.starts_with('_') {
                self.report(
                    Rule::PrivateAttribute,
                    al.range,
                    format!("private name {n}"),
                    "import public names only",
                );
                continue;
            }
            let full = format!("{path}.{n}");
            if self.policy.module_denied(&full) {
                self.report(
                    Rule::SubmoduleDenied,
                    al.range,
                    format!("{full} is denied"),
                    self.policy.module_hint(&full),
                );
            }
            if let Some(hint) = self.policy.registrar_hint(&n, &full) {
                self.report(
                    Rule::RegistryMutation,
                    al.range,
                    format!("{full} registers into library state shared with later jobs"),
                    format!("instead {hint}"),
                );
            }
            if n == "rcParams" && al.asname.as_ref().is_some_and(|a| a.as_str() != "rcParams") {
                self.report(
                    Rule::DangerousSetting,
                    al.range,
                    "rcParams imported under another name".into(),
                    "use plt.rcParams['key'] = value",
                );
            }
            let bound = al
                .asname
                .as_ref()
                .map(|a| a.as_str())
                .unwrap_or(al.name.as_str());
            self.bind_import_name(bound, al.range, ctx);
            self.aliases
                .insert(normalize::ident(bound).into_owned(), full);
        }
    }
}
