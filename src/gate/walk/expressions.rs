//! The dispatch over expressions and `match` patterns: every kind is named (no wildcard
//! arm, so a new kind in a parser upgrade is a compile error, not an unchecked node),
//! comprehensions get their own scope, string constants meet the string rules, and
//! `rcParams[...]` writes are judged here; calls, attributes and names go to their rules
//! (`calls`, `names`).

use super::*;

impl Walker<'_> {
    /// A comprehension's own scope (a function since Python 3): its targets are local.
    fn comprehension_ctx(&mut self, outer: Ctx) -> Ctx {
        let scope = self.new_scope(outer.scope, ScopeKind::Comprehension);
        Ctx { scope, ..outer }
    }

    /// The generators of a comprehension: the first iterable is evaluated in the
    /// enclosing scope (`outer`), everything else in the comprehension's (`inner`).
    fn comprehensions(
        &mut self,
        gens: Vec<ast::Comprehension>,
        range: TextRange,
        d: u32,
        outer: Ctx,
        inner: Ctx,
    ) {
        for (i, g) in gens.into_iter().enumerate() {
            if g.is_async {
                self.unsupported(
                    range,
                    "async comprehension",
                    "use an ordinary comprehension",
                );
            }
            self.push_e(g.target, d, inner.plain());
            let iter_ctx = if i == 0 { outer } else { inner };
            self.push_e(g.iter, d, iter_ctx.plain());
            self.push_es(g.ifs, d, inner.plain());
        }
    }

    fn constant(&mut self, value: &Constant, range: TextRange) {
        if let Constant::Str(s) = value {
            let n = normalize::text(s);
            if strings::contains_dunder(&n) {
                self.report(
                    Rule::DunderString,
                    range,
                    "string names a dunder".into(),
                    "attribute names in strings are not allowed; use the public API",
                );
            }
            if self.policy.setting_denied_dotted(&n) {
                self.report(
                    Rule::DangerousSetting,
                    range,
                    format!("denied setting {}", crate::gate::verdict::quote(&n)),
                    "settings that start programs or import modules are not available",
                );
            }
            if strings::format_traverses(s) {
                self.traversal_strings.push(range);
            }
        }
    }

    pub(super) fn expr(&mut self, e: Expr, d: u32, ctx: Ctx) {
        let c = ctx.plain();
        // Every expression kind is named; there is no wildcard arm, so a new kind in a
        // parser upgrade is a compile error here rather than a silently unchecked node.
        match e {
            Expr::BoolOp(x) => self.push_es(x.values, d, c),
            Expr::NamedExpr(x) => {
                // `:=` in a comprehension binds in the scope around it (PEP 572).
                let target = Ctx {
                    scope: self.walrus_scope(c.scope),
                    ..c
                };
                self.push_eb(x.target, d, target);
                self.push_eb(x.value, d, c);
            }
            Expr::BinOp(x) => {
                self.push_eb(x.left, d, c);
                self.push_eb(x.right, d, c);
            }
            Expr::UnaryOp(x) => self.push_eb(x.operand, d, c),
            Expr::Lambda(x) => {
                let id = self.new_fn(None);
                let scope = self.new_scope(ctx.scope, ScopeKind::Function);
                self.arguments(*x.args, d, ctx, scope);
                self.push_eb(
                    x.body,
                    d,
                    Ctx {
                        fn_id: id,
                        scope,
                        class_body: false,
                        flags: 0,
                    },
                );
            }
            Expr::IfExp(x) => {
                self.push_eb(x.test, d, c);
                self.push_eb(x.body, d, c);
                self.push_eb(x.orelse, d, c);
            }
            Expr::Dict(x) => {
                for k in x.keys.into_iter().flatten() {
                    self.push_e(k, d, c);
                }
                self.push_es(x.values, d, c);
            }
            Expr::Set(x) => self.push_es(x.elts, d, c),
            Expr::ListComp(x) => {
                let inner = self.comprehension_ctx(c);
                self.push_eb(x.elt, d, inner);
                self.comprehensions(x.generators, x.range, d, c, inner);
            }
            Expr::SetComp(x) => {
                let inner = self.comprehension_ctx(c);
                self.push_eb(x.elt, d, inner);
                self.comprehensions(x.generators, x.range, d, c, inner);
            }
            Expr::DictComp(x) => {
                let inner = self.comprehension_ctx(c);
                self.push_eb(x.key, d, inner);
                self.push_eb(x.value, d, inner);
                self.comprehensions(x.generators, x.range, d, c, inner);
            }
            Expr::GeneratorExp(x) => {
                let inner = self.comprehension_ctx(c);
                self.push_eb(x.elt, d, inner);
                self.comprehensions(x.generators, x.range, d, c, inner);
            }
            Expr::Await(x) => {
                self.unsupported(x.range, "await", "use ordinary calls");
                self.push_eb(x.value, d, c);
            }
            Expr::Yield(x) => self.push_eo(x.value, d, c),
            Expr::YieldFrom(x) => self.push_eb(x.value, d, c),
            Expr::Compare(x) => {
                self.push_eb(x.left, d, c);
                self.push_es(x.comparators, d, c);
            }
            Expr::Call(x) => self.call(x, d, ctx),
            Expr::FormattedValue(x) => {
                self.push_eb(x.value, d, c);
                self.push_eo(x.format_spec, d, c);
            }
            Expr::JoinedStr(x) => self.push_es(x.values, d, c),
            Expr::Constant(x) => {
                if self.checking {
                    self.constant(&x.value, x.range);
                }
            }
            Expr::Attribute(x) => self.attribute(x, d, ctx),
            Expr::Subscript(x) => {
                let mut vflags = 0;
                if self.checking && is_rc_params(&x.value) {
                    vflags |= F_RC_OK;
                    if !matches!(x.ctx, ExprContext::Load) {
                        // A computed key is judged by the worker (RcParams.__setitem__).
                        let ok = const_str(&x.slice).is_none_or(|k| !self.policy.setting_denied(k));
                        if !ok {
                            self.report(
                                Rule::DangerousSetting,
                                x.range,
                                "rcParams write of a setting that starts programs, imports modules or reads files".into(),
                                "write literal keys such as plt.rcParams['font.size'] = 12; settings that start programs are not available",
                            );
                        }
                    }
                }
                self.push_eb(x.value, d, c.with(vflags));
                self.push_eb(x.slice, d, c);
            }
            Expr::Starred(x) => self.push_eb(x.value, d, c),
            Expr::Name(x) => {
                if matches!(x.ctx, ExprContext::Load) {
                    if self.checking {
                        self.load_name(x.id.as_str(), x.range, ctx);
                    }
                } else {
                    self.bind_name(x.id.as_str(), x.range, ctx);
                }
            }
            Expr::List(x) => self.push_es(x.elts, d, c),
            Expr::Tuple(x) => self.push_es(x.elts, d, c),
            Expr::Slice(x) => {
                self.push_eo(x.lower, d, c);
                self.push_eo(x.upper, d, c);
                self.push_eo(x.step, d, c);
            }
        }
    }

    pub(super) fn pattern(&mut self, p: Pattern, d: u32, ctx: Ctx) {
        let c = ctx.plain();
        match p {
            Pattern::MatchValue(x) => self.push_eb(x.value, d, c),
            Pattern::MatchSingleton(_) => {}
            Pattern::MatchSequence(x) => {
                for p in x.patterns {
                    self.push_p(p, d, c);
                }
            }
            Pattern::MatchMapping(x) => {
                self.push_es(x.keys, d, c);
                for p in x.patterns {
                    self.push_p(p, d, c);
                }
                if let Some(r) = &x.rest {
                    self.bind_name(r.as_str(), x.range, ctx);
                }
            }
            Pattern::MatchClass(x) => {
                // keyword patterns read attributes: `case C(__class__=k)` is a dunder read
                if self.checking {
                    for a in &x.kwd_attrs {
                        let a = normalize::ident(a.as_str()).into_owned();
                        if self.attr_name(&a, x.range, false) && a.starts_with('_') {
                            self.out.push(self.private_violation(&a, x.range));
                        }
                    }
                }
                self.push_eb(x.cls, d, c);
                for p in x.patterns.into_iter().chain(x.kwd_patterns) {
                    self.push_p(p, d, c);
                }
            }
            Pattern::MatchStar(x) => {
                if let Some(n) = &x.name {
                    self.bind_name(n.as_str(), x.range, ctx);
                }
            }
            Pattern::MatchAs(x) => {
                if let Some(n) = &x.name {
                    self.bind_name(n.as_str(), x.range, ctx);
                }
                if let Some(p) = x.pattern {
                    self.push_p(*p, d, c);
                }
            }
            Pattern::MatchOr(x) => {
                for p in x.patterns {
                    self.push_p(p, d, c);
                }
            }
        }
    }
}
