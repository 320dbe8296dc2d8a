//! The library's module graph, read from its sources: no two modules depend on each
//! other (directly or around a loop), no arrow points up the layers below, and unsafe
//! code lives in two files. `make arch` runs this alone; `make test` runs it with
//! everything else.
//!
//! An edge is a path a module names: `crate::a::b`, `super::x`, or a name the crate
//! root re-exports (`crate::Executor` is the supervisor's). Comments are not read. A
//! module may use its ancestors (their items are its own namespace, as a submodule
//! uses `super::Shared`); every other edge counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules by layer, lowest first: a module uses only its own layer and the
/// ones below it.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "data and rules: no process, no interpreter",
        &[
            "error",
            "sys",
            "digest",
            "python_env",
            "figure",
            "sandbox",
            "gate",
            "fdpass",
            "protocol",
            "output_dir",
            "array",
            "encode",
            "outcome",
            "validate",
            "job",
            "workspace",
            "guide",
        ],
    ),
    (
        "the two ends of the process boundary",
        &["worker", "supervisor"],
    ),
    (
        "services built on the executor",
        &["report", "record", "doctor"],
    ),
];

type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn the_library_has_no_module_cycle_and_no_upward_arrow() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&root, &["bin"]);
    assert!(graph.len() > 20, "too few modules read: {:?}", graph.keys());
    let cycles = cycles(&graph);
    assert!(cycles.is_empty(), "module cycles: {cycles:?}");

    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, (_, mods))| mods.iter().map(move |m| (*m, i)))
        .collect();
    for name in layer_of.keys() {
        assert!(
            graph.contains_key(*name),
            "LAYERS names {name}, which is no module"
        );
    }
    let mut upward = Vec::new();
    for (from, tos) in &graph {
        let top = |m: &str| m.split("::").next().unwrap_or_default().to_string();
        let Some(&from_layer) = layer_of.get(top(from).as_str()) else {
            panic!("module {from} is in no layer: add it to LAYERS");
        };
        for to in tos {
            let Some(&to_layer) = layer_of.get(top(to).as_str()) else {
                panic!("module {to} is in no layer: add it to LAYERS");
            };
            if to_layer > from_layer {
                upward.push(format!(
                    "{from} ({}) -> {to} ({})",
                    LAYERS[from_layer].0, LAYERS[to_layer].0
                ));
            }
        }
    }
    assert!(upward.is_empty(), "arrows up the layers: {upward:#?}");
}

/// The files allowed to hold `unsafe` code: libc calls and the interpreter's C API.
const UNSAFE_ROOMS: &[&str] = &["sys", "worker::cpython"];

#[test]
fn unsafe_code_lives_in_two_rooms() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    collect(&root, &root, &[], &mut files);
    let mut with_unsafe: Vec<&str> = files
        .iter()
        .filter(|(_, text)| {
            let code = strip_comments(text);
            code.contains("unsafe {") || code.contains("unsafe fn") || code.contains("unsafe impl")
        })
        .map(|(m, _)| m.as_str())
        .collect();
    with_unsafe.sort();
    assert_eq!(
        with_unsafe, UNSAFE_ROOMS,
        "unsafe code outside its two rooms"
    );
    // The crate denies unsafe code; only the two rooms' declarations allow it.
    assert!(strip_comments(&files[""]).contains("#![deny(unsafe_code)]"));
    let allows: Vec<&str> = files
        .iter()
        .filter(|(_, text)| strip_comments(text).contains("allow(unsafe_code)"))
        .map(|(m, _)| m.as_str())
        .collect();
    assert_eq!(
        allows,
        ["", "worker"],
        "allow(unsafe_code) outside the rooms' parents"
    );
}

#[test]
fn the_command_line_program_has_no_module_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cli/src");
    let graph = module_graph(&root, &[]);
    assert!(graph.len() > 5, "too few modules read: {:?}", graph.keys());
    let cycles = cycles(&graph);
    assert!(cycles.is_empty(), "module cycles: {cycles:?}");
}

#[test]
fn the_reader_sees_a_cycle_and_grouped_imports() {
    // The check itself can fail: a made-up pair of modules that use each other.
    let mut g = Graph::new();
    let files = [
        ("a", "use crate::{b::Thing, c};\n// crate::d in a comment\n"),
        ("b", "fn f() { super::a::g(); }\n"),
        ("c", "/* crate::a */ const X: u8 = 1;\n"),
    ];
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.to_string()).collect();
    for (m, text) in files {
        g.insert(m.into(), edges_of(m, text, &modules, &BTreeMap::new()));
    }
    assert_eq!(g["a"], ["b", "c"].map(String::from).into());
    assert_eq!(g["b"], ["a"].map(String::from).into());
    assert!(g["c"].is_empty());
    assert_eq!(cycles(&g), vec![vec!["a".to_string(), "b".to_string()]]);
}

/// Every module under `root` (its `lib.rs` or `main.rs` is the crate root, named "")
/// with the modules it uses.
fn module_graph(root: &Path, skip_dirs: &[&str]) -> Graph {
    let mut files = BTreeMap::new();
    collect(root, root, skip_dirs, &mut files);
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let crate_root = files
        .get("")
        .map(|text| strip_comments(text))
        .unwrap_or_default();
    let reexports = reexports(&crate_root, &modules);
    files
        .iter()
        .filter(|(m, _)| !m.is_empty())
        .map(|(m, text)| (m.clone(), edges_of(m, text, &modules, &reexports)))
        .collect()
}

fn collect(root: &Path, dir: &Path, skip_dirs: &[&str], out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !skip_dirs.contains(&name.as_str()) {
                collect(root, &path, skip_dirs, out);
            }
            continue;
        }
        let Some(stem) = name.strip_suffix(".rs") else {
            continue;
        };
        let rel = path.parent().unwrap().strip_prefix(root).unwrap();
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if !matches!(stem, "mod" | "lib" | "main") {
            parts.push(stem.to_string());
        }
        out.insert(parts.join("::"), std::fs::read_to_string(&path).unwrap());
    }
}

/// Names the crate root re-exports, by the module they come from.
fn reexports(crate_root: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in crate_root.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.trim_start_matches("crate::");
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        if !modules.contains(module) {
            continue;
        }
        for name in names.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !name.is_empty() {
                out.insert(name.to_string(), module.to_string());
            }
        }
    }
    out
}

/// The modules `module`'s source names, except itself and its ancestors.
fn edges_of(
    module: &str,
    text: &str,
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let code = strip_comments(text);
    let parent: Vec<&str> = module.split("::").collect();
    let parent = &parent[..parent.len() - 1];
    let mut paths = Vec::new();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent.to_vec())] {
        for (at, _) in code.match_indices(prefix) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            for tail in path_tails(&code[at + prefix.len()..]) {
                let mut segments: Vec<String> = base.iter().map(|s| s.to_string()).collect();
                segments.extend(tail);
                paths.push(segments);
            }
        }
    }
    let mut out = BTreeSet::new();
    for mut segments in paths {
        if let Some(module) = segments.first().and_then(|s| reexports.get(s)) {
            segments.insert(0, module.clone());
        }
        // The longest prefix that names a module.
        let found = (1..=segments.len())
            .rev()
            .map(|k| segments[..k].join("::"))
            .find(|candidate| modules.contains(candidate));
        if let Some(target) = found {
            let is_self_or_ancestor =
                module == target || module.starts_with(&format!("{target}::"));
            if !is_self_or_ancestor {
                out.insert(target);
            }
        }
    }
    out
}

/// The paths after `crate::` or `super::`: one, or one per item of a `{...}` group.
fn path_tails(rest: &str) -> Vec<Vec<String>> {
    let ident = |s: &str| -> usize {
        s.find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len())
    };
    let mut segments = Vec::new();
    let mut rest = rest;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            let mut out = Vec::new();
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in group[..end].char_indices().chain([(end, ',')]) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        for tail in path_tails(group[start..i].trim()) {
                            let mut path = segments.clone();
                            path.extend(tail);
                            out.push(path);
                        }
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return out;
        }
        let n = ident(rest);
        if n == 0 {
            break;
        }
        segments.push(rest[..n].to_string());
        match rest[n..].strip_prefix("::") {
            Some(more) => rest = more,
            None => break,
        }
    }
    if segments.is_empty() || segments == ["self"] {
        return Vec::new();
    }
    vec![segments]
}

/// The source without comments (line, doc and block comments); string literals are
/// kept as they are, which is close enough for paths.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut block = 0usize;
    while let Some(c) = chars.next() {
        if block > 0 {
            if c == '*' && chars.peek() == Some(&'/') {
                chars.next();
                block -= 1;
            } else if c == '/' && chars.peek() == Some(&'*') {
                chars.next();
                block += 1;
            }
            continue;
        }
        if c == '/' && chars.peek() == Some(&'/') {
            for c in chars.by_ref() {
                if c == '\n' {
                    out.push('\n');
                    break;
                }
            }
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            block = 1;
        } else {
            out.push(c);
        }
    }
    out
}

/// Every set of two or more modules that reach each other (Tarjan's strongly connected
/// components), each sorted, in a stable order.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found.sort();
    state.found
}
