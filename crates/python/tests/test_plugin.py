"""The pytest plugin: its flags turn the diagnostics on for every Worker of a scene test, with
the artifacts (and their views) under `outputs/<test>_<case>_<timestamp>/`."""

import json
import sys

SCENE = '''
import numpy as np
import pytest
import simpler
from simpler import INPUT, OUTPUT, OUTPUT_EXISTING

N = 1024

@pytest.mark.parametrize("case", ["small"])
def test_vector(case):
    w = simpler.Worker()
    a = w.tensor(np.full(N, 2.0, np.float32))
    b = w.tensor(np.full(N, 3.0, np.float32))
    f = w.alloc((N,), "float32")

    def orch(o):
        c = o.submit("add", INPUT(a), INPUT(b), OUTPUT((N,))).output(0)
        with o.scope():
            d = o.submit("add_scalar", INPUT(c), OUTPUT((N,)), 1.0).output(0)
            o.submit("add", INPUT(d), INPUT(c), OUTPUT_EXISTING(f))

    report = w.run(orch)
    assert (w.read(f) == 11).all()
    print("REPORT", report.runtime, report.output_dir)

def test_plain():
    w = simpler.Worker()
    report = w.run(lambda o: o.submit("noop"))
    print("REPORT", report.runtime, report.output_dir)
'''


def reports(result):
    return [line.split("REPORT ")[1].split() for line in result.outlines if "REPORT " in line]


def test_the_flags_write_every_artifact_and_view_per_case(pytester):
    pytester.makepyfile(test_scene=SCENE)
    result = pytester.runpytest_subprocess(
        "-s", "-p", "no:cacheprovider",
        "--enable-scope-stats", "--enable-dep-gen", "--enable-l2-swimlane", "--dump-args=2", "--runtime", "hbg",
    )
    result.assert_outcomes(passed=2)
    got = reports(result)
    assert [r[0] for r in got] == ["hbg", "hbg"]
    folders = sorted(p.name for p in (pytester.path / "outputs").iterdir())
    assert len(folders) == 2
    assert folders[0].startswith("test_plain_default_") and folders[1].startswith("test_vector_small_")
    vector = pytester.path / "outputs" / folders[1]
    for name in [
        "run.json", "deps.json", "deps_viewer.txt", "name_map.json", "merged_swimlane.json",
        "scope_stats/scope_stats.jsonl", "scope_stats/scope_stats.html", "args_dump/args_dump.json",
    ]:
        assert (vector / name).is_file(), name
    assert list(vector.glob("*swimlane_records*.json")), "the timing records"
    manifest = json.loads((vector / "run.json").read_text())
    assert manifest["status"] == "completed"
    assert {d["name"]: d["outcome"] for d in manifest["diagnostics"]}["dep_gen"] == "written"
    assert {v["name"] for v in manifest["views"]} >= {"deps_viewer.txt", "scope_stats/scope_stats.html"}
    samples = (vector / "scope_stats" / "scope_stats.jsonl").read_text().splitlines()[1:]
    scope_line = next(i + 1 for i, t in enumerate(SCENE.lstrip("\n").splitlines()) if "with o.scope()" in t)
    assert json.loads(samples[1])["site"] == f"test_scene.py:{scope_line}"


def test_a_test_id_too_long_for_a_folder_name_is_cut_with_a_hash(pytester):
    """Found by a review: a parametrize id over ~230 characters made an output folder name the
    file system refused ("File name too long") under --enable-dep-gen. Two such ids that share
    their beginning get two folders."""
    pytester.makepyfile(test_long="""
import pytest
import simpler

@pytest.mark.parametrize("case", [1, 2], ids=["x" * 300 + "a", "x" * 300 + "b"])
def test_long(case):
    report = simpler.Worker().run(lambda o: o.submit("noop"))
    print("REPORT", report.runtime, report.output_dir)
""")
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", "--enable-dep-gen")
    result.assert_outcomes(passed=2)
    folders = sorted(p.name for p in (pytester.path / "outputs").iterdir())
    assert len(folders) == 2, folders
    for f in folders:
        assert f.startswith("test_long_" + "x" * 150) and len(f) < 255, f
        assert (pytester.path / "outputs" / f / "deps.json").is_file()


def test_without_flags_nothing_is_written(pytester):
    pytester.makepyfile(test_scene=SCENE)
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert reports(result) == [["tmr", "None"], ["tmr", "None"]]
    assert not (pytester.path / "outputs").exists()


def test_a_scene_file_runs_as_a_script_with_the_flags(pytester):
    script = pytester.makepyfile(test_script=SCENE + """
if __name__ == "__main__":
    import simpler.scene
    simpler.scene.main()
""")
    result = pytester.run(sys.executable, str(script), "-s", "-p", "no:cacheprovider", "--enable-dep-gen")
    assert result.ret == 0, result.outlines
    folders = sorted(p.name for p in (pytester.path / "outputs").iterdir())
    assert [f.rsplit("_", 2)[0] for f in folders] == ["test_plain_default", "test_vector_small"]
    assert (pytester.path / "outputs" / folders[1] / "deps_viewer.txt").is_file()


def test_the_flags_are_registered(pytester):
    result = pytester.runpytest_subprocess("--help")
    for flag in ["--enable-scope-stats", "--enable-dep-gen", "--enable-l2-swimlane", "--enable-chip-swimlane",
                 "--dump-args=[LEVEL]", "--runtime={tmr,hbg}"]:
        assert any(flag in line for line in result.outlines), flag


FIXTURE_SCENE = '''
import pytest
import simpler

MODULE_WORKER = simpler.Worker()

@pytest.fixture(scope="module")
def worker():
    return simpler.Worker()

def test_runtimes(worker):
    local = simpler.Worker()
    got = [w.run(lambda o: o.submit("noop")).runtime for w in (MODULE_WORKER, worker, local)]
    print("RUNTIMES", *got, worker.runtime)
'''


def test_runtime_reaches_workers_built_by_fixtures_and_at_module_level(pytester):
    pytester.makepyfile(test_fixture=FIXTURE_SCENE)
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", "--runtime", "hbg")
    result.assert_outcomes(passed=1)
    line = next(t for t in result.outlines if "RUNTIMES" in t)
    assert line.split("RUNTIMES")[1].split() == ["hbg", "hbg", "hbg", "hbg"]


def test_a_bare_level_flag_before_a_path_is_a_usage_error_that_says_how(pytester):
    pytester.makepyfile(test_scene=SCENE)
    for flag in ["--dump-args", "--enable-l2-swimlane"]:
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", flag, "test_scene.py")
        assert result.ret == 4, result.outlines  # pytest's usage error
        assert any(
            f"'test_scene.py' is not a level" in t and f"write {flag}=LEVEL" in t for t in result.errlines
        ), result.errlines
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--dump-args=7", "test_scene.py")
    assert result.ret == 4 and any("level 7 is not in 0-3" in t for t in result.errlines), result.errlines


SCOPES_SCENE = '''
import re
import numpy as np
import pytest
import simpler
from simpler import INPUT, OUTPUT


def go(tag):
    w = simpler.Worker()
    a = w.tensor(np.ones(8, np.float32))
    r = w.run(lambda o: o.submit("add", INPUT(a), INPUT(a), OUTPUT((8,))))
    folder = r.output_dir.split("/")[-1] if r.output_dir else "None"
    print("RUN", tag, r.runtime, re.sub(r"_\\d{8}_\\d{6}(_\\d+)?$", "", folder))


go("import")


@pytest.fixture(scope="session")
def sess():
    go("session-setup")
    yield
    go("session-teardown")


@pytest.fixture(scope="module")
def warm(sess):
    go("module-setup")
    yield
    go("module-teardown")


@pytest.fixture
def fn_fix():
    go("function-setup")
    yield
    go("function-teardown")


@pytest.mark.parametrize("case", ["one"])
def test_one(warm, fn_fix, case):
    go("test")
'''


def runs(result):
    found = [t.split("RUN ")[1].split() for t in result.outlines if "RUN " in t]
    return {f[0]: f[1:] for f in found}


def test_the_flags_reach_runs_in_fixtures_of_every_scope_and_at_import(pytester):
    pytester.makepyfile(test_scopes=SCOPES_SCENE)
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", "--runtime", "hbg", "--enable-dep-gen")
    result.assert_outcomes(passed=1)
    assert runs(result) == {
        "import": ["hbg", "test_scopes_default"],
        "session-setup": ["hbg", "sess_session"],
        "module-setup": ["hbg", "warm_module"],
        "function-setup": ["hbg", "test_one_one"],
        "test": ["hbg", "test_one_one"],
        "function-teardown": ["hbg", "test_one_one"],
        "module-teardown": ["hbg", "warm_module"],
        "session-teardown": ["hbg", "sess_session"],
    }
    folders = [p.name for p in (pytester.path / "outputs").iterdir()]
    assert len(folders) == 8 and all((pytester.path / "outputs" / f / "deps.json").is_file() for f in folders)


PROJECT_CONFTEST = '''
def pytest_addoption(parser):
    parser.addoption("--runtime", default="cpu", help="the project's own runtime option")
    parser.addoption("--enable-dep-gen", action="store_true", help="the project's own switch")
'''

PROJECT_TEST = '''
import simpler

def test_x(request):
    r = simpler.Worker().run(lambda o: o.submit("noop"))
    print("PROJECT", request.config.getoption("--runtime"), r.runtime, r.output_dir is not None)
'''


def test_a_project_defining_the_same_options_keeps_them_and_the_plugin_reads_what_it_understands(pytester):
    pytester.makeconftest(PROJECT_CONFTEST)
    pytester.makepyfile(test_project=PROJECT_TEST)

    def project(*args):
        result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", *args)
        result.assert_outcomes(passed=1)
        return next(t.split("PROJECT ")[1].split() for t in result.outlines if "PROJECT " in t)

    # The project's value "cpu" is not a runtime: the plugin leaves it to the project.
    assert project() == ["cpu", "tmr", "False"]
    # A runtime name and a switch mean what the plugin's flags mean: both are read.
    assert project("--runtime", "hbg", "--enable-dep-gen") == ["hbg", "hbg", "True"]
    # The plugin's other flags are still there.
    assert project("--dump-args=1") == ["cpu", "tmr", "True"]


def test_the_plugin_can_be_turned_off(pytester):
    pytester.makepyfile(test_project=PROJECT_TEST.replace('request.config.getoption("--runtime")', '"-"'))
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", "-p", "no:simpler")
    result.assert_outcomes(passed=1)
    assert any("PROJECT - tmr False" in t for t in result.outlines)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:simpler", "--enable-dep-gen")
    assert result.ret == 4 and any("unrecognized arguments: --enable-dep-gen" in t for t in result.errlines)


def test_a_failing_run_does_not_print_the_packages_source(pytester):
    pytester.makepyfile(test_fail='''
import simpler

def test_fails():
    simpler.Worker().run(lambda o: o.submit("no_such_kernel"))
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    text = "\n".join(result.outlines)
    assert "FatalError: fatal 9 (EXPLICIT_ORCH_FATAL)" in text
    assert "return self._native.run(" not in text and "def run(" not in text
