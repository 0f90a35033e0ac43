//! The deps.json encoder against serde_json: for random tasks, tensors and edges (every optional
//! field present or absent, every enum variant, 64-bit extremes, negative integers, strings that
//! need escaping), `encode` and `DepsWriter` write exactly the bytes `serde_json::to_string`
//! writes for the same values, and the reader reads them back.
//!
//! `PROPTEST_CASES=20000 cargo test -p simpler-artifacts --test encode --release` is the longer
//! run.

use proptest::prelude::*;
use simpler_artifacts::deps::encode::{self, ArgView, EdgeView, SliceView, TaskView, TensorView};
use simpler_artifacts::deps::{
    read_deps_from, ArgType, DepFlag, DepsElement, DepsFile, DepsGaps, DepsWriter, Edge, EdgeSource, Overlap,
    Scope, Task, TaskArg, Tensor,
};

fn u64_any() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0),
        Just(1),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(u64::from(u32::MAX)),
        Just(1 << 32),
        any::<u64>(),
    ]
}

fn i32_any() -> impl Strategy<Value = i32> {
    prop_oneof![Just(0), Just(-1), Just(i32::MIN), Just(i32::MAX), any::<i32>()]
}

fn u32_any() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0), Just(1), Just(u32::MAX), any::<u32>()]
}

/// Dtype-like names, plus strings with every character class serde_json treats specially:
/// quote, backslash, each control character, DEL, non-ASCII and astral characters.
fn text() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        3 => any::<char>(),
        2 => (0u8..0x20).prop_map(char::from),
        1 => Just('"'),
        1 => Just('\\'),
        1 => Just('/'),
        1 => Just('\u{7f}'),
        1 => Just('é'),
        1 => Just('\u{1F600}'),
        3 => prop::char::range('A', 'Z'),
    ];
    prop_oneof![
        Just("FLOAT32".to_string()),
        Just(String::new()),
        prop::collection::vec(ch, 0..12).prop_map(String::from_iter),
    ]
}

fn u32s() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(u32_any(), 0..5)
}

fn scope() -> impl Strategy<Value = Scope> {
    prop_oneof![Just(Scope::Auto), Just(Scope::Manual)]
}

fn arg_type() -> impl Strategy<Value = ArgType> {
    prop_oneof![
        Just(ArgType::Input),
        Just(ArgType::Output),
        Just(ArgType::Inout),
        Just(ArgType::OutputExisting),
        Just(ArgType::NoDep),
    ]
}

fn source() -> impl Strategy<Value = EdgeSource> {
    prop_oneof![
        Just(EdgeSource::Explicit),
        Just(EdgeSource::Creator),
        Just(EdgeSource::Tensormap),
        Just(EdgeSource::Unknown),
    ]
}

fn overlap() -> impl Strategy<Value = Overlap> {
    prop_oneof![
        Just(Overlap::Covered),
        Just(Overlap::Other),
        Just(Overlap::NoOverlap),
        Just(Overlap::Unknown)
    ]
}

fn flags() -> impl Strategy<Value = Vec<DepFlag>> {
    prop::collection::vec(prop_oneof![Just(DepFlag::Wait), Just(DepFlag::Retain)], 0..4)
}

fn task_arg() -> impl Strategy<Value = TaskArg> {
    (
        i32_any(),
        arg_type(),
        proptest::option::of(u64_any()),
        proptest::option::of(text()),
        proptest::option::of(u32s()),
        proptest::option::of(u64_any()),
        proptest::option::of(u32s()),
    )
        .prop_map(
            |(idx, arg_type, tensor_id, dtype, shape, start_offset, strides)| TaskArg {
                idx,
                arg_type,
                tensor_id,
                dtype,
                shape,
                start_offset,
                strides,
            },
        )
}

fn task() -> impl Strategy<Value = Task> {
    (
        u64_any(),
        proptest::option::of(scope()),
        proptest::option::of(any::<bool>()),
        proptest::option::of(prop::collection::vec(i32_any(), 0..5)),
        proptest::option::of(u32_any()),
        prop::collection::vec(task_arg(), 0..4),
    )
        .prop_map(
            |(task_id, scope, early_dispatch, kernel_ids, block_num, args)| Task {
                task_id,
                scope,
                early_dispatch,
                kernel_ids,
                block_num,
                args,
            },
        )
}

fn tensor() -> impl Strategy<Value = Tensor> {
    (
        u64_any(),
        u64_any(),
        proptest::option::of(i32_any()),
        text(),
        u64_any(),
    )
        .prop_map(|(tensor_id, buffer_addr, version, dtype, buffer_numel)| Tensor {
            tensor_id,
            buffer_addr,
            version,
            dtype,
            buffer_numel,
        })
}

fn edge() -> impl Strategy<Value = Edge> {
    let head = (
        u64_any(),
        u64_any(),
        proptest::option::of(i32_any()),
        source(),
        proptest::option::of(flags()),
        proptest::option::of(overlap()),
        proptest::option::of(u64_any()),
    );
    let consumer = (
        proptest::option::of(text()),
        proptest::option::of(u32s()),
        proptest::option::of(u64_any()),
        proptest::option::of(u32s()),
    );
    let producer = (
        proptest::option::of(u32s()),
        proptest::option::of(u64_any()),
        proptest::option::of(u32s()),
    );
    (head, consumer, producer).prop_map(
        |(
            (pred, succ, arg, source, flags, overlap, tensor_id),
            (consumer_dtype, consumer_shape, consumer_start_offset, consumer_strides),
            (producer_shape, producer_start_offset, producer_strides),
        )| Edge {
            pred,
            succ,
            arg,
            source,
            flags,
            overlap,
            tensor_id,
            consumer_dtype,
            consumer_shape,
            consumer_start_offset,
            consumer_strides,
            producer_shape,
            producer_start_offset,
            producer_strides,
        },
    )
}

fn encoded(f: impl FnOnce(&mut Vec<u8>)) -> String {
    let mut buf = Vec::new();
    f(&mut buf);
    String::from_utf8(buf).expect("the encoder writes UTF-8")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn task_matches_serde(t in task()) {
        let ours = encoded(|b| encode::task(b, TaskView::from(&t)));
        prop_assert_eq!(ours, serde_json::to_string(&t).unwrap());
        // The same task through ArgViews (the runtime's path) encodes the same.
        let view = TaskView::from(&t).with_args(t.args.iter().map(ArgView::from));
        prop_assert_eq!(encoded(|b| encode::task(b, view)), serde_json::to_string(&t).unwrap());
    }

    /// A stream of tasks through one set of templates encodes each as serde does: every task,
    /// then itself with other start offsets (each argument then fits its template), then
    /// itself with one other field in every argument (which must not fit), field by field, so
    /// both the template's copies and each reason to learn it again are exercised.
    #[test]
    fn templated_tasks_match_serde(
        ts in prop::collection::vec(task(), 1..4),
        offsets in prop::collection::vec(proptest::option::of(u64_any()), 1..24),
        other in task_arg(),
    ) {
        type Change = fn(&mut TaskArg, &TaskArg);
        let changes: [Change; 7] = [
            |a, o| a.idx = o.idx,
            |a, o| a.arg_type = o.arg_type,
            |a, o| a.tensor_id = o.tensor_id,
            |a, o| a.dtype = o.dtype.clone(),
            |a, o| a.shape = o.shape.clone(),
            |a, o| a.strides = o.strides.clone(),
            |a, o| a.start_offset = o.start_offset,
        ];
        let mut templates = encode::ArgTemplates::new();
        let mut check = |t: &Task| -> Result<(), TestCaseError> {
            let ours = encoded(|b| encode::task_with_templates(b, TaskView::from(t), &mut templates));
            prop_assert_eq!(ours, serde_json::to_string(t).unwrap());
            Ok(())
        };
        for t in &ts {
            check(t)?;
            let mut moved = t.clone();
            for (k, a) in moved.args.iter_mut().enumerate() {
                a.start_offset = offsets[k % offsets.len()];
            }
            check(&moved)?;
            for change in changes {
                let mut changed = moved.clone();
                changed.args.iter_mut().for_each(|a| change(a, &other));
                check(&changed)?;
                check(&moved)?;
            }
        }
    }

    #[test]
    fn tensor_matches_serde(t in tensor()) {
        let ours = encoded(|b| encode::tensor(b, &TensorView::from(&t)));
        prop_assert_eq!(ours, serde_json::to_string(&t).unwrap());
    }

    #[test]
    fn edge_matches_serde(e in edge()) {
        let ours = encoded(|b| encode::edge(b, &EdgeView::from(&e)));
        prop_assert_eq!(ours, serde_json::to_string(&e).unwrap());
    }

    #[test]
    fn writer_matches_serde_and_round_trips(
        tasks in prop::collection::vec(task(), 0..4),
        tensors in prop::collection::vec(tensor(), 0..4),
        edges in prop::collection::vec(edge(), 0..4),
    ) {
        let file = DepsFile { tasks, tensors, edges, ..DepsFile::default() };
        let mut w = DepsWriter::new(Vec::new()).unwrap();
        file.tasks.iter().try_for_each(|t| w.task(t)).unwrap();
        file.tensors.iter().try_for_each(|t| w.tensor(t)).unwrap();
        file.edges.iter().try_for_each(|e| w.edge(e)).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        prop_assert_eq!(&text, &(serde_json::to_string(&file).unwrap() + "\n"));
        let mut back = DepsFile::default();
        back.gaps = read_deps_from(text.as_bytes(), &mut back).unwrap();
        let mut expected_gaps = simpler_artifacts::deps::DepsGaps::default();
        file.tasks.iter().for_each(|t| t.note_gaps(&mut expected_gaps));
        file.tensors.iter().for_each(|t| t.note_gaps(&mut expected_gaps));
        file.edges.iter().for_each(|e| e.note_gaps(&mut expected_gaps));
        prop_assert_eq!(&back.gaps, &expected_gaps);
        back.gaps = DepsGaps::default();
        prop_assert_eq!(back, file);
    }
}

/// The builder methods the runtime uses set the fields the owned edge would have.
#[test]
fn edge_view_builders_match_the_owned_edge() {
    let consumer = SliceView {
        dtype: "BFLOAT16",
        shape: &[4, 4],
        start_offset: 18,
        strides: &[8, 1],
    };
    let producer = SliceView {
        dtype: "ignored",
        shape: &[8, 8],
        start_offset: 0,
        strides: &[8, 1],
    };
    let view = EdgeView::new(1, 2, 0, EdgeSource::Tensormap)
        .with_flags(&[DepFlag::Wait])
        .with_consumer(77, consumer)
        .with_producer(Overlap::Covered, producer);
    let owned = Edge {
        pred: 1,
        succ: 2,
        arg: Some(0),
        source: EdgeSource::Tensormap,
        flags: Some(vec![DepFlag::Wait]),
        overlap: Some(Overlap::Covered),
        tensor_id: Some(77),
        consumer_dtype: Some("BFLOAT16".into()),
        consumer_shape: Some(vec![4, 4]),
        consumer_start_offset: Some(18),
        consumer_strides: Some(vec![8, 1]),
        producer_shape: Some(vec![8, 8]),
        producer_start_offset: Some(0),
        producer_strides: Some(vec![8, 1]),
    };
    assert_eq!(view, EdgeView::from(&owned));
    let arg = ArgView::with_slice(3, ArgType::Inout, 77, consumer);
    let bare = ArgView::bare(4, ArgType::Output);
    let task = Task {
        task_id: 9,
        scope: Some(Scope::Auto),
        early_dispatch: Some(false),
        kernel_ids: Some(vec![-1, 2, -1]),
        block_num: Some(1),
        args: vec![
            TaskArg {
                idx: 3,
                arg_type: ArgType::Inout,
                tensor_id: Some(77),
                dtype: Some("BFLOAT16".into()),
                shape: Some(vec![4, 4]),
                start_offset: Some(18),
                strides: Some(vec![8, 1]),
            },
            TaskArg {
                idx: 4,
                arg_type: ArgType::Output,
                tensor_id: None,
                dtype: None,
                shape: None,
                start_offset: None,
                strides: None,
            },
        ],
    };
    let view = TaskView::from(&task).with_args([arg, bare]);
    assert_eq!(
        encoded(|b| encode::task(b, view)),
        serde_json::to_string(&task).unwrap()
    );
}

/// Control characters and quotes are escaped the way serde_json escapes them.
#[test]
fn strings_are_escaped_like_serde_json() {
    let t = Tensor {
        tensor_id: 0,
        buffer_addr: 0,
        version: Some(-1),
        dtype: "a\"b\\c\u{0}\u{8}\t\n\u{b}\u{c}\r\u{1f}\u{7f}é/".into(),
        buffer_numel: 0,
    };
    let ours = encoded(|b| encode::tensor(b, &TensorView::from(&t)));
    assert_eq!(
        ours,
        r#"{"tensor_id":"0","buffer_addr":"0","version":-1,"dtype":"a\"b\\c\u0000\b\t\n\u000b\f\r\u001f"#
            .to_string()
            + "\u{7f}é/\",\"buffer_numel\":\"0\"}"
    );
    assert_eq!(ours, serde_json::to_string(&t).unwrap());
}

/// The encoder's integer writer at every digit-count boundary, strings longer than its stage
/// (with and without escapes) and a task larger than its stage, against serde_json: the cases
/// random values rarely reach.
#[test]
fn digit_boundaries_long_strings_and_large_elements_match_serde() {
    let mut u64s = vec![0, u64::MAX];
    let mut p = 1u64;
    for _ in 0..19 {
        u64s.extend([p - 1, p, p + 1]);
        p *= 10;
    }
    u64s.extend([p - 1, p]);
    let i32s = [
        0,
        -1,
        9,
        -9,
        10,
        -10,
        99,
        100,
        -100,
        999_999_999,
        1_000_000_000,
        i32::MIN,
        i32::MAX,
    ];
    let long_clean = "A".repeat(700);
    let long_escaped = format!("{}\"\\\n{}", "B".repeat(300), "\u{1}".repeat(200));
    for (k, &v) in u64s.iter().enumerate() {
        let idx = i32s[k % i32s.len()];
        let dtype = [&long_clean, &long_escaped, "FLOAT32"][k % 3].to_string();
        let t = Task {
            task_id: v,
            scope: Some(Scope::Auto),
            early_dispatch: Some(k % 2 == 0),
            kernel_ids: Some(i32s.to_vec()),
            block_num: Some(v as u32),
            args: (0..32)
                .map(|i| TaskArg {
                    idx: idx.wrapping_add(i),
                    arg_type: ArgType::Inout,
                    tensor_id: Some(v.wrapping_add(i as u64)),
                    dtype: Some(dtype.clone()),
                    shape: Some(vec![v as u32, 10, 99, 100]),
                    start_offset: Some(v),
                    strides: Some(vec![1, u32::MAX]),
                })
                .collect(),
        };
        assert_eq!(
            encoded(|b| encode::task(b, TaskView::from(&t))),
            serde_json::to_string(&t).unwrap(),
            "{v}"
        );
        let tensor = Tensor {
            tensor_id: v,
            buffer_addr: v / 3,
            version: Some(idx),
            dtype,
            buffer_numel: v / 7,
        };
        assert_eq!(
            encoded(|b| encode::tensor(b, &TensorView::from(&tensor))),
            serde_json::to_string(&tensor).unwrap()
        );
    }
}
