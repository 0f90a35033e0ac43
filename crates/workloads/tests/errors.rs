//! One test per error class: the message names the JSON path and the rule, exactly.

use simpler_workloads::{load_str, WorkloadError};

/// A two-tensor workload around `body` (a JSON array).
fn with_body(body: &str) -> String {
    format!(
        r#"{{ "constants": {{ "N": 8 }},
  "tensors": [ {{ "name": "a", "shape": [8, 16] }}, {{ "name": "y", "shape": [8, 16] }} ],
  "body": {body} }}"#
    )
}

fn error(text: &str) -> WorkloadError {
    load_str(text, "t").expect_err("the workload must be rejected")
}

fn assert_error(text: &str, path: &str, rule: &str) {
    let e = error(text);
    assert_eq!((e.path(), e.rule()), (path, rule), "full message: {e}");
    assert_eq!(e.to_string(), format!("{path}: {rule}"));
}

/// Found by a review: a one-key object (a statement, a fill, a typed scalar) given a second
/// key got serde's "expected value at line 1 column 76", which named neither key. The
/// message now names the second key and where it starts; other syntax errors keep theirs.
#[test]
fn a_one_key_object_with_a_second_key_names_it() {
    assert_error(
        &with_body(r#"[ { "submit": { "kernel": "noop", "args": [ { "inout": "a" } ] }, "dummy": {} } ]"#),
        "body[0]",
        "this object takes exactly one key, but a second one, `dummy`, follows at line 3 column 77",
    );
    assert_error(
        r#"{ "tensors": [ { "name": "X", "shape": [4], "fill": { "constant": 1, "iota": {} } } ], "body": [] }"#,
        "tensors[0].fill",
        "this object takes exactly one key, but a second one, `iota`, follows at line 1 column 70",
    );
    assert_error(
        r#"{ "tensors": [ { "name": "X", "shape": [true, "y"] } ], "body": [] }"#,
        "tensors[0].shape[0]",
        "invalid type: boolean `true`, expected an integer or an integer expression string such as \"i*64\" at line 1 column 44",
    );
    assert_error(
        r#"{ "tensors": [ { "name": "X", "shape": [4, , "y"] } ], "body": [] }"#,
        "tensors[0].shape[1]",
        "expected value at line 1 column 44",
    );
    // Found by a review: an unquoted name before another key is not a one-key object.
    let e = error(&with_body(
        r#"[ { "submit": { "kernel": "noop", "args": [ { "input": a, "view": { "shape": [2] } } ] } } ]"#,
    ));
    assert!(e.rule().starts_with("expected value at line 3"), "{e}");
    // Pretty-printed, the second key on a line of its own; a key cut and escaped.
    assert_error(
        &with_body("[\n  {\n    \"dummy\": {},\n    \"submit\": {}\n  }\n]"),
        "body[0]",
        "this object takes exactly one key, but a second one, `submit`, follows at line 6 column 5",
    );
    let long = format!("k\u{1b}{}", "x".repeat(100));
    let e = error(&with_body(&format!(r#"[ {{ "dummy": {{}}, "{long}": 1 }} ]"#)));
    assert!(
        e.rule().starts_with(&format!(
            "this object takes exactly one key, but a second one, `k\\u{{1b}}{}…`, follows",
            "x".repeat(57)
        )),
        "{e}"
    );
}

#[test]
fn unknown_label() {
    assert_error(
        &with_body(
            r#"[ { "submit": { "label": "t0", "kernel": "noop" } },
                { "submit": { "kernel": "noop", "deps": [ "t0", "t9" ] } } ]"#,
        ),
        "body[1].submit.deps[1]",
        "unknown label `t9`: no earlier task has this label",
    );
    // A label defined later is not an earlier task either; a loop shows its iteration.
    let e = error(&with_body(
        r#"[ { "repeat": { "var": "i", "count": 3, "body": [
               { "submit": { "label": "t{i}", "kernel": "noop", "deps_wait": [ "t{i+1}" ] } } ] } } ]"#,
    ));
    assert_eq!(
        e.to_string(),
        "body[0].repeat.body[0].submit.deps_wait[0]: unknown label `t1`: no earlier task has this label (at i=0)"
    );
}

/// Templates are parsed when the file is read, but a broken one is reported where it is used,
/// with that use's path; of two problems, the first met left to right is named.
#[test]
fn bad_templates_are_reported_at_their_use() {
    assert_error(
        &with_body(r#"[ { "submit": { "label": "t{i", "kernel": "noop" } } ]"#),
        "body[0].submit.label",
        "bad template `t{i`: `{` without `}`",
    );
    // An unknown name before a syntax error: the name is what the expansion meets first.
    assert_error(
        &with_body(r#"[ { "submit": { "label": "t{j}_{N+}", "kernel": "noop" } } ]"#),
        "body[0].submit.label",
        "bad expression `j`: unknown name `j`; names in scope: N",
    );
    assert_error(
        &with_body(r#"[ { "submit": { "kernel": "noop", "args": [ { "inout": "a{N+}" } ] } } ]"#),
        "body[0].submit.args[0].inout",
        "bad expression `N+`: unexpected end at column 3",
    );
    // A template that is never used is not an error: a loop of no iterations.
    load_str(
        &with_body(
            r#"[ { "repeat": { "var": "i", "count": 0, "body": [
                   { "let": { "name": "v{i}}", "tensor": "a" } } ] } } ]"#,
        ),
        "t",
    )
    .expect("an unused template is not expanded");
    // A dependency is a label or a range; a mistake inside a range is named by its field (both
    // read "data did not match any variant of untagged enum DepRef" before).
    let e = error(&with_body(
        r#"[ { "submit": { "kernel": "noop", "deps": [ 7 ] } } ]"#,
    ));
    assert!(
        e.to_string().starts_with(
            "body[0].submit.deps[0]: invalid type: integer `7`, expected a label (a string such as \"t{i-1}\") or a range of labels"
        ),
        "{e}"
    );
    let e = error(&with_body(
        r#"[ { "submit": { "kernel": "noop", "deps": [ { "each": "j", "count": 2, "lable": "x" } ] } } ]"#,
    ));
    assert!(
        e.to_string()
            .starts_with("body[0].submit.deps[0].lable: unknown field `lable`"),
        "{e}"
    );
    // The other either-or fields say what they accept (each read "data did not match any
    // variant of untagged enum ..." before).
    for (task, path, expected) in [
        (
            r#""scalars": [ "x" ]"#,
            "scalars[0]",
            "expected a number, or a typed scalar",
        ),
        (
            r#""dump": "x""#,
            "dump",
            "expected `true` (every argument), `false` (none) or a list",
        ),
        (
            r#""args": [ { "inout": "a", "slice": 3 } ]"#,
            "args[0].slice",
            "expected a slice {",
        ),
    ] {
        let e = error(&with_body(&format!(
            r#"[ {{ "submit": {{ "kernel": "noop", {task} }} }} ]"#
        )));
        assert!(
            e.to_string()
                .starts_with(&format!("body[0].submit.{path}: {expected}")),
            "{e}"
        );
    }
    // A label that is not a string says what a label is.
    let e = error(&with_body(
        r#"[ { "submit": { "label": 7, "kernel": "noop" } } ]"#,
    ));
    assert!(e.to_string().contains("expected a string"), "{e}");
}

#[test]
fn tensor_used_after_its_scope() {
    assert_error(
        &with_body(
            r#"[ { "scope": { "body": [
                   { "submit": { "kernel": "copy", "args": [ { "input": "a" }, { "output": "c", "shape": [8, 16] } ] } } ] } },
                 { "submit": { "kernel": "copy", "args": [ { "input": "c" }, { "output_existing": "y" } ] } } ]"#,
        ),
        "body[1].submit.args[0].input",
        "tensor `c` is used after its scope: it was bound inside the scope at body[0], which has ended",
    );
    assert_error(
        &with_body(r#"[ { "submit": { "kernel": "noop", "args": [ { "inout": "zz" } ] } } ]"#),
        "body[0].submit.args[0].inout",
        "unknown tensor `zz`; tensors in scope: a, y",
    );
}

/// Found by a review: a library kernel's arguments whose shapes it cannot take (`add` into a
/// 10-element output, a `matmul` whose inner dimensions differ) passed the load and failed
/// the run with a kernel error that named no place in the file. They are refused at the
/// submit now, with the kernel's signature and both sizes.
#[test]
fn shapes_a_library_kernel_cannot_take_are_refused_at_the_submit() {
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "add", "args": [ { "input": "a" }, { "input": "y" },
                   { "output": "c", "shape": [10] } ] } } ]"#,
        ),
        "body[0].submit.args",
        "kernel `add` takes [IN a, IN b, OUT c]: input a has 128 elements but the output has 10",
    );
    assert_error(
        &with_body(
            r#"[ { "scope": { "body": [ { "submit": { "kernel": "copy", "args": [ { "input": "a", "view": { "shape": [8, 8] } },
                   { "output_existing": "y" } ] } } ] } } ]"#,
        ),
        "body[0].scope.body[0].submit.args",
        "kernel `copy` takes [IN x, OUT y]: input x has 64 elements but the output has 128",
    );
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "matmul", "args": [ { "input": "a" }, { "input": "y" },
                   { "output": "c", "shape": [8, 16] } ] } } ]"#,
        ),
        "body[0].submit.args",
        "kernel `matmul` takes [IN a (MxK), IN b (KxN), OUT or INOUT c (MxN)]: shapes 8x16 · 8x16 -> 8x16 do not agree",
    );
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernels": { "aiv0": "noop", "aiv1": "copy" }, "args": [ { "input": "a" },
                   { "output": "c", "shape": [4] } ] } } ]"#,
        ),
        "body[0].submit.args",
        "kernel `copy` takes [IN x, OUT y]: input x has 128 elements but the output has 4",
    );
    // Found by a review: an output's element count past u64 overflowed the check.
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "copy", "args": [ { "input": "a" },
                   { "output": "c", "shape": [65536, 65536, 65536, 65536, 2] } ] } } ]"#,
        ),
        "body[0].submit.args",
        "kernel `copy` takes [IN x, OUT y]: input x has 128 elements but the output has 2^64 or more",
    );
    // What each kernel can take still loads: a same-count reshape, an INOUT accumulator.
    load_str(
        &with_body(
            r#"[ { "submit": { "kernel": "copy", "args": [ { "input": "a" }, { "output": "c", "shape": [128] } ] } },
                 { "submit": { "kernel": "matmul", "args": [ { "input": "a" }, { "input": "y", "reshape": [16, 8] },
                   { "output": "d", "shape": [8, 8] } ] } } ]"#,
        ),
        "t",
    )
    .unwrap();
}

#[test]
fn view_outside_its_buffer() {
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "noop", "args": [
                   { "input": "a", "view": { "shape": [2, 4], "offsets": ["N-1", 0] } } ] } } ]"#,
        ),
        "body[0].submit.args[0].view.offsets",
        "view outside its buffer: dimension 0: index range ends at 9, past the parent's extent 8",
    );
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "noop", "args": [
                   { "input": "a", "view": { "shape": [2, 4], "strides": [16, 1], "start_offset": 120 } } ] } } ]"#,
        ),
        "body[0].submit.args[0].view",
        "view outside its buffer: view reaches byte 560, past the end of its 512-byte buffer",
    );
    assert_error(
        &with_body(
            r#"[ { "let": { "name": "r", "tensor": "a", "slice": { "dim": 1, "start": 4, "end": 17, "step": 2 } } } ]"#,
        ),
        "body[0].let.slice",
        "view outside its buffer: dimension 1: index range ends at 17, past the parent's extent 16",
    );
}

/// Views whose extent or element count pass `u64` (found by a review: the sums wrapped, so
/// a `fill` output 8 GiB past its 512-byte buffer got through to the kernel, and a check of
/// 2^80 elements counted 0 of them and passed).
#[test]
fn a_view_past_u64_is_refused_not_wrapped() {
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "fill", "args": [ { "output_existing": "y", "view": {
                   "shape": [2147483649, 2147483649, 2147483649, 2147483649],
                   "strides": [2147483648, 2147483648, 2147483648, 2147483648] } } ], "scalars": [1.0] } } ]"#,
        ),
        "body[0].submit.args[0].view",
        "view outside its buffer: view reaches byte 73786976294838206468, past the end of its 512-byte buffer",
    );
    let checked = r#"{ "tensors": [ { "name": "x", "shape": [327676], "fill": { "constant": 5.0 } } ],
  "body": [],
  "checks": [ { "tensor": "x", "expect": { "constant": 123.0 },
                "view": { "shape": [65536, 65536, 65536, 65536, 65536], "strides": [1, 1, 1, 1, 1] } } ] }"#;
    assert_error(
        checked,
        "checks[0].view",
        "bad view: the view has 2^64 elements or more (the product of its shape)",
    );
    // Fewer than 2^64 but more than the tensor holds: the check would read 2^63 values.
    assert_error(
        &checked
            .replace("65536, 65536, 65536, 65536, 65536", "65536, 65536, 65536, 32768")
            .replace("1, 1, 1, 1, 1", "1, 1, 1, 1"),
        "checks[0].view",
        "a check reads at most the 327676 elements of `x`, this view has 9223372036854775808",
    );
}

/// Found by a review: a loop variable past `i64::MAX` wrapped to a negative value (a `repeat`
/// from i64::MAX of 2), and loops that submit nothing ran without end (two nested `repeat`s
/// of 20M with an empty body) since only tasks were counted.
#[test]
fn loops_neither_wrap_nor_run_without_end() {
    assert_error(
        &with_body(
            r#"[ { "repeat": { "var": "i", "from": 9223372036854775807, "count": 2, "body": [
                   { "dummy": { "label": "t{i}" } } ] } } ]"#,
        ),
        "body[0].repeat.from",
        "2 iterations from 9223372036854775807 pass the largest integer, 9223372036854775807",
    );
    assert_error(
        &with_body(
            r#"[ { "dummy": { "label": "t0" } },
                 { "dummy": { "deps": [ { "each": "j", "from": 9223372036854775806, "count": 3, "label": "t0" } ] } } ]"#,
        ),
        "body[1].dummy.deps[0].from",
        "3 iterations from 9223372036854775806 pass the largest integer, 9223372036854775807",
    );
    let e = error(&with_body(
        r#"[ { "repeat": { "var": "i", "count": 20000000, "body": [
               { "repeat": { "var": "j", "count": 20000000, "body": [] } } ] } } ]"#,
    ));
    assert_eq!(
        e.to_string(),
        "body[0].repeat.body[0].repeat: the workload expands through more than 200000000 statements, \
         loop iterations and dependency-range entries (at i=9, j=19999979)"
    );
}

#[test]
fn kernel_on_the_wrong_core_type() {
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "add", "core": "aic", "args": [ { "input": "a" }, { "input": "a" }, { "output_existing": "y" } ] } } ]"#,
        ),
        "body[0].submit.core",
        "kernel `add` (func id 0) runs on aiv cores but was submitted to an aic core",
    );
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernels": { "aic": "noop_aic", "aiv1": "matmul" }, "args": [ { "input": "a" }, { "input": "a" }, { "output_existing": "y" } ] } } ]"#,
        ),
        "body[0].submit.kernels.aiv1",
        "kernel `matmul` (func id 5) runs on aic cores but was submitted to an aiv subslot",
    );
}

#[test]
fn too_many_args() {
    let args = vec![r#"{ "input": "a" }"#; 33].join(", ");
    assert_error(
        &with_body(&format!(
            r#"[ {{ "submit": {{ "kernel": "noop", "args": [ {args} ] }} }} ]"#
        )),
        "body[0].submit.args",
        "too many args: 33 tensor arguments; a task takes at most 32",
    );
    let scalars = vec!["1"; 17].join(", ");
    assert_error(
        &with_body(&format!(r#"[ {{ "dummy": {{ "scalars": [ {scalars} ] }} }} ]"#)),
        "body[0].dummy.scalars",
        "too many args: 17 scalar arguments; a task takes at most 16",
    );
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "add", "args": [ { "input": "a" }, { "output_existing": "y" } ] } } ]"#,
        ),
        "body[0].submit.args",
        "kernel `add` takes [IN a, IN b, OUT c]; got 2 tensor and 0 scalar arguments",
    );
}

#[test]
fn bad_dtype() {
    assert_error(
        r#"{ "tensors": [ { "name": "a", "dtype": "FLOAT8", "shape": [4] } ], "body": [] }"#,
        "tensors[0].dtype",
        "bad dtype `FLOAT8`; valid dtypes: FLOAT32, FLOAT16, BFLOAT16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, BOOL",
    );
    assert_error(
        &with_body(r#"[ { "submit": { "kernel": "copy", "args": [ { "input": "a" }, { "output": "c", "shape": [4], "dtype": "f32" } ] } } ]"#),
        "body[0].submit.args[1].dtype",
        "bad dtype `f32`; valid dtypes: FLOAT32, FLOAT16, BFLOAT16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, BOOL",
    );
}

#[test]
fn bad_expression() {
    assert_error(
        &with_body(r#"[ { "repeat": { "var": "i", "count": "N*", "body": [] } } ]"#),
        "body[0].repeat.count",
        "bad expression `N*`: unexpected end at column 3",
    );
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "noop", "args": [ { "input": "a", "view": { "shape": [1, "j"] } } ] } } ]"#,
        ),
        "body[0].submit.args[0].view.shape[1]",
        "bad expression `j`: unknown name `j`; names in scope: N",
    );
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "noop", "args": [ { "input": "a", "view": { "shape": [1, "N-9"] } } ] } } ]"#,
        ),
        "body[0].submit.args[0].view.shape[1]",
        "value -1 is out of range 0..=4294967295",
    );
}

#[test]
fn json_shape_errors_name_the_path() {
    assert_error(
        &with_body(r#"[ { "submit": { "kernel": "noop", "args": [ { "input": "a", "view": { "shape": [1, true] } } ] } } ]"#),
        "body[0].submit.args[0].view.shape[1]",
        "invalid type: boolean `true`, expected an integer or an integer expression string such as \"i*64\" at line 3 column 97",
    );
    let e = error(&with_body(
        r#"[ { "submit": { "kernel": "noop", "argz": [] } } ]"#,
    ));
    assert_eq!(e.path(), "body[0].submit.argz");
    assert!(
        e.rule()
            .starts_with("unknown field `argz`, expected one of `label`, `kernel`"),
        "{e}"
    );
    let e = error(&with_body(r#"[ { "sumbit": {} } ]"#));
    assert_eq!(e.path(), "body[0]");
    assert!(
        e.rule()
            .starts_with("unknown variant `sumbit`, expected one of `scope`, `submit`"),
        "{e}"
    );
    let e = error("{ \"body\": [ }");
    assert_eq!(e.path(), "body[0]");
    assert!(e.rule().starts_with("expected value at line 1 column 13"), "{e}");
}

#[test]
fn scope_and_kernel_rules() {
    assert_error(
        &with_body(r#"[ { "scope": { "mode": "manual", "body": [ { "scope": { "body": [] } } ] } } ]"#),
        "body[0].scope.body[0].scope.mode",
        "an auto scope cannot be nested inside a manual scope",
    );
    assert_error(
        &with_body(r#"[ { "submit": { "kernel": "softmax" } } ]"#),
        "body[0].submit.kernel",
        "unknown kernel `softmax`; library kernels: add, add_scalar, mul, copy, fill, matmul, noop, noop_aic, busy, busy_aic",
    );
    assert_error(
        &with_body(r#"[ { "dummy": { "kernel": "noop" } } ]"#),
        "body[0].dummy",
        "a dummy task has no kernel (`kernel`, `kernels`, `core`)",
    );
    assert_error(
        &with_body(r#"[ { "submit": { "kernel": "noop", "args": [ { "input": "a", "output": "b" } ] } } ]"#),
        "body[0].submit.args[0]",
        "an argument needs exactly one of input, output, inout, output_existing, no_dep (got 2)",
    );
    assert_error(
        r#"{ "runtime": "xyz", "body": [] }"#,
        "runtime",
        "unknown runtime `xyz`; valid: tmr, hbg",
    );
    assert_error(
        r#"{ "runtime_env": { "ring_task_window": 1000 }, "body": [] }"#,
        "runtime_env.ring_task_window",
        "runtime_env ring_task_window: 1000 is invalid; ring_task_window must be a power of two in [4, 2147483647]",
    );
    assert_error(
        &with_body("[]").replace(
            "\"body\": []",
            "\"body\": [], \"checks\": [ { \"tensor\": \"a\", \"expect\": { \"values\": [1, 2] } } ]",
        ),
        "checks[0].expect.values",
        "2 values for a view of 128 elements",
    );
}

#[test]
fn the_file_name_leads_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.json");
    std::fs::write(
        &p,
        with_body(r#"[ { "submit": { "kernel": "noop", "deps": [ "nope" ] } } ]"#),
    )
    .unwrap();
    let e = simpler_workloads::load(&p).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: body[0].submit.deps[0]: unknown label `nope`: no earlier task has this label",
            p.display()
        )
    );
}

/// The settings' errors name their JSON path and say what is accepted: `tensormap_capacity`
/// past its range loaded and stopped the run with a configuration error naming no file or
/// path, and `1e9` as a ring size said "data did not match any variant of untagged enum
/// EnvValue".
#[test]
fn settings_errors_name_their_path_and_what_is_accepted() {
    let top = |fields: &str| format!(r#"{{ {fields}, "tensors": [], "body": [] }}"#);
    assert_error(
        &top(r#""tensormap_capacity": 18446744073709551615"#),
        "tensormap_capacity",
        "18446744073709551615 is out of range; it must be in [1, 2147483647]",
    );
    assert_error(
        &top(r#""tensormap_capacity": 2147483648"#),
        "tensormap_capacity",
        "2147483648 is out of range; it must be in [1, 2147483647]",
    );
    assert!(load_str(&top(r#""tensormap_capacity": 2147483647"#), "t").is_ok());
    let accepted =
        "a whole number of 0 or more (every ring), a list of 4 of them (one per ring), or a string \
                    of either (\"1024\" or \"1024,2048,4096,8192\")";
    assert_error(
        &top(r#""runtime_env": { "ring_heap": 1e9 }"#),
        "runtime_env.ring_heap",
        &format!("invalid type: floating point `1000000000.0`, expected {accepted} at line 1 column 35"),
    );
    assert_error(
        &top(r#""runtime_env": { "ring_heap": -5 }"#),
        "runtime_env.ring_heap",
        &format!("invalid type: integer `-5`, expected {accepted} at line 1 column 34"),
    );
    assert_error(
        &top(r#""runtime_env": { "ring_dep_pool": [64, 64, 64.5, 64] }"#),
        "runtime_env.ring_dep_pool[2]",
        "invalid type: floating point `64.5`, expected a whole number of 0 or more for each ring at line 1 column 49",
    );
    // What stays accepted.
    for ok in [
        r#""runtime_env": { "ring_heap": 1048576 }"#,
        r#""runtime_env": { "ring_heap": [1048576, 1048576, 65536, 65536] }"#,
        r#""runtime_env": { "ring_heap": "1048576,1048576,65536,65536" }"#,
    ] {
        assert!(load_str(&top(ok), "t").is_ok(), "{ok}");
    }
}

/// Ring sizes of the file past this machine's memory are an error of the file at its JSON
/// path (they were a configuration error naming neither); a size the caller overrides is not
/// the file's.
#[test]
fn a_file_ring_size_past_host_memory_names_the_file_and_path() {
    use simpler_runtime::{config::Settings, RuntimeEnv};
    use simpler_workloads::{run_workload, ErrorKind, Overrides};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.json");
    std::fs::write(
        &p,
        r#"{ "runtime_env": { "ring_heap": 18446744073709551615 }, "tensors": [], "body": [] }"#,
    )
    .unwrap();
    let w = simpler_workloads::load(&p).unwrap();
    let e = run_workload(&w, &Overrides::default()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Invalid(_)), "{e:?}");
    let text = e.to_string();
    let lead = format!(
        "{}: runtime_env.ring_heap: runtime_env ring_heap=18446744073709551615,18446744073709551615,\
         18446744073709551615,18446744073709551615 needs 64.0 EiB of host memory for 4 ring(s)",
        p.display()
    );
    assert!(text.starts_with(&lead), "{text}");
    assert!(
        text.ends_with(
            "; lower ring_heap (accepted: at least 1024 bytes per ring, all rings' buffers within this machine's memory)"
        ),
        "{text}"
    );
    let o = Overrides {
        settings: Settings {
            runtime_env: RuntimeEnv::from_pairs(["ring_heap=18446744073709551614"]).unwrap(),
            ..Default::default()
        },
        ..Default::default()
    };
    let e = run_workload(&w, &o).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Config(_)), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("runtime_env ring_heap=18446744073709551614,"),
        "{e}"
    );
}

#[test]
fn the_json_schema_names_the_library_kernels_and_the_statements() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/schema.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let names: Vec<&str> = schema["$defs"]["kernel"]["oneOf"][1]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let library: Vec<&str> = simpler_workloads::kernels::LIBRARY
        .iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(names, library);
    assert_eq!(
        schema["$defs"]["kernel"]["oneOf"][0]["maximum"].as_u64(),
        Some(library.len() as u64 - 1)
    );
    let mut stmts: Vec<&String> = schema["$defs"]["stmt"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    stmts.sort();
    assert_eq!(stmts, ["alloc", "dummy", "let", "repeat", "scope", "submit"]);
}

/// Truncations and hostile numbers in the shipped files are errors, never panics.
#[test]
fn mangled_shipped_files_never_panic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads");
    for name in [
        "vector_example",
        "chain_barrier",
        "paged_attention_decode",
        "synthetic_100k",
    ] {
        // (The 100k-task file at 2 of its 100 scopes, so each mangled copy expands quickly.)
        let text = std::fs::read_to_string(dir.join(format!("{name}.json")))
            .unwrap()
            .replace("\"S\": 100", "\"S\": 2");
        for cut in (0..text.len()).step_by(13) {
            assert!(load_str(&text[..cut], name).is_err(), "{name} cut at {cut}");
        }
        // Replace each integer literal, one at a time, by hostile values.
        let bytes = text.as_bytes();
        let mut starts = Vec::new();
        let mut k = 0;
        while k < bytes.len() {
            if bytes[k].is_ascii_digit() && (k == 0 || !bytes[k - 1].is_ascii_alphanumeric()) {
                let end = (k..bytes.len())
                    .find(|&e| !bytes[e].is_ascii_digit())
                    .unwrap_or(bytes.len());
                starts.push((k, end));
                k = end;
            } else {
                k += 1;
            }
        }
        for &(s, e) in &starts {
            for v in ["0", "-1", "4294967296", "99999999999999999999", "2147483648"] {
                let mangled = format!("{}{v}{}", &text[..s], &text[e..]);
                let _ = load_str(&mangled, name);
            }
        }
    }
}

#[test]
fn dump_selections() {
    assert_error(
        &with_body(
            r#"[ { "submit": { "kernel": "noop", "args": [ { "input": "a" } ], "dump": [ 0, 1 ] } } ]"#,
        ),
        "body[0].submit.dump[1]",
        "argument 1 does not exist: the task has 1 (tensors first, then scalars)",
    );
    assert_error(
        &with_body(r#"[ { "submit": { "kernel": "noop", "dump": true } } ]"#),
        "body[0].submit.dump",
        "the task has no arguments to dump",
    );
    assert_error(
        &with_body(r#"[ { "dummy": { "args": [ { "input": "a" } ], "dump": true } } ]"#),
        "body[0].dummy.dump",
        "a dummy task runs no kernel, so its arguments are never dumped",
    );
    assert_error(
        r#"{ "diagnostics": { "dump_args": 5 }, "body": [] }"#,
        "diagnostics.dump_args",
        "5 is not a dump-args level: 0 (off), 1 (partial), 2 (full) or 3 (hybrid)",
    );
    assert!(load_str(
        &with_body(r#"[ { "submit": { "kernel": "noop", "args": [ { "input": "a" } ], "dump": false } } ]"#),
        "t"
    )
    .is_ok());
}

/// Found by a review: each formula was capped, their sum was not (ten tensors of 2^24 held
/// 1.5 GB of values before anything ran). Five tensors of 2^24 elements cross the total.
#[test]
fn formulas_together_are_capped() {
    let tensors: Vec<String> = (0..5)
        .map(|i| {
            format!(
                r#"{{ "name": "t{i}", "shape": [16777216], "dtype": "INT8", "fill": {{ "formula": "0" }} }}"#
            )
        })
        .collect();
    let text = format!(r#"{{ "tensors": [ {} ], "body": [] }}"#, tensors.join(", "));
    assert_error(
        &text,
        "tensors[4].fill.formula",
        "the workload's formulas cover at most 67108864 elements together (their values are held until the run); with this one they cover 83886080",
    );
}

/// Found by a review: a constant (or a `runtime_env` key) given twice kept the last value
/// without a word, where deps.json and scope stats refuse duplicate keys.
#[test]
fn a_key_given_twice_is_an_error() {
    let e = error(r#"{ "constants": { "N": 1, "N": 2 }, "body": [] }"#);
    assert!(e.to_string().starts_with("constants: duplicate key `N`"), "{e}");
    let e = error(r#"{ "runtime_env": { "ring_heap": 4096, "ring_heap": 8192 }, "body": [] }"#);
    assert!(
        e.to_string()
            .starts_with("runtime_env: duplicate key `ring_heap`"),
        "{e}"
    );
}

/// Found by a review: an empty `output_prefix` was taken, and a diagnostic then failed as a
/// command-line error (exit 2) naming neither the file nor the field.
#[test]
fn an_empty_output_prefix_is_an_error() {
    let e = error(r#"{ "diagnostics": { "enable_dep_gen": true, "output_prefix": "" }, "body": [] }"#);
    assert_eq!(
        e.to_string(),
        "diagnostics.output_prefix: an empty path: give a folder, or leave the key out for the default one"
    );
}
