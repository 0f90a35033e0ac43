//! `name_map.json`: kernel id → kernel name, shared by the viewers and the trace converter.
//!
//! The original's shape is `{"level": 2, "orchestrator_name": "<name>" | null,
//! "callable_id_to_name": {"<id>": "<name>"}}`, which `simpler run` writes next to every run's
//! artifacts ([`NameMap::to_json`]); a flat `{"<id>": "<name>"}` object (what earlier versions
//! wrote) reads too. Keys are trimmed; entries whose key is not a kernel id (0 to 2^31 − 1) or
//! whose value is not a string are left out, and [`NameMap::load_checked`] names them (the tools
//! print that as a warning); two keys naming one id (`"1"` and `"01"`) are an error.

use std::collections::HashMap;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

/// File name `simpler run` writes.
pub const FILE_NAME: &str = "name_map.json";

/// Why a name map could not be loaded; the message names the file (and the JSON location).
#[derive(Debug)]
pub struct NameMapError(String);

impl std::fmt::Display for NameMapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NameMapError {}

/// At most this many ignored entries are named in [`NameMap::load_checked`]'s warning.
const LISTED_IGNORED: usize = 10;

/// The swimlane level the runtime's name maps declare (kernel ids are incore func ids).
pub const LEVEL: i64 = 2;

/// Kernel id → name, and the orchestrator's name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameMap {
    names: HashMap<i32, String>,
    orchestrator_name: Option<String>,
    level: Option<i64>,
}

impl NameMap {
    /// Builds a map from `(id, name)` pairs.
    pub fn from_pairs<I: IntoIterator<Item = (i32, String)>>(pairs: I) -> NameMap {
        NameMap {
            names: pairs.into_iter().collect(),
            ..NameMap::default()
        }
    }

    /// The same map naming its orchestrator (the label of the orchestrator's process in a trace).
    pub fn with_orchestrator_name(mut self, name: Option<String>) -> NameMap {
        self.orchestrator_name = name;
        self
    }

    /// The map in the original's shape, one line: `{"level":2,"orchestrator_name":..,
    /// "callable_id_to_name":{..}}` with ids in numeric order.
    pub fn to_json(&self) -> String {
        let quote = |s: &str| serde_json::to_string(s).expect("a string serializes");
        let mut ids: Vec<_> = self.names.iter().collect();
        ids.sort_unstable_by_key(|(id, _)| **id);
        let names: Vec<String> = ids
            .into_iter()
            .map(|(id, name)| format!("\"{id}\":{}", quote(name)))
            .collect();
        format!(
            "{{\"level\":{},\"orchestrator_name\":{},\"callable_id_to_name\":{{{}}}}}\n",
            self.level.unwrap_or(LEVEL),
            self.orchestrator_name
                .as_deref()
                .map_or_else(|| "null".to_string(), quote),
            names.join(",")
        )
    }

    /// Loads the map at `path`; entries it cannot use are left out in silence (see
    /// [`NameMap::load_checked`] for what they were).
    pub fn load(path: &Path) -> Result<NameMap, NameMapError> {
        Self::load_checked(path).map(|(map, _)| map)
    }

    /// Loads the map at `path`, and says in words which entries it left out: a key that is not
    /// a kernel id (`"abc"`, `"-1"`, past 2^31 − 1) or a name that is not a string (`5`,
    /// `null`). Their kernels then show as `func_<id>`, which a user should be told.
    pub fn load_checked(path: &Path) -> Result<(NameMap, Vec<String>), NameMapError> {
        // A named pipe (or a device) is refused before it is opened: its `open` blocked.
        let file = crate::input::open_regular(path)
            .map_err(|e: io::Error| NameMapError(format!("{}: cannot read name map: {e}", path.display())))?;
        let crate::unique_keys::UniqueKeys(value) =
            serde_json::from_reader(BufReader::new(file)).map_err(|e| {
                let text = e.to_string();
                let what = text.split(" at line ").next().unwrap_or(&text).to_string();
                NameMapError(format!(
                    "{}:{}:{}: invalid name map: {what}",
                    path.display(),
                    e.line(),
                    e.column()
                ))
            })?;
        let serde_json::Value::Object(mut top) = value else {
            return Err(NameMapError(format!(
                "{}: invalid name map: expected a JSON object",
                path.display()
            )));
        };
        let orchestrator_name = match top.get("orchestrator_name") {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        let level = top.get("level").and_then(serde_json::Value::as_i64);
        let map = match top.remove("callable_id_to_name") {
            Some(serde_json::Value::Object(inner)) => inner,
            _ => {
                // A flat map: the original's own keys are not entries.
                top.remove("level");
                top.remove("orchestrator_name");
                top
            }
        };
        // Two spellings of one id ("1", "01", " +1") would leave one of the names in silence.
        let mut names = HashMap::new();
        let mut spelled: HashMap<i32, String> = HashMap::new();
        let mut ignored: Vec<String> = Vec::new();
        for (k, v) in map {
            let id = k.trim().parse::<u32>().ok().and_then(|id| i32::try_from(id).ok());
            let (Some(id), serde_json::Value::String(name)) = (id, &v) else {
                let why = match (id, &v) {
                    (None, _) => "not a kernel id, 0 to 2147483647",
                    (Some(_), serde_json::Value::Null) => "null, not a name",
                    (Some(_), serde_json::Value::Bool(_)) => "a boolean, not a name",
                    (Some(_), serde_json::Value::Number(_)) => "a number, not a name",
                    (Some(_), serde_json::Value::Array(_)) => "an array, not a name",
                    (Some(_), _) => "an object, not a name",
                };
                ignored.push(format!("{k:?} ({why})"));
                continue;
            };
            let name = name.clone();
            if let Some(first) = spelled.insert(id, k.clone()) {
                return Err(NameMapError(format!(
                    "{}: invalid name map: keys {first:?} and {k:?} both name kernel {id}",
                    path.display()
                )));
            }
            names.insert(id, name);
        }
        let warnings = if ignored.is_empty() {
            Vec::new()
        } else {
            let n = ignored.len();
            if n > LISTED_IGNORED {
                ignored.truncate(LISTED_IGNORED);
                ignored.push(format!("and {} more", n - LISTED_IGNORED));
            }
            vec![format!(
                "{n} name map {} ignored, so {} kernels show as func_<id>: {}",
                if n == 1 { "entry is" } else { "entries are" },
                if n == 1 { "its" } else { "their" },
                ignored.join(", ")
            )]
        };
        let map = NameMap {
            names,
            orchestrator_name,
            level,
        };
        Ok((map, warnings))
    }

    /// The orchestrator's name, when the map names it.
    pub fn orchestrator_name(&self) -> Option<&str> {
        self.orchestrator_name.as_deref()
    }

    /// The swimlane level the map was written for, when it says.
    pub fn level(&self) -> Option<i64> {
        self.level
    }

    /// The name of kernel `id`, if mapped.
    pub fn get(&self, id: i32) -> Option<&str> {
        self.names.get(&id).map(String::as_str)
    }

    /// The name of kernel `id`, else `func_<id>`.
    pub fn name(&self, id: i32) -> String {
        self.get(id).map_or_else(|| format!("func_{id}"), str::to_string)
    }

    /// Number of mapped kernels.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Returns true if and only if no kernel is mapped.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Returns true if and only if `c` would move the cursor, colour a terminal or reorder text
/// when printed: a control character (newline, CR, ESC, NUL, ...), a line or paragraph
/// separator, or a bidirectional formatting mark.
fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// Appends `c` escaped: `\n`, `\r`, `\t`, `\0`, else `\u{<hex>}` (Rust's spelling).
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\0' => out.push_str("\\0"),
        c => {
            use std::fmt::Write as _;
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

/// `name` (a kernel's, or any text from an input file) as a line of text output may show it:
/// every control character, line or paragraph separator and bidi mark is escaped (`a\nb`, `\u{1b}[31m`), so a name cannot
/// add a line to a table, a heading, or a terminal's escape sequence. Other characters, a
/// backslash included, are left as they are (a name that spells `\n` itself reads the same).
pub fn printable(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.chars().any(unprintable) {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        if unprintable(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `name` as Markdown text, in a table cell or a line: [`printable`]'s escapes, then a
/// backslash before `\`, `|`, `` ` ``, `[`, `]` and `*` (so a name cannot end a cell, open a
/// code span, a link or emphasis), and `<`, `>`, `&` as HTML entities (a Markdown viewer shows
/// raw HTML). Underscores are left alone: inside a word they emphasise nothing, and every
/// kernel name has them.
pub fn markdown(name: &str) -> std::borrow::Cow<'_, str> {
    let special = |c: char| matches!(c, '\\' | '|' | '`' | '[' | ']' | '*' | '<' | '>' | '&');
    if !name.chars().any(|c| unprintable(c) || special(c)) {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        match c {
            c if unprintable(c) => {
                // The escape's own backslash, escaped for Markdown.
                out.push('\\');
                push_escaped(&mut out, c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if special(c) => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The name map of the run in `dir`: the `name_map*.json` its `run.json` lists, when it lists
/// one that is there; else the newest `name_map*.json` in `dir` (by modification time, then
/// name). Found by a review: another run's map copied into the folder was newer, and the run's
/// kernels were shown, and its views rewritten, under that run's names.
pub fn discover(dir: &Path) -> Option<PathBuf> {
    let is_map = |name: &str| name.starts_with("name_map") && name.ends_with(".json");
    if let Ok(Some(m)) = crate::manifest::RunManifest::read_if_present(&dir.join(crate::manifest::FILE_NAME))
    {
        let listed = m
            .files()
            .map(|f| dir.join(&f.name))
            .find(|p| p.parent() == Some(dir) && p.file_name().is_some_and(|n| is_map(&n.to_string_lossy())));
        if let Some(own) = listed.filter(|p| p.is_file()) {
            return Some(own);
        }
    }
    crate::find::newest_in(dir, "name_map", ".json")
}

/// `explicit` if given (an error if it cannot be read), else the newest `name_map*.json` in
/// `dir` (a warning on stderr if it cannot be read). Returns the map and the file it came from;
/// an empty map and `None` when there is none.
///
/// What the map leaves out ([`NameMap::load_checked`]) is a warning on stderr, naming the file.
pub fn resolve(explicit: Option<&Path>, dir: &Path) -> Result<(NameMap, Option<PathBuf>), NameMapError> {
    let load = |path: &Path| {
        let (map, warnings) = NameMap::load_checked(path)?;
        for w in warnings {
            crate::errln!("warning: {}: {w}", path.display());
        }
        Ok::<_, NameMapError>(map)
    };
    if let Some(path) = explicit {
        return Ok((load(path)?, Some(path.to_path_buf())));
    }
    let Some(found) = discover(dir) else {
        return Ok((NameMap::default(), None));
    };
    match load(&found) {
        Ok(names) => Ok((names, Some(found))),
        Err(e) => {
            crate::errln!("warning: ignoring name map: {e}");
            Ok((NameMap::default(), None))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self, File};

    #[test]
    fn the_written_map_has_the_originals_shape_and_reads_back() {
        let map = NameMap::from_pairs([(10, "a\"q".to_string()), (2, "kernel_add".to_string())])
            .with_orchestrator_name(Some("vector_example (size=8)".into()));
        let text = map.to_json();
        assert_eq!(
            text,
            "{\"level\":2,\"orchestrator_name\":\"vector_example (size=8)\",\
             \"callable_id_to_name\":{\"2\":\"kernel_add\",\"10\":\"a\\\"q\"}}\n"
        );
        let dir = std::env::temp_dir().join(format!("simpler-name-map-rt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("name_map.json");
        std::fs::write(&path, &text).unwrap();
        let back = NameMap::load(&path).unwrap();
        assert_eq!(back.get(10), Some("a\"q"));
        assert_eq!(back.orchestrator_name(), Some("vector_example (size=8)"));
        assert_eq!(back.level(), Some(2));
        let anonymous = NameMap::from_pairs([]).to_json();
        assert_eq!(
            anonymous,
            "{\"level\":2,\"orchestrator_name\":null,\"callable_id_to_name\":{}}\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn flat_and_nested_maps_load() {
        let dir = std::env::temp_dir().join(format!("simpler-name-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let flat = dir.join("flat.json");
        std::fs::write(
            &flat,
            r#"{"0": "kernel_add", " 1 ": "kernel_mul", "x": "y", "2": 3}"#,
        )
        .unwrap();
        let map = NameMap::load(&flat).unwrap();
        assert_eq!(
            (map.name(0), map.name(1), map.name(2), map.len()),
            ("kernel_add".into(), "kernel_mul".into(), "func_2".into(), 2)
        );
        let nested = dir.join("nested.json");
        std::fs::write(
            &nested,
            r#"{"callable_id_to_name": {"2": "kernel_sub"}, "0": "x"}"#,
        )
        .unwrap();
        let map = NameMap::load(&nested).unwrap();
        assert_eq!((map.get(2), map.get(0)), (Some("kernel_sub"), None));
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "{\"0\": }").unwrap();
        assert_eq!(
            NameMap::load(&bad).unwrap_err().to_string(),
            format!("{}:1:7: invalid name map: expected value", bad.display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn flat_and_nested_maps_fall_back_to_func_ids() {
        let dir = tempfile::tempdir().unwrap();
        let flat = dir.path().join("flat.json");
        fs::write(
            &flat,
            r#"{"0": "kernel_add", " 1 ": "kernel_mul", "x": "y", "2": 3}"#,
        )
        .unwrap();
        let map = NameMap::load(&flat).unwrap();
        assert_eq!(
            (map.name(0), map.name(1), map.name(2), map.len()),
            ("kernel_add".into(), "kernel_mul".into(), "func_2".into(), 2)
        );
        let nested = dir.path().join("nested.json");
        fs::write(
            &nested,
            r#"{"callable_id_to_name": {"2": "kernel_sub"}, "0": "x"}"#,
        )
        .unwrap();
        let map = NameMap::load(&nested).unwrap();
        assert_eq!((map.name(2), map.name(0)), ("kernel_sub".into(), "func_0".into()));
    }

    #[test]
    fn bad_maps_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.json");
        fs::write(&bad, "{\n  \"0\": kernel}").unwrap();
        let err = NameMap::load(&bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}:2:8: invalid name map: expected value", bad.display())
        );
        fs::write(&bad, "[1]").unwrap();
        let err = NameMap::load(&bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}: invalid name map: expected a JSON object", bad.display())
        );
        // Found by a review: two spellings of one id, one name kept in silence.
        fs::write(&bad, r#"{"callable_id_to_name": {"01": "a", "1": "b"}}"#).unwrap();
        let err = NameMap::load(&bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}: invalid name map: keys \"01\" and \"1\" both name kernel 1",
                bad.display()
            )
        );
    }

    #[test]
    fn explicit_beats_discovery_and_a_broken_sibling_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(resolve(None, dir.path()).unwrap(), (NameMap::default(), None));
        let sibling = dir.path().join("name_map_vec.json");
        fs::write(&sibling, r#"{"0": "a"}"#).unwrap();
        let (names, from) = resolve(None, dir.path()).unwrap();
        assert_eq!((names.name(0), from), ("a".into(), Some(sibling.clone())));
        let explicit = dir.path().join("mine.json");
        fs::write(&explicit, r#"{"0": "b"}"#).unwrap();
        let (names, _) = resolve(Some(&explicit), dir.path()).unwrap();
        assert_eq!(names.name(0), "b");
        fs::write(&sibling, "{").unwrap();
        assert_eq!(resolve(None, dir.path()).unwrap(), (NameMap::default(), None));
    }

    #[test]
    fn flat_and_nested_maps_count_only_string_entries() {
        let dir = tempfile::tempdir().unwrap();
        let flat = dir.path().join("flat.json");
        fs::write(&flat, r#"{"0": "kernel_add", "1": "kernel_mul", "x": 3}"#).unwrap();
        let map = NameMap::load(&flat).unwrap();
        assert_eq!(
            (map.get(0), map.get(1), map.get(2)),
            (Some("kernel_add"), Some("kernel_mul"), None)
        );
        assert_eq!(map.len(), 2);

        let nested = dir.path().join("nested.json");
        fs::write(
            &nested,
            r#"{"callable_id_to_name": {"2": "kernel_sub"}, "other": "x"}"#,
        )
        .unwrap();
        let map = NameMap::load(&nested).unwrap();
        assert_eq!((map.get(2), map.len()), (Some("kernel_sub"), 1));
    }

    #[test]
    fn malformed_map_names_file_and_location() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.json");
        fs::write(&bad, "{\n  \"0\": kernel}").unwrap();
        let err = NameMap::load(&bad).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "{}:2:8: invalid name map: expected value",
                bad.display()
            )),
            "{err}"
        );
        fs::write(&bad, "[1]").unwrap();
        let err = NameMap::load(&bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}: invalid name map: expected a JSON object", bad.display())
        );
    }

    /// Found by a review: entries of the wrong type and keys that are not kernel ids were
    /// dropped in silence, their kernels shown as `func_<id>`.
    #[test]
    fn ignored_entries_are_named_in_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("name_map.json");
        fs::write(
            &path,
            r#"{"level": 2, "orchestrator_name": "o", "0": 5, "1": null, "2": ["x"], "3": "ok",
                "abc": "a", "-1": "b", "18446744073709551616": "c", "4294967295": "d"}"#,
        )
        .unwrap();
        let (map, warnings) = NameMap::load_checked(&path).unwrap();
        assert_eq!((map.len(), map.get(3)), (1, Some("ok")));
        assert_eq!(
            warnings,
            [
                r#"7 name map entries are ignored, so their kernels show as func_<id>: "-1" (not a kernel id, 0 to 2147483647), "0" (a number, not a name), "1" (null, not a name), "18446744073709551616" (not a kernel id, 0 to 2147483647), "2" (an array, not a name), "4294967295" (not a kernel id, 0 to 2147483647), "abc" (not a kernel id, 0 to 2147483647)"#
            ]
        );
        // In the original's shape only the entries of callable_id_to_name are looked at.
        fs::write(
            &path,
            r#"{"level": 2, "other": 1, "callable_id_to_name": {"0": "a", "1": {"name": "b"}}}"#,
        )
        .unwrap();
        let (_, warnings) = NameMap::load_checked(&path).unwrap();
        assert_eq!(
            warnings,
            [r#"1 name map entry is ignored, so its kernels show as func_<id>: "1" (an object, not a name)"#]
        );
        fs::write(
            &path,
            r#"{"level": 2, "orchestrator_name": null, "callable_id_to_name": {"0": "a"}}"#,
        )
        .unwrap();
        assert_eq!(NameMap::load_checked(&path).unwrap().1, Vec::<String>::new());
        let many: Vec<String> = (0..12).map(|i| format!("\"k{i}\": \"x\"")).collect();
        fs::write(&path, format!("{{{}}}", many.join(","))).unwrap();
        let warning = &NameMap::load_checked(&path).unwrap().1[0];
        assert!(
            warning.starts_with("12 name map entries are ignored"),
            "{warning}"
        );
        assert!(warning.ends_with(", and 2 more"), "{warning}");
    }

    /// Found by a review: names with a newline, a `|`, a CR or an ANSI escape added rows,
    /// headings and terminal colours to the tools' tables and reports.
    #[test]
    fn names_are_escaped_for_text_and_markdown() {
        assert!(matches!(printable("kernel_add"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(
            printable("a\nb\r|c\u{1b}[31m\0\u{202e}\\n"),
            "a\\nb\\r|c\\u{1b}[31m\\0\\u{202e}\\n"
        );
        assert!(matches!(markdown("kernel_add_0"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(
            markdown("x | y\n## h <img src=x onerror=alert(1)> & `c` [l](u) *e* \\|"),
            "x \\| y\\\\n## h &lt;img src=x onerror=alert(1)&gt; &amp; \\`c\\` \\[l\\](u) \\*e\\* \\\\\\|"
        );
    }

    #[test]
    fn discovery_picks_the_runs_own_map_else_the_newest_sibling() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(discover(dir.path()), None);
        let old = dir.path().join("name_map_a.json");
        let new = dir.path().join("name_map_b.json");
        fs::write(&old, "{}").unwrap();
        fs::write(&new, "{}").unwrap();
        fs::write(dir.path().join("other.json"), "{}").unwrap();
        let t = std::time::SystemTime::now();
        File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(t + std::time::Duration::from_secs(60))
            .unwrap();
        File::options()
            .write(true)
            .open(&new)
            .unwrap()
            .set_modified(t)
            .unwrap();
        assert_eq!(discover(dir.path()), Some(old.clone()));
        // The map the folder's run lists wins over a newer one.
        let mut m = crate::manifest::RunManifest {
            schema: crate::manifest::SCHEMA,
            run_id: "r".into(),
            runtime: "tmr".into(),
            subject: "x".into(),
            params: Default::default(),
            started: "2026-12-07T00:00:00.000Z".into(),
            ended: None,
            status: crate::manifest::RunStatus::Completed,
            fatal: None,
            diagnostics: vec![crate::manifest::DiagnosticEntry {
                name: "name_map".into(),
                outcome: crate::manifest::Outcome::Written,
                reason: None,
                files: vec![crate::manifest::FileEntry {
                    name: "name_map_b.json".into(),
                    bytes: 2,
                }],
            }],
            views: vec![],
            failed_check: None,
            incomplete_input: None,
        };
        m.write(dir.path()).unwrap();
        assert_eq!(discover(dir.path()), Some(new.clone()));
        // Listed but gone: the newest again.
        fs::remove_file(&new).unwrap();
        assert_eq!(discover(dir.path()), Some(old.clone()));
        m.diagnostics.clear();
        m.write(dir.path()).unwrap();
        assert_eq!(discover(dir.path()), Some(old));
    }
}
