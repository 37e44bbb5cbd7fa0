"""Benchmarks are not tests: this only keeps the harness runnable (a few iterations, no timings checked)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_bench(script: str, *args: str, timeout: int) -> subprocess.CompletedProcess[str]:
    """A bench script under this environment's Python; it must exit 0."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result


def test_routing_bench_runs(tmp_path):
    out = tmp_path / "routing.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "routing_bench.py"), "--iterations", "20", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "agent (200 turns)" in result.stdout and out.exists()


def test_scorer_time_bench_runs(tmp_path):
    from gateway.routing.scorer.compiled import KERNEL

    if KERNEL is None:
        if os.environ.get("CI"):
            pytest.fail("the scorer's kernel was not built: the test install compiles it (pyproject.toml)")
        pytest.skip("the scorer's kernel was not built (no C compiler at install time)")
    out = tmp_path / "scorer.json"
    result = run_bench(
        "scorer_time.py", "--rounds", "2", "--calls", "2", "--cold", "--json", str(out), timeout=120
    )
    assert "8,000-character turn, varied requests" in result.stdout
    assert len(json.loads(out.read_text())) == 7


def test_routing_eval_runs_and_the_policy_does_not_regress(tmp_path):
    """The evaluation on real prompts (bench/routing_eval.py) as a regression guard: accuracy only,
    which is deterministic; the decision times it prints are not checked."""
    import json

    out = tmp_path / "eval.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "routing_eval.py"), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    classes = json.loads(out.read_text())["classes"]
    # Floors a little under the shipped scorer's figures (docs/scorer.md): a retrained
    # model that does worse on these held-out collections fails here.
    assert classes["chat"]["test"] >= 0.9  # low-stakes traffic stays on the diffusion backend
    assert classes["code"]["test"] >= 0.95
    assert classes["tools"]["test"] == 1.0
    assert classes["math"]["test"] >= 0.97


def test_hotpath_bench_runs():
    """bench/hotpath.py drives the real app in process; it exits non-zero unless every answer was a 200."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "hotpath.py"), "--count", "200", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "µs of CPU" in result.stdout


def test_edge_bench_runs(tmp_path):
    """bench/edge.py --quick (slow clients and the soak) with a few clients and requests; the figures are
    not checked, only that the parts ran and the gateway closed slow connections of every kind."""
    import json

    from tests.support import system_binary

    system_binary("wrk")
    out = tmp_path / "edge.json"
    run_bench(
        "edge.py",
        "--quick",
        "--slow-clients",
        "30",
        "--soak",
        "300",
        "--parts",
        "BC",  # D (two workers) is tests/test_edge.py's
        "--mixes",
        "head+body+unread_stream",
        "--json",
        str(out),
        timeout=300,
    )
    results = json.loads(out.read_text())
    for kind in ("head", "body", "unread_stream"):
        assert results["abuse"]["head+body+unread_stream"]["slow_clients"][kind]["closed"] > 0
    assert sum(results["soak"]["outcomes"].values()) == 300


def test_edge_twin_bench_runs(tmp_path):
    """bench/edge_twin.py --quick: two gateways measured at once, the slow clients against one; the figures
    are not checked, only that a pair was measured and the gateway closed slow connections of every kind."""
    import json

    from tests.support import system_binary

    system_binary("wrk")
    if not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the twin bench pins the gateways to one core and the clients to the others (Linux)")
    out = tmp_path / "twin.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "edge_twin.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    pair = json.loads(out.read_text())["pairs"][0]
    assert pair["alone"]["x"]["rps"] > 0 and pair["beside"]["y"]["rps"] > 0
    for kind in ("head", "body", "unread_stream"):
        assert pair["slow_clients"][kind]["closed"] > 0


def test_abuse_bench_runs_every_probe(tmp_path):
    """bench/abuse.py --quick: every probe in its table ran and reported what the gateway answered; the
    times, the memory figures and the answers themselves are not checked."""
    import json

    bench = str(ROOT / "bench" / "abuse.py")
    listed = subprocess.run(
        [sys.executable, bench, "--list"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    names = [line.split(":", 1)[0] for line in listed.splitlines() if line.strip()]
    assert len(names) >= 12
    out = tmp_path / "abuse.json"
    result = subprocess.run(
        [sys.executable, bench, "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    probes = json.loads(out.read_text())["probes"]
    assert list(probes) == names
    for name, row in probes.items():
        assert sum(row["statuses"].values()) > 0, name
        assert set(row["rss_mb"]) == {"before", "peak", "after"}
        assert name in result.stdout


def test_shadow_overhead_bench_runs():
    """bench/shadow_overhead.py with a few requests: every gateway answered (it exits non-zero otherwise),
    and the one with shadowing on every request shadowed them; the latencies are printed, never judged."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "shadow_overhead.py"), "--count", "8", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    table = [line.split() for line in result.stdout.splitlines() if line.startswith("  ")]
    rows = {cells[0]: cells for cells in table if len(cells) == 5}
    assert rows["off"][-1] == "0" and int(rows["on-100%"][-1]) > 0


def test_compare_bench_runs(tmp_path):
    """bench/compare.py with one pair of one-second windows, this build against its own last commit: only
    that both gateways ran from their own trees and a pair was measured (the figures are not checked)."""
    import json

    from tests.support import system_binary

    system_binary("wrk")
    if not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the bench pins the gateway to one core and the clients to the others (Linux)")
    if not (ROOT / ".git").exists():
        pytest.skip("the bench exports the earlier commit from this checkout's git history")
    out = tmp_path / "compare.json"
    run_bench(
        "compare.py",
        "--base",
        "HEAD",
        "--pairs",
        "1",
        "--window",
        "1",
        "--measures",
        "pinned_c1",
        "--json",
        str(out),
        timeout=300,
    )
    results = json.loads(out.read_text())
    pair = results["measures"]["pinned_c1"]["pairs"][0]
    assert pair["base"]["rps"] > 0 and pair["this"]["rps"] > 0
    assert set(results["idle_rss_mb"]["after_warm_up"]) == {"base", "this"}
