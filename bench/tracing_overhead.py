"""What the usage ledger and tracing cost per request, in process (the method of bench/hotpath.py).

    python3 bench/tracing_overhead.py            # CPU µs per non-streaming request, best of 5 rounds

The same gateway as bench/hotpath.py (real factory, real configuration, an in-memory upstream that
answers at once, the request log to /dev/null), in four configurations:

* ``off``: no ledger, no tracing: the gateway's code with only its ``is None`` tests on the hooks;
* ``ledger``: the usage ledger on, its writer thread writing batches to SQLite in a temporary directory;
* ``tracing``: traces on, every request sampled, exported by the SDK's batch processor over OTLP/HTTP to
  a sink on loopback that reads and acknowledges each batch;
* ``tracing-unsampled``: traces on with ``sample_ratio: 0`` (spans created, none recorded or exported).

CPU time is the whole process's (``time.process_time``), so the ledger's writer thread and the span
exporter's thread are counted. It also checks that ``off`` loaded neither the OpenTelemetry SDK nor the
gateway's tracing module. Compare ``off`` with ``bench/hotpath.py`` on a checkout without the ledger and
tracing hooks (same machine, same moment) for the cost of the hooks themselves.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hotpath import _drive, _log_to_devnull, build  # noqa: E402

MODES = ("off", "ledger", "tracing", "tracing-unsampled")


class _Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _sections(mode: str, tmp: Path, sink: str) -> dict[str, Any]:
    usage = {"enabled": mode == "ledger", "url": f"sqlite:///{tmp / f'usage-{mode}.db'}"}
    tracing: dict[str, Any] = {"enabled": mode.startswith("tracing"), "endpoint": sink}
    if mode == "tracing-unsampled":
        tracing["sample_ratio"] = 0.0
    return {"usage": usage, "telemetry": {"tracing": tracing}}


async def _build(mode: str, tmp: Path, sink: str) -> tuple[Any, str]:
    app, key, _ = build(Path(tempfile.mkdtemp(dir=tmp)), **_sections(mode, tmp, sink))
    if app._gateway.ledger is not None:
        app._gateway.ledger.start()
    return app, key


async def _measure(modes: list[str], tmp: Path, sink: str, count: int, rounds: int) -> dict[str, list[float]]:
    """Rounds interleaved across the modes, so that the shared machine's drift hits them alike."""
    apps = {mode: await _build(mode, tmp, sink) for mode in modes}
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    try:
        for app, key in apps.values():
            await _drive(app, key, 500)  # warm-up
        for _ in range(rounds):
            for mode, (app, key) in apps.items():
                times[mode].append(await _drive(app, key, count))
    finally:
        for app, _ in apps.values():
            state = app._gateway
            if state.ledger is not None:
                await state.ledger.close()
                if state.ledger.writer.dropped:
                    raise SystemExit(f"the ledger dropped {state.ledger.writer.dropped} rows")
            if state.tracer is not None:
                await asyncio.to_thread(state.tracer.shutdown)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args()
    _log_to_devnull()
    sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{sink.server_address[1]}/v1/traces"
    modes = args.modes.split(",")
    results: dict[str, tuple[float, float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmpdir:
            if "off" in modes:
                asyncio.run(_measure(["off"], Path(tmpdir), endpoint, 100, 1))
                loaded = [m for m in sys.modules if m.startswith("opentelemetry.sdk")]
                loaded += [m for m in sys.modules if m == "gateway.telemetry.tracing"]
                if loaded:
                    raise SystemExit(f"tracing off loaded {loaded[:3]}")
            times = asyncio.run(_measure(modes, Path(tmpdir), endpoint, args.count, args.rounds))
            for mode in modes:
                per_request = sorted(times[mode])
                results[mode] = (per_request[0] * 1e6, per_request[len(per_request) // 2] * 1e6)
    finally:
        sink.shutdown()
    base = results.get("off", (0.0, 0.0))[0]
    print(f"CPU µs per non-streaming request, best and median of {args.rounds} rounds of {args.count}:")
    for mode, (best, median) in results.items():
        extra = f"  (+{best - base:.1f} µs over off)" if mode != "off" and base else ""
        print(f"  {mode:<18} best {best:7.1f}  median {median:7.1f}{extra}")
    print(f"measured {time.strftime('%Y-%m-%d %H:%M')} UTC")


if __name__ == "__main__":
    main()
