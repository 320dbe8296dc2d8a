//! What needs the whole program: whether a name the job used is its own binding, an
//! import alias, or an injected module, resolved once the walk is done.

use super::*;

impl Walker<'_> {
    pub(super) fn resolve_root(&self, root: &str) -> Option<String> {
        if let Some(p) = self.aliases.get(root) {
            return Some(p.clone());
        }
        // an injected name the job never rebinds stands for its module
        if self.bound.contains(root) {
            return None;
        }
        self.policy.module_for_injected(root)
    }

    pub(super) fn finish(&mut self) {
        // Before the chains are consumed below: stores on string classes are chains.
        self.check_classes();
        // Banned names and builtins inside functions, comprehensions and classes: a
        // binding is the job's own unless it is declared global; a read is allowed
        // when it resolves to such a binding of a function scope.
        for u in std::mem::take(&mut self.scoped_binds) {
            if self.global_decls.contains(&(u.scope, u.name.clone())) {
                self.check_bound_name(&u.name, u.range);
            }
        }
        for u in std::mem::take(&mut self.scoped_loads) {
            if !self.resolves_locally(u.scope, &u.name) {
                let _ = self.report_banned_builtin(&u.name, u.range)
                    || self.report_banned_name(&u.name, u.range);
            }
        }
        // Banned module names: a read passes when the job binds the name for a value of
        // its own (nothing else in its namespace or builtins goes by it).
        for (n, range) in std::mem::take(&mut self.module_name_reads) {
            if !self.own_module_names.contains(&n) {
                self.report_banned_name(&n, range);
            }
        }
        // shadowable names: banned unless the job binds them itself
        for (n, range) in std::mem::take(&mut self.shadow_uses) {
            if !self.bound.contains(&n) {
                self.report(
                    Rule::BannedName,
                    range,
                    format!("banned name {n}: {}", reason_for(&n)),
                    "bind it yourself first, e.g. from scipy import signal",
                );
            }
        }
        // self._x: allowed unless self is rebound in that method or declared outer
        for p in std::mem::take(&mut self.pending_private) {
            if self.fn_stores.contains(&(p.fn_id, p.base.clone()))
                || self.declared_outer.contains(&p.base)
            {
                self.out.push(p.raw);
            }
        }
        // m = np.lib style aliases (a few rounds for chains of aliases)
        for _ in 0..4 {
            let mut changed = false;
            for (t, root, attrs) in &self.assign_aliases {
                if self.aliases.contains_key(t) {
                    continue;
                }
                if let Some(base) = self.resolve_root(root) {
                    let mut p = base;
                    for a in attrs {
                        p.push('.');
                        p.push_str(a);
                    }
                    self.aliases.insert(t.clone(), p);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for ch in std::mem::take(&mut self.chains) {
            let Some(mut path) = self.resolve_root(&ch.root) else {
                continue;
            };
            let mut denied = self.policy.module_denied(&path);
            let mut reached = ch.attrs.len();
            for (i, a) in ch.attrs.iter().enumerate() {
                if denied {
                    reached = i;
                    break;
                }
                path.push('.');
                path.push_str(a);
                denied = self.policy.module_denied(&path);
            }
            if denied {
                // The hint reads the whole chain (`pd.io.formats.excel.ExcelFormatter`),
                // the message names where it was refused (`pandas.io`).
                let whole = std::iter::once(path.as_str())
                    .chain(ch.attrs[reached..].iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(".");
                self.report(
                    Rule::SubmoduleDenied,
                    ch.range,
                    format!("reaches denied {}", crate::gate::verdict::quote(&path)),
                    self.policy.module_hint(&whole),
                );
            } else if let Some(hint) = ch
                .attrs
                .last()
                .and_then(|last| self.policy.registrar_hint(last, &path))
            {
                self.report(
                    Rule::RegistryMutation,
                    ch.range,
                    format!(
                        "registers into library state shared with later jobs: {}",
                        crate::gate::verdict::quote(&path)
                    ),
                    format!("instead {hint}"),
                );
            } else if ch.store && !pandas_option_ok(self.policy, &path) {
                self.report(
                    Rule::ModuleMutation,
                    ch.range,
                    format!(
                        "changes library module attribute {}",
                        crate::gate::verdict::quote(&path)
                    ),
                    crate::gate::policy::names::mutation_hint(&path),
                );
            }
        }
        if self.nonconst_format {
            for range in std::mem::take(&mut self.traversal_strings) {
                self.report(
                    Rule::FormatTraversal,
                    range,
                    "format string traverses attributes or indexes".into(),
                    "use plain fields like '{}' or '{:.2f}', or an f-string",
                );
            }
        }
    }
}

/// `pd.options.display.max_rows = 10` and `pd.options.mode.chained_assignment = None`
/// are ordinary pandas; options that import modules (`plotting.backend`, `io.*`) are not.
fn pandas_option_ok(policy: &Policy, path: &str) -> bool {
    match path.strip_prefix("pandas.options.") {
        Some(key) => key.contains('.') && !policy.setting_denied(key),
        None => false,
    }
}
