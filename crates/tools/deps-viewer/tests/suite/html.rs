//! The HTML view end to end (needs Graphviz's `dot`: `apt-get install graphviz`).

use std::fs;
use std::path::{Path, PathBuf};

use simpler_deps_viewer::{run, Args, EdgeMode, Engine, Format};

use crate::util::testdata;

/// True when Graphviz is installed; in CI its absence is a failure, elsewhere a skip.
pub fn have_graphviz() -> bool {
    let found = std::process::Command::new("dot")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "Graphviz `dot` is missing in CI (apt-get install graphviz)"
        );
        eprintln!("skipped: Graphviz `dot` not installed");
    }
    found
}

/// Renders `case` (a testdata/text deps.json) to HTML in `dir` and returns the page path
/// (`-o` if the tweak set one, else the full-mode default name).
pub fn render(case: &str, dir: &Path, tweak: impl FnOnce(&mut Args)) -> PathBuf {
    let deps = dir.join("deps.json");
    fs::copy(testdata("text").join(format!("{case}.deps.json")), &deps).unwrap();
    let mut args = Args {
        deps_json: Some(deps),
        format: Format::Html,
        ..Args::default()
    };
    tweak(&mut args);
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| dir.join("deps_viewer.html"));
    run(args).unwrap();
    out
}

/// The embedded SVG (the legend has its own small SVGs).
fn svg_part(page: &str) -> &str {
    let start = page.find("<div id=\"stage\">").unwrap();
    &page[start..]
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
fn vector_example_page_embeds_svg_legend_and_data() {
    if !have_graphviz() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let page = fs::read_to_string(render("vector_example", tmp.path(), |_| {})).unwrap();
    assert!(page.contains("<title>deps.json — 5 nodes, 6 edges</title>"));
    // Five task nodes with their ids, six edges, all AIV (orange ellipses).
    for id in ["T0_0", "T1_0", "T1_1", "T1_2", "T1_3"] {
        assert!(page.contains(&format!("<g id=\"{id}\" class=\"node\">")), "{id}");
    }
    assert_eq!(count(&page, "class=\"node\""), 5);
    assert_eq!(count(&page, "class=\"edge\""), 6);
    assert_eq!(count(&page, "<ellipse fill=\"#ffb366\""), 5);
    // Labels: (ring, local) · f<kernel> ↓fanin ↑fanout.
    assert!(page.contains("(0, 0) · f0 ↓0 ↑3"));
    assert!(page.contains("(1, 2) · f2 ↓2 ↑1"));
    // Legend entries and the script data.
    for text in [
        "AIC (cube)",
        "AIV (vector)",
        "mix (AIC + AIV)",
        "alloc (no kernel)",
        "SPMD, N blocks",
    ] {
        assert!(page.contains(text), "legend lacks {text}");
    }
    assert!(page.contains("const depStats = {\"T0_0\":{\"label\":\"(0, 0)\",\"kind\":\"submit\",\"func\":\"func_id=[-1,0,-1]\",\"name_hint\":\"f0\",\"blocks\":1,\"fanin\":[],\"fanout\":[\"T1_0\",\"T1_1\",\"T1_3\"],\"marker\":\"\",\"pred_by_hint\":[],\"succ_by_hint\":[[\"f1\",2],[\"f0\",1]]}"));
    assert!(page.contains("const spmdBlocks = {};"));
    assert!(page.contains("<aside id=\"detail\" hidden"));
}

#[test]
fn shapes_follow_kinds_and_spmd_gets_a_red_border() {
    if !have_graphviz() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let page = fs::read_to_string(render("mixed", tmp.path(), |_| {})).unwrap();
    // [0,1,2] and [0,1,-1] are mix (diamonds), [-1,3,4] AIV, [7,-1,-1] AIC.
    assert_eq!(count(&page, "<polygon fill=\"#66cc99\""), 2);
    assert_eq!(count(&page, "<ellipse fill=\"#ffb366\""), 1);
    assert_eq!(count(&page, "fill=\"#66a3ff\""), 1);
    // The SPMD task (block_num 2) has a red border and a badge entry.
    assert!(page.contains("stroke=\"#c62828\""));
    assert!(page.contains("const spmdBlocks = {\"T0_2\":2};"));
    // The explicit-only pair 1 -> 2 is dashed.
    assert_eq!(count(&page, "stroke-dasharray=\"5,2\""), 1);

    let tmp = tempfile::tempdir().unwrap();
    let page = fs::read_to_string(render("alloc", tmp.path(), |_| {})).unwrap();
    assert!(page.contains("0 · alloc ↓0 ↑2"));
    assert!(page.contains("fill=\"#eaeaea\""));
}

#[test]
fn other_overlaps_are_labelled_and_edge_modes_hide_edges() {
    if !have_graphviz() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let page = fs::read_to_string(render("sources_and_overlaps", tmp.path(), |_| {})).unwrap();
    // (2,0)->(2,1) and (2,1)->(2,2) carry `other` tensor-map rows.
    assert_eq!(count(svg_part(&page), ">other</text>"), 2);
    assert_eq!(count(&page, "hidden-edge"), 0);

    let tmp = tempfile::tempdir().unwrap();
    render("sources_and_overlaps", tmp.path(), |a| {
        a.edge_mode = EdgeMode::Reduced
    });
    // Other edge modes have their own default name.
    assert!(!tmp.path().join("deps_viewer.html").exists());
    let page = fs::read_to_string(tmp.path().join("deps_viewer_reduced.html")).unwrap();
    // Reduced hides (2,0)->(2,2) and (2,0)->(2,3) but keeps them in the layout (Graphviz
    // writes the class `edge hidden-edge` with the dash escaped).
    assert_eq!(count(&page, "class=\"edge hidden&#45;edge\""), 2);
    assert_eq!(count(&page, "<g id=\"E1\" class=\"edge hidden&#45;edge\">"), 1);
    assert_eq!(count(&page, "<g id=\"E2\" class=\"edge hidden&#45;edge\">"), 1);
    assert_eq!(count(&page, "class=\"edge\""), 3);
    assert!(page.contains("edge mode: reduced"));
}

#[test]
fn tensor_info_draws_argument_rows_and_port_edges() {
    if !have_graphviz() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let page = fs::read_to_string(render("vector_example", tmp.path(), |a| {
        a.show_tensor_info = true;
        a.direction = Some(simpler_deps_viewer::Direction::Tb);
    }))
    .unwrap();
    // One edge per row; tensor rows with storage, shape, strides, start offset.
    assert_eq!(count(&page, "class=\"edge\""), 6);
    assert!(page.contains("arg0 INPUT T0:float32"));
    assert!(page.contains("storage: 16384 elems"));
    assert!(page.contains("shape: [16384]"));
    assert!(page.contains("strides: [1]"));
    assert!(page.contains("start_offset: 0 (elem)"));
    // Creator edges inferred the producer's OUTPUT slot (marked "?"), and its geometry: the
    // consumer's view of the whole fresh buffer (Graphviz draws each line as its own text).
    let inferred = page
        .find("arg2 OUTPUT ? T2:float32")
        .expect("inferred output row");
    let lines: Vec<&str> = page[inferred..]
        .split("</text>")
        .take(5)
        .map(|t| t.rsplit('>').next().unwrap_or(""))
        .collect();
    assert_eq!(
        lines,
        [
            "arg2 OUTPUT ? T2:float32",
            "storage: 16384 elems",
            "shape: [16384]",
            "strides: [1]",
            "start_offset: 0 (elem)"
        ]
    );
    assert!(page.contains("arg2 OUTPUT_EXISTING T6:float32"));
    // Edge titles name the ports: producer out_2 to consumer in_0 (TB: no compass side).
    assert!(page.contains("<title>T0_0:out_2&#45;&gt;T1_0:in_0</title>"));
    assert!(page.contains("<title>T0_0:out_2&#45;&gt;T1_3:in_1</title>"));
}

#[test]
fn explicit_edges_are_dashed_in_tensor_view() {
    if !have_graphviz() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let page = fs::read_to_string(render("dummy", tmp.path(), |a| a.show_tensor_info = true)).unwrap();
    // Four explicit rows (three into the barrier, one out of it).
    assert_eq!(count(&page, "stroke-dasharray=\"5,2\""), 4);
}

#[test]
fn focus_draws_only_the_neighbourhood() {
    if !have_graphviz() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    render("vector_example", tmp.path(), |a| {
        a.focus = Some("(1, 3)".into());
        a.depth = Some(1);
        a.engine = Some(Engine::Sfdp);
    });
    // The focus view has its own default name.
    assert!(!tmp.path().join("deps_viewer.html").exists());
    let page = fs::read_to_string(tmp.path().join("deps_viewer_focus_1_3.html")).unwrap();
    assert_eq!(count(&page, "class=\"node\""), 3);
    assert_eq!(count(&page, "class=\"edge\""), 2);
    assert!(page.contains("neighbourhood view"));
}

/// Writes a chain of `n` AIV tasks (each reading the previous one's output) to `path`.
fn write_chain(path: &Path, n: u64) {
    use simpler_artifacts::deps::{DepsWriter, Edge, Scope, Task};
    let mut w = DepsWriter::new(std::io::BufWriter::new(fs::File::create(path).unwrap())).unwrap();
    for i in 0..n {
        w.task(&Task {
            task_id: i,
            scope: Some(Scope::Auto),
            early_dispatch: None,
            kernel_ids: Some(vec![-1, 0, -1]),
            block_num: Some(1),
            args: vec![],
        })
        .unwrap();
    }
    for i in 1..n {
        w.edge(&Edge::explicit(i - 1, i)).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn graphs_past_the_browser_limit_are_refused_with_a_focus_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let deps = tmp.path().join("deps.json");
    let n = simpler_deps_viewer::html::BROWSER_MAX_NODES as u64 + 1;
    write_chain(&deps, n);
    let err = run(Args {
        deps_json: Some(deps.clone()),
        format: Format::Html,
        engine: Some(Engine::Sfdp),
        ..Args::default()
    })
    .unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        "the graph has 50001 tasks and 50000 edges, more than an HTML page can draw (limits: \
         50000 tasks, 150000 edges). Show the neighbourhood of one task with --focus TASK \
         --depth K (e.g. --focus 1,0 --depth 2), or use the text view (--format text)"
    );
    assert!(!tmp.path().join("deps_viewer.html").exists());

    // The neighbourhood of one task renders.
    if !have_graphviz() {
        return;
    }
    run(Args {
        deps_json: Some(deps),
        format: Format::Html,
        focus: Some("25000".into()),
        depth: Some(3),
        ..Args::default()
    })
    .unwrap();
    let page = fs::read_to_string(tmp.path().join("deps_viewer_focus_0_25000.html")).unwrap();
    assert_eq!(count(svg_part(&page), "class=\"node\""), 7);
    assert_eq!(count(svg_part(&page), "class=\"edge\""), 6);
    assert!(page.contains("const depStats = {\"T0_24997\":"));
}

#[test]
fn name_map_names_label_the_nodes() {
    if !have_graphviz() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    fs::copy(
        testdata("text").join("name_map.name_map.json"),
        tmp.path().join("name_map.json"),
    )
    .unwrap();
    let page = fs::read_to_string(render("name_map", tmp.path(), |_| {})).unwrap();
    assert!(page.contains("(0, 0) · kernel_add ↓0 ↑3"));
    assert!(page.contains("(1, 2) · kernel_mul ↓2 ↑1"));
    assert!(page.contains("\"name_hint\":\"kernel_add_scalar\""));
}

#[test]
fn explicit_name_map_must_exist() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("names.json");
    let err = run(Args {
        deps_json: Some(testdata("text").join("vector_example.deps.json")),
        output: Some(tmp.path().join("out.txt")),
        func_names: Some(missing.clone()),
        ..Args::default()
    })
    .unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!(
            "{}: cannot read name map: No such file or directory (os error 2)",
            missing.display()
        )
    );
}
