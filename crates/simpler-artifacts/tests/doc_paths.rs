//! The docs cannot drift from the repository: every path they cite exists, and every constant
//! they quote with its value has that value in the code.
//!
//! # What is scanned
//!
//! `docs/*.md`, the root README, every README under `crates/`, and the doc comments (`//!`,
//! `///`) of every Rust file under `crates/`.
//!
//! # Path citations
//!
//! A citation is a run of path characters (letters, digits, `_ - . /`) that ends in one of
//! [`EXTENSIONS`], backticked or not (trailing sentence punctuation is not part of it). It is
//! checked when it contains a `/`, or when it is a bare `*.md` or `*.rs` name (documents and
//! sources are never run artifacts). Other bare names (`deps.json`, `FILE.json`) name files a
//! run writes or a user picks, not repository files.
//!
//! - A citation with a `/` must exist relative to the repository root, to the citing file's
//!   directory, or to the citing file's crate root (the nearest folder with a `Cargo.toml`).
//! - A bare `*.md` must be beside the citing file (a bare README cited by a module's doc
//!   comment is the one in the module's folder).
//! - A bare `*.rs` must be the name of a file somewhere under `crates/`: tree diagrams and
//!   tables name modules by their file name under a folder heading.
//!
//! Not checked, by rule:
//!
//! - `../shared/...`: the shared spec folder beside the repository (`../shared/DECISIONS.md`,
//!   `../shared/spec/dep-gen.md`), which is not part of it. Write outside references this way.
//! - absolute and home paths (`/tmp/...`, `~/...`): machine paths;
//! - templates: a citation containing `<`, `>`, `*`, `{`, `}`, `$` or `...`
//!   (`<output_prefix>/l2_swimlane_records.json`, `deps_viewer*.txt`);
//! - build output under `target/`;
//! - run artifacts: a path whose file name is one a run writes
//!   ([`simpler_artifacts::output_folder::RUN_FILES`], and the `deps_viewer*` views), such as
//!   `outputs/<run>/deps.json` or `path/to/scope_stats.jsonl`.
//!
//! # Quoted constants
//!
//! A constant quoted with its value, written `` `NAME` (VALUE) `` (for example
//! `` `DEFAULT_TASK_WINDOW` (16384) `` or `` `DEFAULT_HEAP` (256 MiB) ``), must name a `const`
//! defined in a `.rs` file under `crates/` whose value is VALUE. VALUE is an integer (digits,
//! with `,` or `_` separators, or `2^N`), optionally followed by a unit: `KiB`, `MiB`, `GiB`,
//! `TiB` multiply; `ns`, `µs`, `ms`, `s` are required for a `Duration` constant (compared as a
//! duration) and are just words for an integer one. Constant values the test understands:
//! integer literals, `A << B`, `A * B`, `T::MAX` and `Duration::from_{secs,millis,micros,nanos}`.
//! When several crates define the same name, the value must match one of them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use simpler_artifacts::output_folder::RUN_FILES;

/// File extensions that make a token a path citation.
const EXTENSIONS: &[&str] = &[
    "rs", "md", "json", "jsonl", "sh", "toml", "html", "py", "js", "css", "txt", "yml", "yaml",
];

/// The repository root (two levels above this crate).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// Every file under `dir` (recursively) whose name satisfies `keep`, skipping hidden folders.
fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let hidden = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if p.is_dir() && !hidden && p.file_name().is_some_and(|n| n != "target") {
            walk(&p, keep, out);
        } else if p.is_file() && keep(&p) {
            out.push(p);
        }
    }
}

fn has_ext(p: &Path, ext: &str) -> bool {
    p.extension().is_some_and(|e| e == ext)
}

/// One scanned file and the text that counts: the whole of a Markdown file, the doc-comment
/// lines of a Rust file (with their line numbers).
struct Source {
    path: PathBuf,
    lines: Vec<(usize, String)>,
}

fn sources(root: &Path) -> Vec<Source> {
    let mut md = Vec::new();
    walk(&root.join("docs"), &|p| has_ext(p, "md"), &mut md);
    md.push(root.join("README.md"));
    walk(
        &root.join("crates"),
        &|p| p.file_name().is_some_and(|n| n == "README.md"),
        &mut md,
    );
    let mut rs = Vec::new();
    walk(&root.join("crates"), &|p| has_ext(p, "rs"), &mut rs);

    let read = |p: &Path| fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut out: Vec<Source> = md
        .into_iter()
        .map(|path| {
            let lines = read(&path)
                .lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.to_string()))
                .collect();
            Source { path, lines }
        })
        .collect();
    for path in rs {
        let lines = read(&path)
            .lines()
            .enumerate()
            .filter_map(|(i, l)| {
                let t = l.trim_start();
                let doc = t
                    .strip_prefix("//!")
                    .or_else(|| t.strip_prefix("///").filter(|r| !r.starts_with('/')));
                doc.map(|d| (i + 1, d.to_string()))
            })
            .collect();
        out.push(Source { path, lines });
    }
    out
}

/// Characters a citation token is made of (templates' `<>*{}$` and `~` are included so that a
/// template is seen whole and skipped).
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-./<>*{}$~".contains(c)
}

/// The path citations of one line (see the module docs).
fn citations(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in line.split(|c: char| !is_token_char(c)) {
        let token = raw.trim_end_matches(['.', '-', '/']);
        let Some((stem, ext)) = token.rsplit_once('.') else {
            continue;
        };
        if stem.is_empty() || stem.ends_with('/') || !EXTENSIONS.contains(&ext) {
            continue;
        }
        let bare = !token.contains('/');
        if bare && !(ext == "md" || ext == "rs") {
            continue;
        }
        out.push(token.to_string());
    }
    out
}

/// Why a citation is not checked, if it is not.
fn skipped(token: &str) -> Option<&'static str> {
    let artifact = |name: &str| {
        RUN_FILES.iter().any(|f| f.rsplit('/').next() == Some(name)) || name.starts_with("deps_viewer")
    };
    if token.starts_with("../shared/") {
        Some("the shared spec folder outside the repository")
    } else if token.starts_with('/') || token.starts_with('~') {
        Some("a machine path")
    } else if token.contains(['<', '>', '*', '{', '}', '$']) || token.contains("...") {
        Some("a template")
    } else if token.starts_with("target/") {
        Some("build output")
    } else if token.contains('/') && artifact(token.rsplit('/').next().unwrap_or(token)) {
        Some("a run artifact")
    } else {
        None
    }
}

/// The nearest ancestor of `file` holding a `Cargo.toml`.
fn crate_root(file: &Path) -> Option<&Path> {
    file.ancestors().skip(1).find(|d| d.join("Cargo.toml").is_file())
}

/// Whether `token`, cited from `file`, names an existing file or folder (see the module docs).
fn resolves(root: &Path, file: &Path, token: &str, rs_names: &BTreeSet<String>) -> bool {
    let dir = file.parent().expect("a scanned file has a folder");
    if !token.contains('/') {
        return if token.ends_with(".rs") {
            rs_names.contains(token)
        } else {
            dir.join(token).exists()
        };
    }
    let mut bases = vec![root, dir];
    bases.extend(crate_root(file));
    bases.iter().any(|b| b.join(token).exists())
}

#[test]
fn every_cited_path_exists() {
    let root = repo_root();
    let sources = sources(&root);
    let rs_names: BTreeSet<String> = sources
        .iter()
        .filter(|s| has_ext(&s.path, "rs"))
        .filter_map(|s| s.path.file_name()?.to_str().map(str::to_string))
        .collect();
    let mut missing = Vec::new();
    let mut checked = 0;
    for s in &sources {
        for (n, line) in &s.lines {
            for token in citations(line) {
                if skipped(&token).is_some() {
                    continue;
                }
                checked += 1;
                if !resolves(&root, &s.path, &token, &rs_names) {
                    let rel = s.path.strip_prefix(&root).unwrap_or(&s.path);
                    missing.push(format!("{}:{n}: `{token}`", rel.display()));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} citations found: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "{} cited paths do not exist (rules: crates/simpler-artifacts/tests/doc_paths.rs):\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn citation_rules() {
    let c = |l: &str| citations(l);
    assert_eq!(
        c("see `crates/a/b.rs`, and docs/x.md."),
        ["crates/a/b.rs", "docs/x.md"]
    );
    assert_eq!(c("writes deps.json and run.json"), Vec::<String>::new());
    assert_eq!(c("every `.rs` file"), Vec::<String>::new());
    assert_eq!(c("(DECISIONS.md) and `slot.rs`"), ["DECISIONS.md", "slot.rs"]);
    assert_eq!(
        c("[link](../workloads/schema.json)"),
        ["../workloads/schema.json"]
    );
    assert_eq!(c("https://example.com/a/b.html"), ["//example.com/a/b.html"]);
    assert_eq!(skipped("//example.com/a/b.html"), Some("a machine path"));
    assert_eq!(
        skipped("../shared/DECISIONS.md"),
        Some("the shared spec folder outside the repository")
    );
    assert_eq!(skipped("<prefix>/deps.json"), Some("a template"));
    assert_eq!(skipped("outputs/x/deps.json"), Some("a run artifact"));
    assert_eq!(skipped("path/to/scope_stats.jsonl"), Some("a run artifact"));
    assert_eq!(skipped("workloads/x.json"), None);
    let root = repo_root();
    let here = root.join("docs/limits.md");
    let none = BTreeSet::new();
    assert!(resolves(
        &root,
        &here,
        "crates/simpler-artifacts/src/deps.rs",
        &none
    ));
    assert!(resolves(&root, &here, "../workloads/schema.json", &none));
    assert!(resolves(&root, &here, "architecture.md", &none));
    assert!(!resolves(&root, &here, "DECISIONS.md", &none));
    // A bare README.md is the one beside the citing file, not the repository's.
    let tensormap = root.join("crates/simpler-core/src/tensormap/mod.rs");
    assert!(!resolves(&root, &tensormap, "README.md", &none));
    assert!(resolves(
        &root,
        &root.join("crates/simpler-runtime/src/ring/mod.rs"),
        "README.md",
        &none
    ));
    assert!(!resolves(
        &root,
        &here,
        "crates/simpler-core/src/tensormap/README.md",
        &none
    ));
    let in_crate = root.join("crates/simpler-artifacts/src/deps/encode.rs");
    assert!(resolves(&root, &in_crate, "tests/encode.rs", &none));
}

// === quoted constants ===

/// A constant's value: an integer, or a duration in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    Int(u128),
    Nanos(u128),
}

/// Evaluates the right-hand side of a `const` (the forms listed in the module docs).
fn eval(expr: &str) -> Option<Value> {
    let e = expr.trim();
    let e = e.split(" as ").next().unwrap_or(e).trim();
    for (f, ns) in [
        ("Duration::from_secs(", 1_000_000_000),
        ("Duration::from_millis(", 1_000_000),
        ("Duration::from_micros(", 1_000),
        ("Duration::from_nanos(", 1),
    ] {
        if let Some(arg) = e.strip_prefix(f).and_then(|r| r.strip_suffix(')')) {
            return match eval(arg)? {
                Value::Int(v) => Some(Value::Nanos(v * ns)),
                Value::Nanos(_) => None,
            };
        }
    }
    for (op, f) in [
        ("<<", (|a, b| a << b) as fn(u128, u128) -> u128),
        ("*", |a, b| a * b),
    ] {
        if let Some((a, b)) = e.split_once(op) {
            return match (eval(a)?, eval(b)?) {
                (Value::Int(a), Value::Int(b)) => Some(Value::Int(f(a, b))),
                _ => None,
            };
        }
    }
    let max = |bits: u32| Some(Value::Int((1u128 << bits) - 1));
    match e {
        "u8::MAX" => max(8),
        "u16::MAX" => max(16),
        "u32::MAX" => max(32),
        "u64::MAX" => max(64),
        "i32::MAX" => max(31),
        "i64::MAX" => max(63),
        _ => {
            let digits = e
                .strip_suffix("u64")
                .or_else(|| e.strip_suffix("usize"))
                .unwrap_or(e);
            let digits: String = digits.chars().filter(|c| *c != '_').collect();
            digits.parse().ok().map(Value::Int)
        }
    }
}

/// Every `const NAME: T = EXPR;` under `crates/` (one line), by name.
fn constants(root: &Path) -> BTreeMap<String, Vec<(String, Option<Value>)>> {
    let mut files = Vec::new();
    walk(&root.join("crates"), &|p| has_ext(p, "rs"), &mut files);
    let mut out: BTreeMap<String, Vec<(String, Option<Value>)>> = BTreeMap::new();
    for f in files {
        let text = fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            let t = t.strip_prefix("pub ").unwrap_or(t);
            let t = if t.starts_with("pub(") {
                t.split_once(") ").map_or(t, |(_, r)| r)
            } else {
                t
            };
            let Some(rest) = t.strip_prefix("const ") else {
                continue;
            };
            let Some((name, rest)) = rest.split_once(':') else {
                continue;
            };
            let Some((_, expr)) = rest.split_once('=') else {
                continue;
            };
            let Some(expr) = expr.trim().strip_suffix(';') else {
                continue;
            };
            let rel = f.strip_prefix(root).unwrap_or(&f);
            out.entry(name.trim().to_string())
                .or_default()
                .push((format!("{}:{}", rel.display(), i + 1), eval(expr)));
        }
    }
    out
}

/// Parses a quoted value into its number and unit word: `16384`, `16,384 entries`, `2^30 s`,
/// `256 MiB`, `500 ms`.
fn parse_quoted(v: &str) -> Option<(u128, &str)> {
    let mut words = v.split_whitespace();
    let num = words.next()?;
    let n = match num.split_once('^') {
        Some((b, e)) => b.parse::<u128>().ok()?.checked_pow(e.parse().ok()?)?,
        None => num
            .chars()
            .filter(|c| *c != ',' && *c != '_')
            .collect::<String>()
            .parse()
            .ok()?,
    };
    Some((n, words.next().unwrap_or("").trim_end_matches([',', ';'])))
}

/// Whether the quoted value `text` states `actual` (units as in the module docs).
fn states(text: &str, actual: Value) -> bool {
    let Some((n, unit)) = parse_quoted(text) else {
        return false;
    };
    let nanos = match unit {
        "ns" => Some(1),
        "µs" | "us" => Some(1_000),
        "ms" => Some(1_000_000),
        "s" => Some(1_000_000_000),
        _ => None,
    };
    let binary = ["KiB", "MiB", "GiB", "TiB"].iter().position(|u| *u == unit);
    match actual {
        Value::Nanos(a) => nanos.is_some_and(|k| n.checked_mul(k) == Some(a)),
        Value::Int(a) => match binary {
            Some(k) => n.checked_shl(10 * (k as u32 + 1)) == Some(a),
            None => n == a,
        },
    }
}

/// The `` `NAME` (VALUE) `` quotes of one line: `(NAME, VALUE text)`.
fn quotes(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        let name = &after[..end];
        let tail = after[end + 1..].trim_start_matches(']');
        rest = &after[end + 1..];
        let is_const = name.len() > 1
            && name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        let Some(value) = tail.strip_prefix(" (") else {
            continue;
        };
        let Some(close) = value.find(')') else { continue };
        let value = &value[..close];
        if is_const && value.starts_with(|c: char| c.is_ascii_digit()) {
            out.push((name.to_string(), value.to_string()));
        }
    }
    out
}

#[test]
fn quoted_constants_match_the_code() {
    let root = repo_root();
    let consts = constants(&root);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for s in sources(&root) {
        let rel = s.path.strip_prefix(&root).unwrap_or(&s.path).to_path_buf();
        for (n, line) in &s.lines {
            for (name, text) in quotes(line) {
                checked += 1;
                let at = format!("{}:{n}: `{name}` ({text})", rel.display());
                let Some(defs) = consts.get(&name) else {
                    wrong.push(format!("{at}: no `const {name}` under crates/"));
                    continue;
                };
                if parse_quoted(&text).is_none() {
                    wrong.push(format!("{at}: cannot read the value"));
                    continue;
                }
                let matches = defs.iter().any(|(_, v)| v.is_some_and(|v| states(&text, v)));
                if !matches {
                    let found: Vec<String> = defs.iter().map(|(loc, v)| format!("{loc} = {v:?}")).collect();
                    wrong.push(format!("{at}: the code says {}", found.join(", ")));
                }
            }
        }
    }
    assert!(checked > 0, "no quoted constants found: is the scan broken?");
    assert!(
        wrong.is_empty(),
        "{} quoted constants do not match:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn constant_rules() {
    assert_eq!(eval("256 << 20"), Some(Value::Int(256 << 20)));
    assert_eq!(
        eval("Duration::from_millis(500)"),
        Some(Value::Nanos(500_000_000))
    );
    assert_eq!(eval("u32::MAX as u64"), Some(Value::Int(u128::from(u32::MAX))));
    assert_eq!(eval("20_000_000"), Some(Value::Int(20_000_000)));
    assert!(states("256 MiB", Value::Int(256 << 20)));
    assert!(!states("256", Value::Int(256 << 20)));
    assert!(states("2^30 s", Value::Int(1 << 30)));
    assert!(states("2 s, at most", Value::Nanos(2_000_000_000)));
    assert!(states("16,384 entries", Value::Int(16384)));
    assert!(states("500 ms", Value::Nanos(500_000_000)));
    assert!(!states("500", Value::Nanos(500_000_000)));
    assert!(!states("2 s", Value::Nanos(500_000_000)));
    assert_eq!(
        quotes("the window (`DEFAULT_TASK_WINDOW` (16384)) and [`DEFAULT_HEAP`] (256 MiB)"),
        [
            ("DEFAULT_TASK_WINDOW".to_string(), "16384".to_string()),
            ("DEFAULT_HEAP".to_string(), "256 MiB".to_string())
        ]
    );
    assert!(quotes("`INOUT` (read and written)").is_empty());
}
