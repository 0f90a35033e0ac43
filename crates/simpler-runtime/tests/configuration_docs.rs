//! The `runtime_env` table of `docs/configuration.md` is generated from the key declarations:
//! this test fails when the two differ, and `SIMPLER_BLESS=1` rewrites the table.

use std::path::PathBuf;

use simpler_runtime::config::runtime_env::markdown_table;

const BEGIN: &str = "<!-- BEGIN runtime_env keys";
const END: &str = "<!-- END runtime_env keys -->";

#[test]
fn the_runtime_env_table_in_the_docs_is_the_declared_one() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md");
    let text = std::fs::read_to_string(&path).expect("docs/configuration.md");
    let begin = text.find(BEGIN).expect("the BEGIN marker");
    let body_start = begin + text[begin..].find('\n').expect("a line after the marker") + 1;
    let end = text.find(END).expect("the END marker");
    let current = &text[body_start..end];
    let want = markdown_table();
    if std::env::var_os("SIMPLER_BLESS").is_some() {
        let new = format!("{}{want}{}", &text[..body_start], &text[end..]);
        std::fs::write(&path, new).expect("rewrite docs/configuration.md");
        return;
    }
    assert_eq!(
        current, want,
        "docs/configuration.md's runtime_env table is not the one RUNTIME_ENV_KEYS declares; \
         run `SIMPLER_BLESS=1 cargo test -p simpler-runtime --test configuration_docs`"
    );
}

/// The declarations and the enum agree: every key once, in enum order.
#[test]
fn every_key_is_declared_once_in_enum_order() {
    use simpler_runtime::config::{RingResource, RUNTIME_ENV_KEYS};
    assert_eq!(RingResource::ALL.len(), RingResource::COUNT);
    assert_eq!(RUNTIME_ENV_KEYS.len(), RingResource::COUNT);
    for (i, r) in RingResource::ALL.into_iter().enumerate() {
        assert_eq!(r as usize, i, "{r:?} out of order in RingResource::ALL");
        assert_eq!(r.key(), RUNTIME_ENV_KEYS[i].key);
        assert_eq!(RingResource::from_key(r.key()), Some(r));
        assert!(
            (RUNTIME_ENV_KEYS[i].valid)(RUNTIME_ENV_KEYS[i].default),
            "{}'s default breaks its rule",
            r.key()
        );
    }
}

/// The workload file schema (`workloads/schema.json`) lists exactly the declared keys under
/// `runtime_env` (editors validate files with it); `SIMPLER_BLESS=1` rewrites that list.
#[test]
fn the_workload_schema_lists_the_declared_keys() {
    use simpler_runtime::config::RUNTIME_ENV_KEYS;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../workloads/schema.json");
    let text = std::fs::read_to_string(&path).expect("workloads/schema.json");
    // The `properties` object of `runtime_env`, as text.
    let at = text.find("\"runtime_env\": {").expect("a runtime_env property");
    let open = at + text[at..].find("\"properties\": {").expect("its properties") + "\"properties\": ".len();
    let mut depth = 0;
    let close = open
        + text[open..]
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .expect("a closing brace")
            .0
        + 1;
    let indent = " ".repeat(6);
    let entries: Vec<String> = RUNTIME_ENV_KEYS
        .iter()
        .map(|d| {
            format!(
                "{indent}  \"{}\": {{\n{indent}    \"$ref\": \"#/$defs/env_value\"\n{indent}  }}",
                d.key
            )
        })
        .collect();
    let want = format!("{{\n{}\n{indent}}}", entries.join(",\n"));
    if std::env::var_os("SIMPLER_BLESS").is_some() {
        std::fs::write(&path, format!("{}{want}{}", &text[..open], &text[close..]))
            .expect("rewrite the schema");
        return;
    }
    assert_eq!(
        &text[open..close],
        want,
        "workloads/schema.json's runtime_env keys are not the declared ones; \
         run `SIMPLER_BLESS=1 cargo test -p simpler-runtime --test configuration_docs`"
    );
}
