//! The rules on calls: banned callees and keywords, and the library-specific rules on
//! settings (`rcParams`, `plt.style`, `rc_context`, pandas options).

use super::*;

impl Walker<'_> {
    pub(super) fn call(&mut self, c: ast::ExprCall, d: u32, ctx: Ctx) {
        let ast::ExprCall {
            range,
            func,
            args,
            keywords,
        } = c;
        let mut fflags = 0u16;
        if self.checking {
            let callee = callee_name(&func);
            let starred = args.iter().any(|a| matches!(a, Expr::Starred(_)));
            let splat = keywords.iter().any(|k| k.arg.is_none());
            if let Some(name) = callee.as_deref() {
                match name {
                    "type" if args.len() == 1 && keywords.is_empty() && !starred => {
                        fflags |= F_TYPE_OK
                    }
                    "super" if args.is_empty() && keywords.is_empty() => fflags |= F_SUPER_OK,
                    // A constant name gets the attribute rules here; any name is
                    // checked again at run time by the curated builtins (prelude).
                    "getattr" | "hasattr" if matches!(&*func, Expr::Name(_)) => {
                        if let Some(attr) = args.get(1).and_then(const_str) {
                            let attr = normalize::ident(attr).into_owned();
                            let at = rustpython_parser::ast::Ranged::range(&args[1]);
                            if self.attr_name(&attr, at, false) && attr.starts_with('_') {
                                self.out.push(self.private_violation(&attr, at));
                            }
                        }
                    }
                    "query" | "eval" if matches!(&*func, Expr::Attribute(_)) => {
                        fflags |= F_CALLED_CHECKED;
                        let ok = !starred
                            && args.len() == 1
                            && const_str(&args[0])
                                .and_then(strings::query_refs)
                                .is_some_and(|refs| {
                                    refs.iter().all(|r| {
                                        !self.policy.banned_names.contains(*r)
                                            && !self.policy.banned_builtins.contains(*r)
                                            && !self.policy.shadowable_names.contains(*r)
                                            && !r.starts_with('_')
                                    })
                                })
                            && keywords.iter().all(|k| {
                                k.arg.as_ref().is_some_and(|a| {
                                    matches!(a.as_str(), "inplace" | "engine" | "parser")
                                })
                            });
                        if !ok {
                            self.report(
                                Rule::StringEvaluation,
                                range,
                                format!("{name} with a non-literal or unsafe expression"),
                                "use boolean indexing df[df['x'] > 1], or a literal query without attribute access, indexing or @calls",
                            );
                        }
                    }
                    "load" if args.len() > 2 || starred || splat => {
                        self.report(
                            Rule::BannedKeyword,
                            range,
                            "load with allow_pickle position or unpacked arguments".into(),
                            "call np.load(srcpath('x.npy')) without allow_pickle",
                        );
                    }
                    "use" | "context" | "switch_backend" => {
                        let backend = name == "switch_backend"
                            || matches!(
                                receiver_name(&func).as_deref(),
                                Some("matplotlib" | "mpl")
                            );
                        self.style_call(&args, &keywords, backend, range);
                    }
                    "rc" => self.rc_call(&args, &keywords, range),
                    "rc_context" => self.rc_context_call(&args, &keywords, range),
                    "update" if matches!(&*func, Expr::Attribute(a) if is_rc_params(&a.value)) => {
                        fflags |= F_RC_RECEIVER;
                        let ok = args.len() <= 1
                            && args.first().is_none_or(|a| self.rc_dict_ok(a))
                            && keywords.iter().all(|k| {
                                k.arg
                                    .as_ref()
                                    .is_none_or(|a| !self.policy.setting_denied(a.as_str()))
                            });
                        if !ok {
                            self.report(
                                Rule::DangerousSetting,
                                range,
                                "rcParams.update with a setting that starts programs, imports modules or reads files".into(),
                                "set display settings only, e.g. plt.rcParams.update({'font.size': 12}); figures render with Agg",
                            );
                        }
                    }
                    "set_option" | "option_context" => {
                        let ok = !starred
                            && !splat
                            && args.iter().step_by(2).all(|a| {
                                const_str(a).is_some_and(|k| !self.policy.setting_denied(k))
                            });
                        if !ok {
                            self.report(
                                Rule::DangerousSetting,
                                range,
                                "option set with a non-literal or denied key".into(),
                                "use literal display options, e.g. pd.set_option('display.max_rows', 50)",
                            );
                        }
                    }
                    "StrMethodFormatter" => match args.first().and_then(const_str) {
                        Some(s) if strings::format_traverses(s) => self.report(
                            Rule::FormatTraversal,
                            range,
                            "format string traverses attributes or indexes".into(),
                            "use plain fields like '{x:.2f}'",
                        ),
                        Some(_) => {}
                        None => self.nonconst_format = true,
                    },
                    _ => {}
                }
                if RC_METHODS.contains(&name) {
                    fflags |= F_RC_RECEIVER;
                }
            }
            for k in &keywords {
                self.keyword(k);
            }
        }
        self.push_eb(func, d, ctx.plain().with(fflags));
        self.push_es(args, d, ctx.plain());
        for k in keywords {
            self.push_e(k.value, d, ctx.plain());
        }
    }

    pub(super) fn keyword(&mut self, k: &ast::Keyword) {
        match &k.arg {
            Some(a) => {
                let a = normalize::ident(a.as_str());
                let a = a.as_ref();
                if strings::is_dunder(a) {
                    self.report(
                        Rule::DunderName,
                        k.range,
                        format!("dunder keyword {a}"),
                        "use ordinary keyword names",
                    );
                }
                match a {
                    "allow_pickle" | "usetex" if !is_falsy_const(&k.value) => self.report(
                        Rule::BannedKeyword,
                        k.range,
                        format!(
                            "{a} enabled: {}",
                            crate::gate::policy::names::keyword_reason(a)
                        ),
                        format!("remove {a}="),
                    ),
                    "backend" => {
                        let ok = const_str(&k.value)
                            .is_some_and(|v| v.eq_ignore_ascii_case("agg") || v == "matplotlib");
                        if !ok {
                            self.report(
                                Rule::BannedKeyword,
                                k.range,
                                "backend selects a module to import".into(),
                                "remove backend=",
                            );
                        }
                    }
                    _ => {}
                }
            }
            None => {
                if let Expr::Dict(dct) = &k.value {
                    for key in dct.keys.iter().flatten() {
                        if let Some(s) = const_str(key) {
                            let s = normalize::text(s);
                            if matches!(s.as_ref(), "allow_pickle" | "usetex" | "backend")
                                || strings::is_dunder(&s)
                            {
                                self.report(
                                    Rule::BannedKeyword,
                                    k.range,
                                    format!("{} passed through **", s.as_ref()),
                                    "pass keyword arguments directly",
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// Whether settings given to rcParams hold no denied one the gate can see: a literal
    /// dict's literal keys are judged here; what it cannot see (a variable, a computed
    /// key, `**`) the worker's `RcParams.__setitem__` judges key by key
    /// (python/library_guards/libraries.py).
    pub(super) fn rc_dict_ok(&self, e: &Expr) -> bool {
        match e {
            Expr::Dict(dct) => dct
                .keys
                .iter()
                .flatten()
                .all(|k| const_str(k).is_none_or(|s| !self.policy.setting_denied(s))),
            _ => true,
        }
    }

    pub(super) fn style_call(
        &mut self,
        args: &[Expr],
        kws: &[ast::Keyword],
        backend: bool,
        range: TextRange,
    ) {
        let ok_name = |s: &str| {
            if backend {
                s.eq_ignore_ascii_case("agg")
            } else {
                strings::style_name_ok(s)
            }
        };
        let ok = kws.iter().all(|k| {
            k.arg
                .as_ref()
                .is_some_and(|a| a.as_str() == "after_reset" || a.as_str() == "force")
        }) && args.len() == 1
            && match &args[0] {
                Expr::Constant(_) => const_str(&args[0]).is_some_and(ok_name),
                Expr::List(l) if !backend => {
                    l.elts.iter().all(|e| const_str(e).is_some_and(ok_name))
                }
                Expr::Tuple(t) if !backend => {
                    t.elts.iter().all(|e| const_str(e).is_some_and(ok_name))
                }
                Expr::Dict(_) if !backend => self.rc_dict_ok(&args[0]),
                _ => false,
            };
        if !ok {
            let (msg, hint) = if backend {
                (
                    "backend other than agg",
                    "the backend is already Agg; remove this call",
                )
            } else {
                (
                    "style from a path, variable or url",
                    "use a built-in style name, e.g. plt.style.use('ggplot')",
                )
            };
            self.report(Rule::DangerousSetting, range, msg.into(), hint);
        }
    }

    /// `plt.rc(group, **settings)`: a literal group with literal names is judged here,
    /// the rest (`**font`, a computed group) by the worker, key by key.
    pub(super) fn rc_call(&mut self, args: &[Expr], kws: &[ast::Keyword], range: TextRange) {
        let group = args.first().and_then(const_str);
        let denied = |name: &str| match group {
            Some(g) => self.policy.setting_denied(&format!("{g}.{name}")),
            None => false,
        };
        let ok = args.len() == 1
            && group.is_none_or(|g| !self.policy.setting_denied(g))
            && kws
                .iter()
                .all(|k| k.arg.as_ref().is_none_or(|a| !denied(a.as_str())));
        if !ok {
            self.report(
                Rule::DangerousSetting,
                range,
                "rc() with a setting that starts programs, imports modules or reads files".into(),
                "set display settings only, e.g. plt.rc('font', size=12); figures render with Agg",
            );
        }
    }

    pub(super) fn rc_context_call(
        &mut self,
        args: &[Expr],
        kws: &[ast::Keyword],
        range: TextRange,
    ) {
        let mut ok = args.len() <= 1 && args.first().is_none_or(|a| self.rc_dict_ok(a));
        for k in kws {
            match k.arg.as_ref().map(|a| a.as_str()) {
                Some("rc") => ok &= self.rc_dict_ok(&k.value),
                _ => ok = false, // fname= reads settings from a file; ** hides keys
            }
        }
        if !ok {
            self.report(
                Rule::DangerousSetting,
                range,
                "rc_context with a settings file or a setting that starts programs".into(),
                "use plt.rc_context({'font.size': 12}) with display settings",
            );
        }
    }
}

/// The bare-name receiver of a method call (`x` in `x.f()`), NFKC-normalised.
fn receiver_name(func: &Expr) -> Option<String> {
    match func {
        Expr::Attribute(a) => name_of(&a.value).map(|n| normalize::ident(n).into_owned()),
        _ => None,
    }
}
