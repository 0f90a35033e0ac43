//! The rules of `deps.rs` that the dependency-semantics suite does not pin on its own: the
//! `manual_dep` registration guard, the fan-in set's switch from a linear scan to a hash index
//! (and `clear`), the flag and source names deps.json prints, and the error messages.

use simpler_core::{
    compute_fanin, register_outputs, registrable_outputs, DType, DepFlags, EdgeSource, FaninError, FaninSet,
    TaskArgs, TaskId, Tensor, TensorMap, TensorMapConfig, FANIN_LINEAR_LIMIT,
};

fn ext(addr: u64) -> Tensor {
    Tensor::contiguous(addr, 64, &[16], DType::Float32, TaskId::INVALID).unwrap()
}

/// The deduplicated producers of a submit of `args` as task `id`.
fn fanin(map: &mut TensorMap, id: TaskId, args: &TaskArgs<'_>) -> Vec<(TaskId, DepFlags)> {
    let mut set = FaninSet::new();
    compute_fanin(id, false, args.tensors(), args.explicit_deps(), map, &mut set).unwrap();
    set.edges().to_vec()
}

#[test]
fn a_manual_dep_writer_leaves_no_tensor_map_entry() {
    let x = ext(0x1000);
    let y = ext(0x2000);
    let mut map = TensorMap::new(TensorMapConfig::unbounded());
    let writer = TaskId::new(0, 0);
    let mut w = TaskArgs::new();
    w.inout(x.with_manual_dep(true))
        .output_existing(y.with_manual_dep(true));
    assert_eq!(
        registrable_outputs(false, w.tensors()),
        0,
        "nothing to make room for"
    );
    register_outputs(writer, false, w.tensors(), &mut map).unwrap();
    let mut r = TaskArgs::new();
    r.input(x).input(y);
    assert_eq!(fanin(&mut map, TaskId::new(0, 1), &r), [], "no entry, so no edge");

    // The same writer without manual_dep registers both views, and the reader waits for it.
    let mut w = TaskArgs::new();
    w.inout(x).output_existing(y);
    assert_eq!(registrable_outputs(false, w.tensors()), 2);
    assert_eq!(
        registrable_outputs(true, w.tensors()),
        0,
        "a manual scope registers nothing"
    );
    register_outputs(TaskId::new(0, 2), false, w.tensors(), &mut map).unwrap();
    assert_eq!(
        fanin(&mut map, TaskId::new(0, 3), &r),
        [(TaskId::new(0, 2), DepFlags::WAIT)]
    );
}

#[test]
fn the_fanin_set_dedups_across_its_switch_to_a_hash_index_and_after_clear() {
    let id = |i: u32| TaskId::new(1, i);
    let mut set = FaninSet::new();
    // Up to and past the linear limit (32): every new producer is new, every repeat is not;
    // the index exists only past the limit, and then holds every producer.
    for n in 0..40 {
        assert!(set.add(id(n), DepFlags::WAIT), "{n} is new");
        assert!(!set.add(id(n), DepFlags::WAIT), "{n} again");
        if n > 0 {
            assert!(!set.add(id(n - 1), DepFlags::WAIT), "{} again", n - 1);
        }
        let len = set.edges().len();
        let want = if len > FANIN_LINEAR_LIMIT { len } else { 0 };
        assert_eq!(set.indexed(), want, "after {len} producers");
    }
    // A repeat ORs its flags into the first entry, in first-seen order.
    assert!(!set.add(id(0), DepFlags::RETAIN));
    assert!(!set.add(id(35), DepFlags::RETAIN));
    // A producer added after the switch is found again too.
    assert!(set.add(id(100), DepFlags::WAIT));
    assert_eq!(set.indexed(), 41, "a new producer joins the index at once");
    assert!(!set.add(id(100), DepFlags::RETAIN));
    let edges = set.edges();
    assert_eq!(edges.len(), 41);
    assert_eq!(edges[0], (id(0), DepFlags::WAIT_RETAIN));
    assert_eq!(edges[1], (id(1), DepFlags::WAIT));
    assert_eq!(edges[35], (id(35), DepFlags::WAIT_RETAIN));
    assert_eq!(edges[40], (id(100), DepFlags::WAIT_RETAIN));

    // clear forgets the producers and the index: the same ids are new again, in a new order.
    set.clear();
    assert!(set.edges().is_empty());
    assert_eq!(set.indexed(), 0);
    for n in (0..40).rev() {
        assert!(set.add(id(n), DepFlags::RETAIN), "{n} is new after clear");
    }
    assert!(!set.add(id(39), DepFlags::WAIT));
    assert_eq!(set.edges()[0], (id(39), DepFlags::WAIT_RETAIN));
    assert_eq!(set.edges()[39], (id(0), DepFlags::RETAIN));
}

#[test]
fn flag_and_source_names_are_what_deps_json_prints() {
    assert_eq!(DepFlags::NONE.names(), Vec::<&str>::new());
    assert_eq!(DepFlags::WAIT.names(), ["wait"]);
    assert_eq!(DepFlags::RETAIN.names(), ["retain"]);
    assert_eq!(DepFlags::WAIT_RETAIN.names(), ["wait", "retain"]);
    assert_eq!(DepFlags::WAIT | DepFlags::RETAIN, DepFlags::WAIT_RETAIN);
    assert_eq!(
        (
            DepFlags::NONE.bits(),
            DepFlags::WAIT.bits(),
            DepFlags::RETAIN.bits()
        ),
        (0, 1, 2)
    );
    assert!(DepFlags::WAIT_RETAIN.contains(DepFlags::RETAIN));
    assert!(!DepFlags::WAIT.contains(DepFlags::RETAIN));
    assert!(DepFlags::WAIT.contains(DepFlags::NONE));
    assert_eq!(
        [EdgeSource::Explicit, EdgeSource::Creator, EdgeSource::TensorMap].map(EdgeSource::name),
        ["explicit", "creator", "tensormap"]
    );
}

#[test]
fn fanin_errors_say_what_is_wrong() {
    let mut map = TensorMap::new(TensorMapConfig::unbounded());
    let me = TaskId::new(0, 7);
    let mut set = FaninSet::new();
    let deps = [TaskId::new(0, 1), me];
    let mut a = TaskArgs::new();
    a.set_dependencies(&deps);
    let e = compute_fanin(me, false, a.tensors(), a.explicit_deps(), &mut map, &mut set).unwrap_err();
    assert_eq!(e, FaninError::InvalidExplicitDep { index: 1, id: me });
    assert_eq!(e.to_string(), "explicit dependency #1 is not a task id (0x7)");
    let owned = Tensor::contiguous(0x3000, 64, &[16], DType::Float32, me).unwrap();
    let mut a = TaskArgs::new();
    a.input(ext(0x1000)).input(owned);
    let e = compute_fanin(me, false, a.tensors(), a.explicit_deps(), &mut map, &mut set).unwrap_err();
    assert_eq!(e, FaninError::SelfDependency { arg: 1 });
    assert_eq!(
        e.to_string(),
        "tensor argument #1 is owned by the task being submitted, which cannot wait for itself"
    );
}
