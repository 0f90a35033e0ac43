"""Each `python -m simpler.tools.<tool>` writes the same bytes (files, stdout, stderr, exit
status) as the `simpler` subcommand on the same input."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import simpler
from test_vector import vector

N = 4096


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    """A run folder with every diagnostic of the vector example (no views rendered)."""
    folder = tmp_path_factory.mktemp("run") / "vector"
    w = simpler.Worker()
    a = w.tensor(np.full(N, 2.0, np.float32))
    b = w.tensor(np.full(N, 3.0, np.float32))
    f = w.alloc((N,), "float32")
    cfg = simpler.CallConfig(
        enable_scope_stats=True, enable_dep_gen=True, enable_l2_swimlane=True, dump_args=2,
        output_prefix=str(folder),
    )
    report = w.run(vector(a, b, f, N), cfg, render_views=False)
    assert report.lost == [] and report.views == []
    assert set(report.outcomes.values()) == {"written"}, report.outcomes
    return folder


def swimlane_records(folder: Path) -> Path:
    """The timing records file (also linked under the original's name)."""
    records = folder / "l2_swimlane_records.json"
    assert records.read_bytes() == (folder / "chip_swimlane_records.json").read_bytes()
    return records


def both(tool, module, args, cwd, simpler_bin):
    """Runs the module and the subcommand with `args(side)`; returns both results."""
    py = subprocess.run([sys.executable, "-m", f"simpler.tools.{module}", *args("py")],
                        cwd=cwd, capture_output=True)
    rust = subprocess.run([str(simpler_bin), tool, *args("rust")], cwd=cwd, capture_output=True)
    return py, rust


def same(py, rust, cwd: Path):
    """Same status and output, with the side's name (py / rust) made neutral."""
    def neutral(b: bytes) -> bytes:
        return b.replace(str(cwd / "py").encode(), b"OUT").replace(str(cwd / "rust").encode(), b"OUT")

    assert py.returncode == rust.returncode, (py.stderr, rust.stderr)
    assert neutral(py.stdout) == neutral(rust.stdout)
    assert neutral(py.stderr) == neutral(rust.stderr)


def test_scope_stats_plot(run_folder, tmp_path, simpler_bin):
    jsonl = run_folder / "scope_stats" / "scope_stats.jsonl"
    py, rust = both("scope-stats-plot", "scope_stats_plot",
                    lambda side: [str(jsonl), "--out-dir", str(tmp_path / side)], tmp_path, simpler_bin)
    same(py, rust, tmp_path)
    assert py.returncode == 0
    html = (tmp_path / "py" / "scope_stats.html").read_bytes()
    assert html == (tmp_path / "rust" / "scope_stats.html").read_bytes()
    assert b"test_vector.py:" in html
    # The original's module path gives the same report.
    subprocess.run([sys.executable, "-m", "simpler.tools.tmr.scope_stats_plot", str(jsonl),
                    "--out-dir", str(tmp_path / "tmr")], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "tmr" / "scope_stats.html").read_bytes() == html


@pytest.mark.parametrize("fmt", ["text", "html"])
def test_deps_viewer(run_folder, tmp_path, simpler_bin, fmt):
    deps = run_folder / "deps.json"
    py, rust = both("deps-viewer", "deps_viewer",
                    lambda side: [str(deps), "--format", fmt, "-o", str(tmp_path / f"{side}.out")],
                    tmp_path, simpler_bin)
    same(py, rust, tmp_path)
    assert py.returncode == 0
    text = (tmp_path / "py.out").read_bytes()
    assert text == (tmp_path / "rust.out").read_bytes() and len(text) > 0


def test_swimlane_converts_the_records(run_folder, tmp_path, simpler_bin):
    records = swimlane_records(run_folder)
    py, rust = both("swimlane", "swimlane",
                    lambda side: [str(records), "-o", str(tmp_path / f"{side}.json")], tmp_path, simpler_bin)
    same(py, rust, tmp_path)
    assert py.returncode == 0
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "rust.json").read_bytes()
    conv = subprocess.run([sys.executable, "-m", "simpler.tools.swimlane_converter", str(records), "-o",
                           str(tmp_path / "conv.json")], cwd=tmp_path, capture_output=True)
    assert conv.returncode == 0
    assert (tmp_path / "conv.json").read_bytes() == (tmp_path / "py.json").read_bytes()


def test_dump_viewer_lists_and_exports(run_folder, tmp_path, simpler_bin):
    dump = run_folder / "args_dump"
    py, rust = both("dump-viewer", "dump_viewer", lambda side: [str(dump)], tmp_path, simpler_bin)
    same(py, rust, tmp_path)
    assert py.returncode == 0 and b"0x0000000100000003" in py.stdout
    py, rust = both("dump-viewer", "dump_viewer",
                    lambda side: [str(dump), "--export", "--out", str(tmp_path / side)], tmp_path, simpler_bin)
    same(py, rust, tmp_path)
    exported = sorted(p.name for p in (tmp_path / "py").iterdir())
    assert exported and exported == sorted(p.name for p in (tmp_path / "rust").iterdir())
    for name in exported:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "rust" / name).read_bytes()


def test_plan_check(run_folder, tmp_path, simpler_bin):
    py, rust = both("plan", "plan",
                    lambda side: ["--check", "ring_task_window=4", str(run_folder)], tmp_path, simpler_bin)
    same(py, rust, tmp_path)
    assert b"ring_task_window" in py.stdout + py.stderr


def test_critical_path(run_folder, tmp_path, simpler_bin):
    import shutil
    # One copy of the run per side, under the same folder name (the report labels a run by it).
    for side in ("py", "rust"):
        shutil.copytree(run_folder, tmp_path / side / "vector")
    py, rust = both("critical-path", "critical_path", lambda side: [str(tmp_path / side / "vector")],
                    tmp_path, simpler_bin)
    same(py, rust, tmp_path)
    assert py.returncode == 0, py.stderr
    report = (tmp_path / "py" / "vector" / "critical_path_report.md").read_bytes()
    assert report == (tmp_path / "rust" / "vector" / "critical_path_report.md").read_bytes()
    assert b"Critical-path report" in report


def test_sched_overhead(run_folder, tmp_path, simpler_bin):
    py, rust = both("sched-overhead", "sched_overhead", lambda side: [str(run_folder)], tmp_path, simpler_bin)
    same(py, rust, tmp_path)
    assert py.returncode == 0, py.stderr
    assert b"Part 1" in py.stdout


def test_usage_errors_match(tmp_path, simpler_bin):
    py, rust = both("deps-viewer", "deps_viewer", lambda side: ["--no-such-flag"], tmp_path, simpler_bin)
    same(py, rust, tmp_path)
    assert py.returncode == 2 and b"--no-such-flag" in py.stderr


def test_python_m_simpler_is_the_command(tmp_path, simpler_bin):
    py = subprocess.run([sys.executable, "-m", "simpler", "run", "--list"], cwd=tmp_path, capture_output=True)
    rust = subprocess.run([str(simpler_bin), "run", "--list"], cwd=tmp_path, capture_output=True)
    same(py, rust, tmp_path)
    assert b"vector_example" in py.stdout
