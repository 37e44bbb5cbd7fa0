"""Benchmarks are not tests: this only keeps the harness runnable (a few iterations, no timings checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
