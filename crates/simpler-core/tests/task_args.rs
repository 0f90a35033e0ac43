//! Task arguments read back exactly as built: tags and their names, which tags write, the
//! builder's chaining, scalars' bits, the launch spec, early resolve, dependency kinds and the
//! first error.

use simpler_core::{
    ArgError, ArgTag, DType, DepFlags, DepKind, TaskArgs, TaskId, Tensor, TensorArg, TensorCreateInfo,
    INLINE_DEPS,
};

fn t(addr: u64) -> Tensor {
    Tensor::contiguous(addr, 64, &[16], DType::Float32, TaskId::INVALID).unwrap()
}

const TAGS: [ArgTag; 5] = [
    ArgTag::Input,
    ArgTag::Output,
    ArgTag::Inout,
    ArgTag::OutputExisting,
    ArgTag::NoDep,
];

#[test]
fn tag_names_round_trip_and_say_which_tags_write() {
    assert_eq!(
        TAGS.map(ArgTag::name),
        ["INPUT", "OUTPUT", "INOUT", "OUTPUT_EXISTING", "NO_DEP"]
    );
    for tag in TAGS {
        assert_eq!(ArgTag::from_name(tag.name()), Some(tag));
        assert_eq!(ArgTag::from_name(&tag.name().to_lowercase()), Some(tag));
    }
    assert_eq!(ArgTag::from_name("UNKNOWN"), None);
    assert_eq!(TAGS.map(ArgTag::writes), [false, true, true, true, false]);
    assert_eq!(DepKind::Wait.flags(), DepFlags::WAIT);
    assert_eq!(DepKind::WaitRetain.flags(), DepFlags::WAIT_RETAIN);
    assert_eq!(DepKind::default(), DepKind::WaitRetain);
}

#[test]
fn every_builder_method_chains_on_the_same_args_and_reads_back() {
    let ci = TensorCreateInfo::new(&[4], DType::Float32).unwrap();
    let mut a = TaskArgs::new();
    a.input(t(0x1000))
        .output(ci)
        .inout(t(0x2000))
        .output_existing(t(0x3000))
        .no_dep(t(0x4000))
        .scalar(7)
        .scalar_f32(1.5)
        .scalar_f64(-2.0)
        .scalar_u32(u32::MAX)
        .scalar_i64(-1)
        .dep(TaskId::new(0, 1))
        .dep_wait(TaskId::new(1, 2))
        .block_num(3)
        .require_sync_start(true)
        .allow_early_resolve();
    assert_eq!(a.error(), None);
    let tags: Vec<ArgTag> = a.tensors().iter().map(TensorArg::tag).collect();
    assert_eq!(tags, TAGS);
    let addrs: Vec<Option<u64>> = a.tensors().iter().map(|x| x.tensor().map(Tensor::addr)).collect();
    assert_eq!(
        addrs,
        [Some(0x1000), None, Some(0x2000), Some(0x3000), Some(0x4000)]
    );
    assert_eq!(
        a.scalars(),
        [
            7,
            u64::from(1.5f32.to_bits()),
            (-2.0f64).to_bits(),
            u64::from(u32::MAX),
            u64::MAX
        ]
    );
    assert_eq!(
        a.explicit_deps().collect::<Vec<_>>(),
        [
            (TaskId::new(0, 1), DepKind::WaitRetain),
            (TaskId::new(1, 2), DepKind::Wait)
        ]
    );
    assert_eq!(a.explicit_dep_count(), 2);
    assert_eq!((a.launch().block_num, a.launch().require_sync_start), (3, true));
    assert!(a.early_resolve());

    let b = TaskArgs::new();
    assert_eq!(
        (
            b.launch().block_num,
            b.launch().require_sync_start,
            b.early_resolve()
        ),
        (1, false, false)
    );
    let mut c = TaskArgs::new();
    c.require_sync_start(true).require_sync_start(false);
    assert!(!c.launch().require_sync_start);
}

#[test]
fn the_runtime_replaces_an_output_with_its_materialized_tensor() {
    let ci = TensorCreateInfo::new(&[4], DType::Float32).unwrap();
    let mut a = TaskArgs::new();
    a.input(t(0x1000)).output(ci);
    assert_eq!(a.tensors_mut().len(), 2);
    a.tensors_mut()[1] = TensorArg::Inout(ci.materialize(0x9000, TaskId::new(0, 3)));
    assert_eq!(a.tensors()[1].tensor().map(Tensor::addr), Some(0x9000));
}

#[test]
fn with_tag_builds_every_tag_but_output() {
    for tag in TAGS {
        match TensorArg::with_tag(tag, t(0x1000)) {
            Some(arg) => assert_eq!((arg.tag(), arg.tensor().map(Tensor::addr)), (tag, Some(0x1000))),
            None => assert_eq!(tag, ArgTag::Output),
        }
    }
}

#[test]
fn the_first_error_is_kept_and_inline_deps_are_capped() {
    let mut a = TaskArgs::new();
    for i in 0..INLINE_DEPS as u32 {
        a.dep(TaskId::new(0, i));
    }
    assert_eq!(a.error(), None, "{INLINE_DEPS} inline deps fit");
    a.dep(TaskId::new(0, 999));
    assert_eq!(a.error(), Some(&ArgError::TooManyInlineDeps));
    a.block_num(0);
    assert_eq!(
        a.error(),
        Some(&ArgError::TooManyInlineDeps),
        "the first error stays"
    );
    assert_eq!(a.explicit_dep_count(), INLINE_DEPS);

    let ids = [TaskId::new(0, 1)];
    let mut b = TaskArgs::new();
    b.dep(TaskId::new(0, 2)).set_dependencies(&ids);
    assert_eq!(b.error(), Some(&ArgError::DepsSetTwice));
    let mut c = TaskArgs::new();
    c.set_dependencies(&ids).dep(TaskId::new(0, 2));
    assert_eq!(c.error(), Some(&ArgError::DepsSetTwice));
    let mut d = TaskArgs::new();
    d.block_num(0).block_num(4);
    assert_eq!(
        (d.error(), d.launch().block_num),
        (Some(&ArgError::ZeroBlockNum), 4)
    );
    for (e, msg) in [
        (ArgError::ZeroBlockNum, "block_num must be at least 1"),
        (ArgError::DepsSetTwice, "explicit dependencies were set twice"),
    ] {
        assert_eq!(e.to_string(), msg);
    }
}
