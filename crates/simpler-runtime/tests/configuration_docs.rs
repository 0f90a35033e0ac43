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
