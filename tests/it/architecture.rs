//! The module graphs, read from the sources: in the library no two modules depend on
//! each other (directly or around a loop), no arrow points up the layers below, and
//! unsafe code lives in two files; in the command line program no two folders or files
//! depend on each other; no source file is over 900 lines. `make arch` runs this alone;
//! `make test` runs it with everything else.
//!
//! An edge is a path a module names as a reader would follow it: `crate::a::b`,
//! `super::x`, `self::x`, a child module's `child::x`, or a name a `use` brought in
//! (`use crate::serve::jobs;` then `jobs::execute`, `use crate::serve;` then
//! `serve::jobs::execute`), each followed through `pub use` re-exports to the module that
//! defines the name (`crate::Executor` is the supervisor's). Comments and string
//! literals are not read. A module may use its ancestors (their items are its own
//! namespace, as a submodule uses `super::Shared`); every other edge counts. The
//! command line program is read at folder level: a folder is one unit with the files it
//! holds, so `serve/queue/consumer.rs` using `serve/jobs.rs` is the `serve/queue/`
//! folder using it.

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
    let graph = module_graph(&root, &["bin"], Level::Module);
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
    let graph = module_graph(&root, &[], Level::Folder);
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

#[test]
fn the_reader_follows_imported_modules_and_reexports_to_a_folder_knot() {
    // `jobs` uses `queued`, `queued` uses the `queue` folder, and a file inside that
    // folder reaches `jobs` through an imported parent (`serve::jobs::execute` after
    // `use crate::serve;`); a re-export leads to the module that defines the name.
    let files = [
        ("", "mod serve;\n"),
        ("serve", "mod jobs;\nmod page;\nmod queue;\nmod queued;\n"),
        ("serve::jobs", "fn f() { super::queued::enqueue(); }\n"),
        ("serve::page", "fn p() { super::queue::consume(); }\n"),
        (
            "serve::queued",
            "use super::queue::Queue;\nfn g(_: Queue) {}\n",
        ),
        (
            "serve::queue",
            "mod consumer;\npub struct Queue;\npub use consumer::consume;\n",
        ),
        (
            "serve::queue::consumer",
            "use crate::serve;\npub fn consume() { serve::jobs::execute(); }\n",
        ),
    ];
    let files: BTreeMap<String, String> = files
        .iter()
        .map(|(m, t)| (m.to_string(), t.to_string()))
        .collect();
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let reexports = reexports(&files, &modules);
    let edges = |m: &str| edges_of(m, &files[m], &modules, &reexports);
    let one = |m: &str| BTreeSet::from([m.to_string()]);
    assert_eq!(edges("serve::queued"), one("serve::queue"));
    assert_eq!(edges("serve::page"), one("serve::queue::consumer"));
    assert_eq!(edges("serve::queue::consumer"), one("serve::jobs"));
    // A string or a comment naming a module is no arrow.
    let quiet = "fn q() { let _ = \"super::jobs::x\"; } // super::jobs\n";
    assert!(edges_of("serve::queued", quiet, &modules, &reexports).is_empty());
    assert_eq!(
        cycles(&graph_of(&files, Level::Folder)),
        vec![["serve::jobs", "serve::queue", "serve::queued"]
            .map(String::from)
            .to_vec()]
    );
}

/// Source files of more than `MAX_LINES` lines: a file that long is several rooms.
const MAX_LINES: usize = 900;

/// Files over [`MAX_LINES`] today, to be split (issue 40); no other file may join them.
const LONG_FILES: &[&str] = &[];

#[test]
fn no_source_file_is_over_900_lines() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    for dir in ["src", "cli/src"] {
        let mut files = Vec::new();
        rust_files(&base.join(dir), &mut files);
        assert!(!files.is_empty(), "no source read under {dir}");
        for path in files {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            let rel = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if lines > MAX_LINES && !LONG_FILES.contains(&rel.as_str()) {
                long.push(format!("{rel}: {lines} lines"));
            }
        }
    }
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:#?}");
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every module under `root` (its `lib.rs` or `main.rs` is the crate root, named "")
/// with the modules it uses. At `Level::Folder` an arrow from a module is also an arrow
/// from each folder holding it, to the module and each folder holding that, except
/// between a folder and what it holds (`serve::queue::consumer` using `serve::jobs`
/// makes `serve::queue` use `serve::jobs`).
fn module_graph(root: &Path, skip_dirs: &[&str], level: Level) -> Graph {
    let mut files = BTreeMap::new();
    collect(root, root, skip_dirs, &mut files);
    graph_of(&files, level)
}

/// The graph of `files` (module -> source).
fn graph_of(files: &BTreeMap<String, String>, level: Level) -> Graph {
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let reexports = reexports(files, &modules);
    let mut graph = Graph::new();
    for (m, text) in files.iter().filter(|(m, _)| !m.is_empty()) {
        graph.entry(m.clone()).or_default();
        for to in edges_of(m, text, &modules, &reexports) {
            let (froms, tos) = match level {
                Level::Module => (vec![m.as_str()], vec![to.as_str()]),
                Level::Folder => (folders_of(m), folders_of(&to)),
            };
            for &from in &froms {
                for &to in &tos {
                    // A folder's arrows to what it holds are its own business.
                    let inside = matches!(level, Level::Folder) && holds(from, to);
                    if !inside && !holds(to, from) {
                        graph
                            .entry(from.to_string())
                            .or_default()
                            .insert(to.to_string());
                    }
                }
            }
        }
    }
    graph
}

/// How coarse the graph is: each file its own module, or a folder one unit with what
/// it holds.
#[derive(Clone, Copy)]
enum Level {
    Module,
    Folder,
}

/// `module` and every folder above it, the crate root left out.
fn folders_of(module: &str) -> Vec<&str> {
    module
        .match_indices("::")
        .map(|(i, _)| &module[..i])
        .chain([module])
        .collect()
}

/// Whether `outer` is `inner` or a folder holding it.
fn holds(outer: &str, inner: &str) -> bool {
    outer.is_empty()
        || outer == inner
        || inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with("::"))
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

/// What a module's `pub use` re-exports: (module, name) -> the path the name stands for.
type Reexports = BTreeMap<(String, String), Vec<String>>;

/// Every name a module re-exports (`pub use`, `pub(crate) use`, ...), in every module.
fn reexports(files: &BTreeMap<String, String>, modules: &BTreeSet<String>) -> Reexports {
    let mut out = Reexports::new();
    for (module, text) in files {
        let code = code_only(text);
        for statement in use_statements(&code) {
            if !statement.public {
                continue;
            }
            for item in use_items(&statement.tree) {
                let (Some(name), Some(path)) = (
                    item.name,
                    absolute(module, false, &item.path, modules, &BTreeMap::new()),
                ) else {
                    continue;
                };
                out.insert((module.clone(), name), path);
            }
        }
    }
    out
}

/// The modules `module`'s source names, except itself and its ancestors: paths from
/// `crate::`, `super::`, `self::` or a child module, and paths through a name a `use`
/// brought in (`use crate::serve::jobs;` then `jobs::execute`), each followed through
/// the re-exports of the modules on its way.
fn edges_of(
    module: &str,
    text: &str,
    modules: &BTreeSet<String>,
    reexports: &Reexports,
) -> BTreeSet<String> {
    let code = code_only(text);
    let inline = inline_modules(&code);
    let in_inline = |at: usize| inline.iter().any(|r| r.contains(&at));
    let mut paths = Vec::new();
    let mut aliases = BTreeMap::new();
    let statements = use_statements(&code);
    for statement in &statements {
        for item in use_items(&statement.tree) {
            let Some(path) = absolute(
                module,
                in_inline(statement.span.start),
                &item.path,
                modules,
                &BTreeMap::new(),
            ) else {
                continue;
            };
            if let Some(name) = item.name {
                aliases.insert(name, path.clone());
            }
            paths.push(path);
        }
    }
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    for (at, c) in code.char_indices() {
        let before = code[..at].chars().next_back();
        let starts = is_ident(c)
            && !c.is_ascii_digit()
            && !before.is_some_and(|b| is_ident(b) || matches!(b, ':' | '.' | '\'' | '#' | '$'));
        if !starts || statements.iter().any(|s| s.span.contains(&at)) {
            continue;
        }
        let rest = &code[at..];
        let n = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if !rest[n..].starts_with("::") {
            continue;
        }
        for tail in path_tails(rest) {
            if let Some(path) = absolute(module, in_inline(at), &tail, modules, &aliases) {
                paths.push(path);
            }
        }
    }
    let mut out = BTreeSet::new();
    for segments in paths {
        if let Some(target) = resolve(segments, modules, reexports) {
            if !holds(&target, module) {
                out.insert(target);
            }
        }
    }
    out
}

/// A path as seen from `module` (`inline`: from a `mod tests { ... }` inside it), from
/// the crate root; `None` for a path outside the crate (`std::`, `pyward::`, a local
/// item's `Self::`).
fn absolute(
    module: &str,
    inline: bool,
    path: &[String],
    modules: &BTreeSet<String>,
    aliases: &BTreeMap<String, Vec<String>>,
) -> Option<Vec<String>> {
    let own: Vec<String> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(String::from).collect()
    };
    let first = path.first()?;
    let mut out = match first.as_str() {
        "crate" => return Some(path[1..].to_vec()),
        "self" => return Some([own, path[1..].to_vec()].concat()),
        "super" => {
            let mut base = own;
            let supers = path.iter().take_while(|s| *s == "super").count();
            // Inside an inline module the first `super` is the file's module.
            for _ in 0..supers - usize::from(inline) {
                base.pop()?;
            }
            base.extend(path[supers..].iter().cloned());
            return Some(base);
        }
        _ => own.clone(),
    };
    if let Some(alias) = aliases.get(first) {
        let mut out = alias.clone();
        out.extend(path[1..].iter().cloned());
        return Some(out);
    }
    out.push(first.clone());
    if !modules.contains(&out.join("::")) {
        return None;
    }
    out.extend(path[1..].iter().cloned());
    Some(out)
}

/// The module a path from the crate root lands in: its longest prefix that names a
/// module, followed through that module's `pub use` when the next segment is a name it
/// re-exports. `None` for the crate root itself.
fn resolve(
    segments: Vec<String>,
    modules: &BTreeSet<String>,
    reexports: &Reexports,
) -> Option<String> {
    let mut segments = segments;
    for _ in 0..16 {
        let k = (1..=segments.len())
            .rev()
            .find(|&k| modules.contains(&segments[..k].join("::")))
            .unwrap_or(0);
        let module = segments[..k].join("::");
        let next = segments.get(k).cloned();
        match next.and_then(|name| reexports.get(&(module.clone(), name))) {
            Some(target) if *target != segments[..=k] => {
                let mut followed = target.clone();
                followed.extend(segments[k + 1..].iter().cloned());
                segments = followed;
            }
            _ => return (k > 0).then_some(module),
        }
    }
    None
}

/// A `use` statement: its tree (after `use`, before `;`), whether it re-exports, and
/// where it stands in the source.
struct UseStatement {
    tree: String,
    public: bool,
    span: std::ops::Range<usize>,
}

fn use_statements(code: &str) -> Vec<UseStatement> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("use") {
        let before = code[..at].chars().next_back();
        let after = code[at + 3..].chars().next();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            || !after.is_some_and(char::is_whitespace)
        {
            continue;
        }
        let Some(end) = code[at..].find(';').map(|e| at + e) else {
            continue;
        };
        let mut head = code[..at].trim_end();
        if let Some(open) = head.strip_suffix(')').and_then(|h| h.rfind('(')) {
            head = head[..open].trim_end();
        }
        let public = head.ends_with("pub")
            && !head[..head.len() - 3]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        out.push(UseStatement {
            tree: code[at + 3..end].trim().to_string(),
            public,
            span: at..end,
        });
    }
    out
}

/// One path a `use` tree imports, and the name it binds (`None` for a glob or `as _`).
struct UseItem {
    path: Vec<String>,
    name: Option<String>,
}

fn use_items(tree: &str) -> Vec<UseItem> {
    let mut out = Vec::new();
    use_tree(tree.trim().trim_start_matches("::"), Vec::new(), &mut out);
    out
}

fn use_tree(tree: &str, prefix: Vec<String>, out: &mut Vec<UseItem>) {
    let tree = tree.trim();
    if let Some(group) = tree.strip_prefix('{') {
        let group = group.strip_suffix('}').unwrap_or(group);
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in group.char_indices().chain([(group.len(), ',')]) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    let part = group[start..i].trim();
                    if !part.is_empty() {
                        use_tree(part, prefix.clone(), out);
                    }
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    if tree == "*" {
        out.push(UseItem {
            path: prefix,
            name: None,
        });
        return;
    }
    if let Some((head, rest)) = tree.split_once("::") {
        if !head.contains(char::is_whitespace) {
            let mut prefix = prefix;
            prefix.push(head.trim().to_string());
            use_tree(rest, prefix, out);
            return;
        }
    }
    let (ident, rename) = match tree.split_once(" as ") {
        Some((ident, rename)) => (ident.trim(), Some(rename.trim())),
        None => (tree, None),
    };
    let mut path = prefix;
    if ident != "self" {
        path.push(ident.to_string());
    }
    let name = match rename {
        Some("_") => None,
        Some(r) => Some(r.to_string()),
        None => path.last().cloned(),
    };
    if !path.is_empty() {
        out.push(UseItem { path, name });
    }
}

/// Where the source's inline modules (`mod tests { ... }`) are.
fn inline_modules(code: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("mod ") {
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &code[at + 4..];
        let n = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let after = rest[n..].trim_start();
        if n == 0 || !after.starts_with('{') {
            continue;
        }
        let open = at + 4 + n + (rest[n..].len() - after.len());
        let mut depth = 0;
        for (i, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        out.push(open..open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The source without comments and with the contents of string and character literals
/// blanked (a path in a message is no arrow, a `//` in a URL no comment); lifetimes
/// are kept.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
            continue;
        }
        // Raw strings: r"..", r#".."#, br#".."#.
        let word_start = i == 0 || !ident(chars[i - 1]);
        let after_b = i > 0 && chars[i - 1] == 'b' && (i == 1 || !ident(chars[i - 2]));
        if c == 'r' && (word_start || after_b) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) == Some(&'"') {
                let mut j = i + 2 + hashes;
                while j < chars.len()
                    && !(chars[j] == '"'
                        && chars[j + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|&&h| h == '#')
                            .count()
                            == hashes)
                {
                    j += 1;
                }
                out.push_str("r\"\"");
                i = j + 1 + hashes;
                continue;
            }
        }
        if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            out.push_str("\"\"");
            i += 1;
            continue;
        }
        if c == '\'' {
            if next == Some('\\') {
                let end = chars[i + 2..].iter().position(|&c| c == '\'');
                i += end.map_or(chars.len(), |e| e + 3);
                out.push_str("' '");
                continue;
            }
            if chars.get(i + 2) == Some(&'\'') {
                out.push_str("' '");
                i += 3;
                continue;
            }
        }
        out.push(c);
        i += 1;
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

/// Python files of more than `MAX_PYTHON_LINES` lines: the worker's Python side has rooms
/// too, and a module too long for one file is a folder of files, run in order into one
/// namespace (src/worker/modules.rs).
const MAX_PYTHON_LINES: usize = 600;

#[test]
fn no_python_file_is_over_600_lines() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    python_files(&base.join("python"), &mut files);
    assert!(!files.is_empty(), "no Python file read under python/");
    let long: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(path).unwrap().lines().count();
            let rel = path.strip_prefix(base).unwrap().display();
            (lines > MAX_PYTHON_LINES).then(|| format!("{rel}: {lines} lines"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "Python files over {MAX_PYTHON_LINES} lines: {long:#?}"
    );
}

/// A file in a module's folder (`python/prelude/`) runs only when the table of
/// src/worker/modules.rs lists it: one left out would silently not be part of the worker.
#[test]
fn every_file_of_a_python_module_folder_is_in_the_worker_table() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = std::fs::read_to_string(base.join("src/worker/modules.rs")).unwrap();
    let mut files = Vec::new();
    python_files(&base.join("python"), &mut files);
    let unlisted: Vec<String> = files
        .iter()
        .map(|path| path.strip_prefix(base.join("python")).unwrap())
        .filter(|rel| rel.components().count() > 1)
        .map(|rel| rel.to_string_lossy().into_owned())
        .filter(|rel| !table.contains(&format!("\"{rel}\"")))
        .collect();
    assert!(
        unlisted.is_empty(),
        "files of a module folder that src/worker/modules.rs does not load: {unlisted:#?}"
    );
}

fn python_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            python_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}
