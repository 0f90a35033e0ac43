//! Errors by kind: a bad `--param` names its key, value and rule; a run that stops on a fatal
//! hands back the runtime's error.

use simpler_examples::bench::{bench_config, bench_worker, run_workload, Workload};
use simpler_examples::{find, ErrorKind, Params};
use simpler_runtime::{CallConfig, FatalCode, RunError, RuntimeEnv, RuntimeKind};

fn params(example: &str, pairs: &[&str]) -> Result<Params, simpler_examples::Error> {
    let ex = find(example).unwrap();
    let pairs: Vec<String> = pairs.iter().map(|p| p.to_string()).collect();
    Params::parse(ex.name(), &pairs, ex.params())
}

#[test]
fn bad_params_carry_their_key_value_and_rule() {
    let err = params("vector_example", &["size"]).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::ParamNotKeyValue { pair } if pair == "size"),
        "{err:?}"
    );

    let err = params("vector_example", &["sizes=3"]).unwrap_err();
    match err.kind() {
        ErrorKind::UnknownParam { example, key, valid } => {
            assert_eq!((example.as_str(), key.as_str()), ("vector_example", "sizes"));
            assert_eq!(valid, &["size"]);
        }
        other => panic!("not UnknownParam: {other:?}"),
    }
    let err = params("edge_sources", &["n=1"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "edge_sources has no parameter `n`; valid parameters: none"
    );

    let p = params("vector_example", &["size=-4"]).unwrap();
    let err = p.u32_at_least("size", 1).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::NotAnInteger { key, value } if key == "size" && value == "-4"),
        "{err:?}"
    );
    let p = params("vector_example", &["size=4294967296"]).unwrap();
    let err = p.u32_at_least("size", 1).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::ParamTooLarge { key, value: 4_294_967_296 } if key == "size"),
        "{err:?}"
    );
    let p = params("vector_example", &["size=0"]).unwrap();
    let err = p.u32_at_least("size", 1).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::ParamTooSmall { key, value: 0, min: 1 } if key == "size"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "--param size=0: must be at least 1");
    let err = p.u64("nope").unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::MissingParam { key } if key == "nope"),
        "{err:?}"
    );
}

#[test]
fn chain_barrier_refuses_more_producers_than_the_pool_holds() {
    let ex = find("chain_barrier").unwrap();
    let p = params("chain_barrier", &["n=8001"]).unwrap();
    let err = ex.run(&CallConfig::default(), &p).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::TooManyProducers { n: 8001, max: 8000 }),
        "{err:?}"
    );
    assert!(err.run_error().is_none());
}

#[test]
fn a_fatal_run_hands_back_the_runtime_error_with_its_report() {
    let ex = find("chain_barrier").unwrap();
    let p = params("chain_barrier", &["n=8"]).unwrap();
    let mut env = RuntimeEnv::default();
    env.set_pair("ring_task_window=4").unwrap();
    let cfg = CallConfig {
        runtime_env: env,
        ..Default::default()
    };
    let err = ex.run(&cfg, &p).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Run(_)), "{err:?}");
    assert_eq!(
        err.run_error().and_then(RunError::code),
        Some(FatalCode::ScopeDeadlock)
    );
    let message = err.to_string();
    match err.into_run_error() {
        // The scope admits window - 1 = 3 tasks; the fourth submit stops the run (the three may
        // or may not have completed by then).
        Ok(RunError::Fatal { report, .. }) => {
            assert_eq!(report.tasks, 3);
            assert!(report.completed <= 3);
        }
        other => panic!("not a fatal RunError: {other:?}"),
    }
    assert!(message.starts_with("fatal 1 (SCOPE_DEADLOCK)"), "{message}");
}

#[test]
fn bench_workloads_need_a_task_count_that_fits() {
    let w = bench_worker().unwrap();
    let cfg = bench_config(RuntimeKind::Tmr, 1);
    let err = run_workload(&w, &cfg, Workload::Chain, 0).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::NoTasks), "{err:?}");
    let err = run_workload(&w, &cfg, Workload::Chain, 1 << 40).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::TooManyTasks { tasks } if *tasks == 1 << 40),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "--tasks 1099511627776 is too large");
}
