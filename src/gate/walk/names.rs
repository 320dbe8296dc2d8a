//! The rules on names and attributes: bindings and reads of banned names and builtins,
//! dunder and private attributes, and the attribute chains the whole-program pass reads.

use super::*;

impl Walker<'_> {
    /// A name being bound (assignment target, def/class name, alias, except name, ...).
    pub(super) fn bind_name(&mut self, raw: &str, range: TextRange, ctx: Ctx) {
        let n = normalize::ident(raw).into_owned();
        self.bind_in_scope(&n, range, ctx.scope);
        self.fn_stores.insert((ctx.fn_id, n.clone()));
        self.bound.insert(n);
    }

    /// A name an import binds. A banned name stays refused at module scope even where
    /// the job may bind it for a value of its own: `import numpy as os` reads as the
    /// module. (A function's import binds a local, as any binding there does.)
    pub(super) fn bind_import_name(&mut self, raw: &str, range: TextRange, ctx: Ctx) {
        let n = normalize::ident(raw).into_owned();
        if self.checking && ctx.scope == 0 && self.is_own_module_name(&n) {
            self.check_bound_name(&n, range);
            return;
        }
        self.bind_name(&n, range, ctx);
    }

    /// A function parameter (in the function's own scope): bound, but not a
    /// *re*binding of `self`.
    pub(super) fn bind_param(&mut self, raw: &str, range: TextRange, scope: u32) {
        let n = normalize::ident(raw).into_owned();
        self.bind_in_scope(&n, range, scope);
        self.bound.insert(n);
    }

    /// Checks a binding. A banned name or builtin that a function, comprehension or
    /// class binds for itself holds only what the job put there: its binding is
    /// decided in [`Walker::finish`], where a module-scope binding (or one declared
    /// `global`) is still refused.
    pub(super) fn bind_in_scope(&mut self, n: &str, range: TextRange, scope: u32) {
        if !self.checking {
            return;
        }
        if self.is_own_module_name(n) {
            self.own_module_names.insert(n.to_string());
            return;
        }
        let banned =
            self.policy.banned_names.contains(n) || self.policy.banned_builtins.contains(n);
        if banned && scope != 0 && !strings::is_dunder(n) {
            self.local_binds.insert((scope, n.to_string()));
            let name = n.to_string();
            self.scoped_binds.push(ScopedUse { scope, name, range });
            return;
        }
        self.check_bound_name(n, range);
    }

    /// The scope a `:=` in `scope` binds in: the nearest one that is no comprehension.
    pub(super) fn walrus_scope(&self, mut scope: u32) -> u32 {
        while self.scopes[scope as usize].1 == ScopeKind::Comprehension {
            scope = self.scopes[scope as usize].0;
        }
        scope
    }

    /// A new name-resolution scope inside `parent`.
    pub(super) fn new_scope(&mut self, parent: u32, kind: ScopeKind) -> u32 {
        self.scopes.push((parent, kind));
        u32::try_from(self.scopes.len() - 1).unwrap_or(u32::MAX)
    }

    /// Whether a load of `n` in `scope` reads a binding of the job's own: `n` is local
    /// to that function scope, or to an enclosing function (a closure). Class bodies
    /// and the module never count: their loads can reach the builtins.
    pub(super) fn resolves_locally(&self, scope: u32, n: &str) -> bool {
        let mut s = scope;
        while s != 0 {
            let (parent, kind) = self.scopes[s as usize];
            let key = (s, n.to_string());
            if kind != ScopeKind::Class {
                if self.global_decls.contains(&key) {
                    return false;
                }
                if self.local_binds.contains(&key) {
                    return true;
                }
            }
            s = parent;
        }
        false
    }

    pub(super) fn check_bound_name(&mut self, n: &str, range: TextRange) {
        if strings::is_dunder(n) {
            self.report(
                Rule::DunderName,
                range,
                format!("binds dunder name {n}"),
                "use an ordinary name",
            );
        } else if self.policy.banned_names.contains(n) {
            self.report(
                Rule::BannedName,
                range,
                format!("banned name {n}: {}", reason_for(n)),
                "use another name; this module or object is not available",
            );
        } else if self.policy.banned_builtins.contains(n) {
            self.report(
                Rule::BannedBuiltin,
                range,
                format!("rebinds banned builtin {n}"),
                "use another name",
            );
        }
    }

    /// A name being read.
    pub(super) fn load_name(&mut self, raw: &str, range: TextRange, ctx: Ctx) {
        let n = normalize::ident(raw);
        let n = n.as_ref();
        if ctx.has(F_VIEW_MEMBER) && self.is_module_view(n) {
            return; // `os.path`, `pathlib.Path`: the member is judged with the chain
        }
        if self.is_own_module_name(n) {
            // `for site in sites: print(site)`: decided once every binding is known.
            self.module_name_reads.push((n.to_string(), range));
            return;
        }
        let banned =
            self.policy.banned_builtins.contains(n) || self.policy.banned_names.contains(n);
        if banned && ctx.scope != 0 && !strings::is_dunder(n) {
            // Decided once every binding is known (a function's local may be bound
            // after the line that reads it).
            let (scope, name) = (ctx.scope, n.to_string());
            self.scoped_loads.push(ScopedUse { scope, name, range });
            return;
        }
        if self.report_banned_builtin(n, range) {
            return;
        }
        if strings::is_dunder(n) {
            // `__name__` ('__main__'), `__file__` (the script's path as the job sees it,
            // '/mnt/data/job.py') and `__doc__` (its docstring): plain strings.
            if !matches!(n, "__name__" | "__file__" | "__doc__") {
                self.report(
                    Rule::DunderName,
                    range,
                    format!("dunder name {n}"),
                    "interpreter internals are not available",
                );
            }
            return;
        }
        if self.report_banned_name(n, range) {
            return;
        }
        let (flag, what) = match n {
            _ if !RESTRICTED_BUILTINS.contains(&n) => (0, ""),
            "type" => (
                F_TYPE_OK,
                "type is allowed only as type(x) with one argument",
            ),
            "super" => (
                F_SUPER_OK,
                "super is allowed only as super() with no arguments",
            ),
            "classmethod" | "staticmethod" | "property" => (
                F_DECORATOR,
                "classmethod/staticmethod/property only as decorators",
            ),
            _ => (0, ""),
        };
        if flag != 0 && !ctx.has(flag) {
            self.report(
                Rule::RestrictedBuiltin,
                range,
                format!("restricted builtin {n} used here"),
                what,
            );
            return;
        }
        if n == "rcParams" && !ctx.has(F_RC_OK) {
            self.report(
                Rule::DangerousSetting,
                range,
                "rcParams used other than by key".into(),
                "write settings as plt.rcParams['font.size'] = 12",
            );
        }
        if self.policy.shadowable_names.contains(n) {
            self.shadow_uses.push((n.to_string(), range));
        }
    }

    /// Whether `n` is a banned module name a job may bind for a value of its own
    /// (`names::is_bindable_module_name`).
    fn is_own_module_name(&self, n: &str) -> bool {
        self.policy.banned_names.contains(n)
            && crate::gate::policy::names::is_bindable_module_name(n)
    }

    /// Whether `n` is a banned name the policy lets a job import as a view of reviewed
    /// members (`os`, whose view holds `path` only; `pathlib`, whose view holds `Path`).
    pub(super) fn is_module_view(&self, n: &str) -> bool {
        self.policy.banned_names.contains(n)
            && self.policy.allowed_modules.contains(n)
            && self.policy.module_members.contains_key(n)
    }

    /// Binds the name `import os` binds: the view of a module whose name is banned. No
    /// check: the import itself was judged, and every later read of the name is (only
    /// `os.path` passes).
    pub(super) fn bind_module_view(&mut self, n: &str, ctx: Ctx) {
        self.fn_stores.insert((ctx.fn_id, n.to_string()));
        self.bound.insert(n.to_string());
    }

    /// Reports a read of a banned builtin; whether `n` is one.
    pub(super) fn report_banned_builtin(&mut self, n: &str, range: TextRange) -> bool {
        let banned = self.policy.banned_builtins.contains(n);
        if banned {
            self.report(
                Rule::BannedBuiltin,
                range,
                format!("banned builtin {n}: {}", reason_for(n)),
                crate::gate::policy::names::builtin_hint(n),
            );
        }
        banned
    }

    /// Reports a read of a banned name (a module or object); whether `n` is one.
    pub(super) fn report_banned_name(&mut self, n: &str, range: TextRange) -> bool {
        let banned = self.policy.banned_names.contains(n);
        if banned {
            self.report(
                Rule::BannedName,
                range,
                format!("banned name {n}: {}", reason_for(n)),
                "this module or object is not available; see the allowed imports",
            );
        }
        banned
    }

    // ---------------------------------------------------------------- attributes

    /// Rules for an attribute name in any position (`x.NAME`, `from m import NAME`,
    /// match keyword patterns). Returns false when a violation was reported.
    pub(super) fn attr_name(&mut self, a: &str, range: TextRange, allow_dunder: bool) -> bool {
        if strings::is_dunder(a) {
            if allow_dunder {
                return true;
            }
            self.report(
                Rule::DunderAttribute,
                range,
                format!("dunder attribute {a}"),
                "interpreter internals are not available; use the public API",
            );
            return false;
        }
        if self.policy.banned_names.contains(a) || self.policy.banned_attributes.contains(a) {
            self.report(
                Rule::BannedAttribute,
                range,
                format!("banned attribute {a}: {}", reason_for(a)),
                crate::gate::policy::names::attribute_hint(a),
            );
            return false;
        }
        if self
            .policy
            .banned_attribute_prefixes
            .iter()
            .any(|p| a.starts_with(p.as_str()))
        {
            self.report(
                Rule::IntrospectionAttribute,
                range,
                format!("introspection attribute {a}"),
                "frame, generator, traceback and code objects are not available",
            );
            return false;
        }
        true
    }

    /// The module path an attribute chain names through the job's imports and the
    /// injected names (`pd.api` is `pandas.api` unless the job imported something else
    /// as `pd`).
    fn dotted_path(&self, e: &Expr) -> Option<String> {
        self.dotted_path_within(e, 8)
    }

    /// [`Self::dotted_path`] for chains of at most `depth` attributes (a hostile chain
    /// may be thousands deep).
    fn dotted_path_within(&self, e: &Expr, depth: u32) -> Option<String> {
        match e {
            Expr::Name(n) => {
                let n = normalize::ident(n.id.as_str());
                self.aliases.get(n.as_ref()).cloned().or_else(|| {
                    self.policy
                        .injected_names
                        .get(n.as_ref())
                        .filter(|t| !t.is_empty() && !t.contains(':'))
                        .cloned()
                })
            }
            Expr::Attribute(at) if depth > 0 => self
                .dotted_path_within(&at.value, depth - 1)
                .map(|p| format!("{p}.{}", normalize::ident(at.attr.as_str()))),
            _ => None,
        }
    }

    pub(super) fn private_violation(&self, a: &str, range: TextRange) -> Raw {
        Raw {
            rule: Rule::PrivateAttribute,
            start: range.start().into(),
            end: range.end().into(),
            message: format!("private attribute {a}"),
            hint: "use the public API; _names are allowed only as self._x in your own classes"
                .into(),
        }
    }

    pub(super) fn attribute(&mut self, at: ast::ExprAttribute, d: u32, ctx: Ctx) {
        let ast::ExprAttribute {
            range,
            value,
            attr,
            ctx: ectx,
        } = at;
        let mut child = ctx.plain().with(F_ATTR_INNER);
        if self.checking {
            let a = normalize::ident(attr.as_str()).into_owned();
            if let Expr::Name(n) = &*value {
                let base = normalize::ident(n.id.as_str());
                // A member of a view the job imported is judged with the chain
                // (`os.remove`: "reaches denied os.remove"), so the view's own name is
                // no finding of its own; unimported (`os.system` alone), it is.
                let imported = self.aliases.get(base.as_ref()).map(String::as_str) == Some(&base);
                if self.is_module_view(&base)
                    && (imported || self.policy.module_members[base.as_ref()].contains_key(&a))
                {
                    child.flags |= F_VIEW_MEMBER;
                }
            }
            // super().__init__(...) and friends: a dunder method of the job's own class
            let super_call = matches!(&*value, Expr::Call(c)
                if name_of(&c.func).map(normalize::ident).as_deref() == Some("super")
                    && c.args.is_empty() && c.keywords.is_empty());
            let load = matches!(ectx, ExprContext::Load);
            let allow_dunder = (super_call && self.policy.allowed_dunder_methods.contains(&a))
                || (load && self.policy.allowed_dunder_reads.contains(&a))
                || (load && a == "__class__" && ctx.has(F_NAME_OF));
            if load && matches!(a.as_str(), "__name__" | "__qualname__") {
                child.flags |= F_NAME_OF;
            }
            // `Path(...).glob('*.csv')`: a reviewed method named like a banned module.
            let method = matches!(ectx, ExprContext::Load)
                && crate::gate::policy::names::is_reviewed_method_name(&a);
            // `pd.api.types`: a reviewed path of an allowed package.
            let reviewed = matches!(ectx, ExprContext::Load)
                && crate::gate::policy::names::is_reviewed_last(&a)
                && self.dotted_path(&value).is_some_and(|p| {
                    crate::gate::policy::names::is_reviewed_path(&format!("{p}.{a}"))
                });
            let ok = method || reviewed || self.attr_name(&a, range, allow_dunder);
            if !matches!(ectx, ExprContext::Load) {
                self.check_attribute_store(&value, &a, range);
            }
            if ok
                && a.starts_with('_')
                && !strings::is_dunder(&a)
                && !self.policy.private_attribute_allowlist.contains(&a)
                && !(load && crate::gate::policy::names::is_named_tuple_member(&a))
            {
                let self_name = self.self_names.get(ctx.fn_id as usize).cloned().flatten();
                let base = name_of(&value).map(|n| normalize::ident(n).into_owned());
                let stripped = a.trim_start_matches('_');
                let dangerous = self.policy.banned_names.contains(stripped)
                    || self.policy.banned_attributes.contains(stripped)
                    || self.policy.shadowable_names.contains(stripped)
                    || stripped.is_empty();
                let raw = self.private_violation(&a, range);
                match (self_name, base) {
                    (Some(s), Some(b)) if s == b && !dangerous => {
                        self.pending_private.push(PendingPrivate {
                            fn_id: ctx.fn_id,
                            base: b,
                            raw,
                        })
                    }
                    _ => self.out.push(raw),
                }
            }
            match a.as_str() {
                "format" | "format_map" => match const_str(&value) {
                    Some(s) => {
                        if strings::format_traverses(s) {
                            self.report(
                                Rule::FormatTraversal,
                                range,
                                "format string traverses attributes or indexes".into(),
                                "use plain fields like '{}' or '{:.2f}', or an f-string",
                            );
                        }
                    }
                    None => self.nonconst_format = true,
                },
                "query" | "eval" if !ctx.has(F_CALLED_CHECKED) => self.report(
                    Rule::StringEvaluation,
                    range,
                    format!("{a} evaluates a string expression"),
                    "use boolean indexing: df[df['x'] > 1]",
                ),
                "rcParams" if !ctx.has(F_RC_OK) => self.report(
                    Rule::DangerousSetting,
                    range,
                    "rcParams used other than by key".into(),
                    "write settings as plt.rcParams['font.size'] = 12",
                ),
                _ => {}
            }
            if ctx.has(F_RC_RECEIVER) && RC_METHODS.contains(&a.as_str()) && is_rc_params(&value) {
                child.flags |= F_RC_OK;
            }
            if !ctx.has(F_ATTR_INNER) {
                self.record_chain(&value, a, range, !matches!(ectx, ExprContext::Load));
            }
        }
        self.push_eb(value, d, child);
    }

    pub(super) fn record_chain(
        &mut self,
        value: &Expr,
        last: String,
        range: TextRange,
        store: bool,
    ) {
        let mut attrs = vec![last];
        let mut cur = value;
        let root = loop {
            match cur {
                Expr::Attribute(a) => {
                    attrs.push(normalize::ident(a.attr.as_str()).into_owned());
                    cur = &a.value;
                }
                Expr::Name(n) => break Some(normalize::ident(n.id.as_str()).into_owned()),
                _ => break None,
            }
        };
        if let Some(root) = root {
            attrs.reverse();
            attrs.truncate(16); // module paths are short; deeper names cannot match
            self.chains.push(Chain {
                root,
                attrs,
                range,
                store,
            });
        }
    }
}
