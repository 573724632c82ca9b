//! The layering stays as built: no import circle among the core crate's modules, and no
//! dependency between the automation (xtask) and this test crate (what both need is in
//! harness/).
//!
//! The module graph is read from core's source: a module depends on another when it names it
//! through `crate::` or `super::` (in a `use` or inline). Test modules (`tests.rs`, and
//! `#[cfg(test)]` modules) are left out: they are not part of the library. Two kinds of circle
//! fail: between two modules, and between two sibling folders of the tree (e.g. `capacity/`
//! importing `nodes.rs` while `nodes.rs` imports `capacity/`), at every level.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gangwarden_harness::repo_root;

/// A module's path below `crate` (`["rules", "gang"]`; the root is empty).
type Module = Vec<String>;

/// Every module of the crate whose `src/` is `dir`, with the modules it names.
fn module_graph(dir: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    collect_rs(dir, &mut files);
    let modules: BTreeMap<Module, String> = files
        .iter()
        .filter_map(|file| {
            let module = module_of(&file.strip_prefix(dir).expect("under src/").with_extension(""));
            let is_test = module.last().is_some_and(|m| m == "tests");
            (!is_test).then(|| (module, std::fs::read_to_string(file).expect("readable source")))
        })
        .collect();
    let known: BTreeSet<&Module> = modules.keys().collect();
    modules
        .iter()
        .map(|(module, source)| {
            let named = imported_paths(module, &without_test_modules(&code_only(source)))
                .into_iter()
                .filter_map(|path| (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|m| known.contains(m)))
                .filter(|target| target != module)
                .collect();
            (module.clone(), named)
        })
        .collect()
}

fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable folder").map(|e| e.expect("folder entry").path()) {
        if entry.is_dir() {
            collect_rs(&entry, out);
        } else if entry.extension().is_some_and(|e| e == "rs") {
            out.push(entry);
        }
    }
}

/// `rules/gang/mod` → `rules::gang`, `lib` → the root.
fn module_of(relative: &Path) -> Module {
    let mut parts: Module = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|last| last == "mod" || last == "lib") {
        parts.pop();
    }
    parts
}

/// The source with comments, string and character literals blanked (so that a path in a doc
/// comment or a message is not read as an import).
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        if rest.starts_with(&['/', '/']) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i..].starts_with(&['/', '*']) {
                    depth += 1;
                    i += 2;
                } else if chars[i..].starts_with(&['*', '/']) {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some((opening, hashes)) =
            raw_string_start(rest).filter(|_| i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
        {
            i += opening;
            let end: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            while i < chars.len() && !chars[i..].starts_with(&end) {
                i += 1;
            }
            i += end.len();
            out.push_str("\"\"");
        } else if chars[i] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if chars[i] == '\'' && rest.get(1) == Some(&'\\') {
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if chars[i] == '\'' && rest.get(2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// `r"`, `r#"`, `br##"`...: when a raw string starts here, how long its opening is and how
/// many `#`s close it.
fn raw_string_start(rest: &[char]) -> Option<(usize, usize)> {
    let b = usize::from(rest.first() == Some(&'b'));
    let after_r = rest[b..].strip_prefix(&['r'])?;
    let hashes = after_r.iter().take_while(|c| **c == '#').count();
    (after_r.get(hashes) == Some(&'"')).then_some((b + 1 + hashes + 1, hashes))
}

/// The code without `#[cfg(test)] mod name { ... }` blocks.
fn without_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let is_module = after.trim_start().starts_with("mod ");
        match after.find(['{', ';']) {
            Some(open) if is_module && after.as_bytes()[open] == b'{' => {
                let mut depth = 0;
                let mut end = after.len();
                for (i, c) in after.char_indices().skip_while(|(i, _)| *i < open) {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                rest = &after[end..];
            }
            _ => rest = after,
        }
    }
    out.push_str(rest);
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Other,
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
            continue;
        }
        if chars[i..].starts_with(&[':', ':']) {
            out.push(Token::Colons);
            i += 2;
            continue;
        }
        match c {
            '{' => out.push(Token::Open),
            '}' => out.push(Token::Close),
            ',' => out.push(Token::Comma),
            c if c.is_whitespace() => {}
            _ => out.push(Token::Other),
        }
        i += 1;
    }
    out
}

/// Every path `module`'s code names from `crate::` or `super::`, as a path from the root,
/// with `use` groups (`crate::a::{b, c::d}`) expanded.
fn imported_paths(module: &Module, code: &str) -> Vec<Vec<String>> {
    let tokens = tokens(code);
    let mut paths = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let start = match &tokens[i] {
            Token::Ident(word) if tokens.get(i + 1) == Some(&Token::Colons) => match word.as_str() {
                // A path's first segment only: `x::crate` is no path, `a::super` cannot be.
                "crate" | "super" if i == 0 || tokens[i - 1] != Token::Colons => Some(word.as_str()),
                _ => None,
            },
            _ => None,
        };
        let Some(start) = start else {
            i += 1;
            continue;
        };
        let mut base: Vec<String> = if start == "crate" { Vec::new() } else { module.clone() };
        if start == "super" {
            base.pop();
        }
        i += 2;
        while matches!(&tokens.get(i), Some(Token::Ident(w)) if w == "super")
            && tokens.get(i + 1) == Some(&Token::Colons)
        {
            base.pop();
            i += 2;
        }
        i = path_tree(&tokens, i, base, &mut paths);
    }
    paths
}

/// Reads one path tree from `tokens[i..]` below `prefix` into `out`; returns where it ends.
fn path_tree(tokens: &[Token], mut i: usize, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    loop {
        match tokens.get(i) {
            Some(Token::Ident(word)) => {
                if word != "self" {
                    prefix.push(word.clone());
                }
                i += 1;
                if tokens.get(i) == Some(&Token::Colons) {
                    i += 1;
                    continue;
                }
                if word == "as" || matches!(tokens.get(i), Some(Token::Ident(w)) if w == "as") {
                    // `x as y`: the alias names nothing new.
                    prefix.retain(|p| p != "as");
                    i += 2;
                }
                out.push(prefix);
                return i;
            }
            Some(Token::Open) => {
                i += 1;
                while i < tokens.len() && tokens[i] != Token::Close {
                    if tokens[i] == Token::Comma {
                        i += 1;
                        continue;
                    }
                    let before = i;
                    i = path_tree(tokens, i, prefix.clone(), out);
                    if i == before {
                        i += 1;
                    }
                }
                return i + 1;
            }
            _ => {
                // `crate::*` and the like: the prefix itself.
                out.push(prefix);
                return i;
            }
        }
    }
}

/// The circles of a graph (its strongly connected components of more than one node), each
/// sorted, found with Tarjan's algorithm.
fn circles<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct State<'g, N> {
        graph: &'g BTreeMap<N, BTreeSet<N>>,
        index: BTreeMap<&'g N, usize>,
        low: BTreeMap<&'g N, usize>,
        stack: Vec<&'g N>,
        on_stack: BTreeSet<&'g N>,
        found: Vec<Vec<N>>,
    }
    fn visit<'g, N: Ord + Clone>(s: &mut State<'g, N>, node: &'g N) {
        let n = s.index.len();
        s.index.insert(node, n);
        s.low.insert(node, n);
        s.stack.push(node);
        s.on_stack.insert(node);
        for next in s.graph.get(node).into_iter().flatten() {
            if !s.index.contains_key(next) {
                visit(s, next);
                let low = s.low[next].min(s.low[node]);
                s.low.insert(node, low);
            } else if s.on_stack.contains(next) {
                let low = s.index[next].min(s.low[node]);
                s.low.insert(node, low);
            }
        }
        if s.low[node] == s.index[node] {
            let mut component = Vec::new();
            while let Some(top) = s.stack.pop() {
                s.on_stack.remove(top);
                component.push(top.clone());
                if top == node {
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
    let nodes: BTreeSet<&N> = graph.keys().chain(graph.values().flatten()).collect();
    for node in nodes {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.found
}

fn shown(module: &[String]) -> String {
    if module.is_empty() { "crate".to_string() } else { module.join("::") }
}

/// Each circle, named with the imports that close it.
fn circle_report(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<String> {
    let mut report = Vec::new();
    // Between modules.
    for circle in circles(graph) {
        let edges: Vec<String> = circle
            .iter()
            .flat_map(|a| {
                graph[a].iter().filter(|b| circle.contains(b)).map(move |b| format!("{} -> {}", shown(a), shown(b)))
            })
            .collect();
        report.push(format!(
            "modules {}: {}",
            circle.iter().map(|m| shown(m)).collect::<Vec<_>>().join(", "),
            edges.join("; ")
        ));
    }
    // Between sibling subtrees, under every module: each import is charged to the children of
    // `parent` holding its two ends.
    let parents: BTreeSet<Module> = graph.keys().flat_map(|k| (0..k.len()).map(|n| k[..n].to_vec())).collect();
    for parent in &parents {
        let child_of =
            |m: &Module| (m.len() > parent.len() && m.starts_with(parent)).then(|| m[..=parent.len()].to_vec());
        let mut siblings: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        let mut why: BTreeMap<(Module, Module), Vec<String>> = BTreeMap::new();
        for (a, targets) in graph {
            let Some(from) = child_of(a) else { continue };
            for b in targets {
                let Some(to) = child_of(b) else { continue };
                if from != to {
                    siblings.entry(from.clone()).or_default().insert(to.clone());
                    why.entry((from.clone(), to)).or_default().push(format!("{} -> {}", shown(a), shown(b)));
                }
            }
        }
        // A circle of plain modules (no folder among them) is one of the module circles above.
        let is_folder = |m: &Module| graph.keys().any(|k| k.len() > m.len() && k.starts_with(m));
        for circle in circles(&siblings).into_iter().filter(|c| c.iter().any(is_folder)) {
            let edges: Vec<String> = why
                .iter()
                .filter(|((from, to), _)| circle.contains(from) && circle.contains(to))
                .flat_map(|(_, imports)| imports.iter().cloned())
                .collect();
            report.push(format!(
                "folders under {}: {}: {}",
                shown(parent),
                circle.iter().map(|m| shown(m)).collect::<Vec<_>>().join(", "),
                edges.join("; ")
            ));
        }
    }
    report
}

#[test]
fn core_has_no_import_circle() {
    let graph = module_graph(&repo_root().join("core/src"));
    // The reader found the crate: the rule sets and the modules they name.
    let rules = |m: &str| graph.get(&m.split("::").map(String::from).collect::<Module>()).expect(m);
    assert!(graph.len() > 40, "{} modules", graph.len());
    assert!(rules("rules::gang").contains(&vec!["verdict".to_string()]));
    assert!(rules("engine").contains(&vec!["rules".to_string(), "meta".to_string()]));
    assert_eq!(circle_report(&graph), Vec::<String>::new(), "import circles in core");
}

#[test]
fn circles_are_found_and_named() {
    let module = |m: &str| m.split("::").map(String::from).collect::<Module>();
    let graph_of = |sources: &[(&str, &str)]| -> BTreeMap<Module, BTreeSet<Module>> {
        let known: BTreeSet<Module> = sources.iter().map(|(m, _)| module(m)).collect();
        sources
            .iter()
            .map(|(m, source)| {
                let named = imported_paths(&module(m), &without_test_modules(&code_only(source)))
                    .into_iter()
                    .filter_map(|p| (0..=p.len()).rev().map(|n| p[..n].to_vec()).find(|k| known.contains(k)))
                    .filter(|t| *t != module(m))
                    .collect();
                (module(m), named)
            })
            .collect()
    };
    // Two modules naming each other: through `super::` inline and a `use` group.
    let graph = graph_of(&[
        ("a::x", "fn f() { super::y::g() }"),
        ("a::y", "use crate::{a::x::{self, f as h}, b};"),
        ("b", "// use crate::a::x; is a comment\nconst S: &str = \"crate::a::y\";"),
        ("a", ""),
    ]);
    assert_eq!(circle_report(&graph), ["modules a::x, a::y: a::x -> a::y; a::y -> a::x"]);
    // A folder and a sibling file naming each other: no two modules do, the folders do.
    let graph = graph_of(&[
        ("nodes", "use crate::capacity::Fit;"),
        ("capacity", ""),
        ("capacity::fit", "use crate::nodes::Node;\n#[cfg(test)]\nmod tests { use crate::capacity::fit; }"),
    ]);
    assert_eq!(circles(&graph), Vec::<Vec<Module>>::new());
    assert_eq!(
        circle_report(&graph),
        ["folders under crate: capacity, nodes: capacity::fit -> nodes; nodes -> capacity"]
    );
    // And a clean tree is clean.
    let graph = graph_of(&[("a", "use crate::b::c;"), ("b", ""), ("b::c", "use super::super::d::*;"), ("d", "")]);
    assert_eq!(graph[&module("b::c")], BTreeSet::from([module("d")]));
    assert_eq!(circle_report(&graph), Vec::<String>::new());
}

#[test]
fn automation_and_tests_do_not_depend_on_each_other() {
    let dependencies = |manifest: &str| -> Vec<String> {
        let text = std::fs::read_to_string(repo_root().join(manifest)).expect(manifest);
        let mut section = String::new();
        let mut names = Vec::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line.to_string();
            } else if section.contains("dependencies") && line.contains('=') && !line.starts_with('#') {
                // `name = "1"`, `name = { ... }`, `name.workspace = true`.
                names.push(line.split(['=', '.']).next().unwrap_or_default().trim().to_string());
            }
        }
        names
    };
    let xtask = dependencies("xtask/Cargo.toml");
    let tests = dependencies("e2e-tests/Cargo.toml");
    assert!(xtask.contains(&"gangwarden-harness".to_string()) && tests.contains(&"gangwarden-harness".to_string()));
    assert!(!xtask.iter().any(|d| d.contains("e2e-tests")), "xtask depends on the test crate: {xtask:?}");
    assert!(!tests.iter().any(|d| d == "xtask"), "the test crate depends on xtask: {tests:?}");
}
