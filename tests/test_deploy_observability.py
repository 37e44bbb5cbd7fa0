"""deploy/prometheus and deploy/grafana: checked with promtool, every series they query shown to exist
after traffic of every kind, and a real Prometheus server scraping a real gateway."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from pathlib import Path

import httpx
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.support import AR_MODEL, METRICS_TOKEN, system_binary, wait_for

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
CHAT = [{"role": "user", "content": "Hi! How was your weekend?"}]
CODE = [{"role": "user", "content": "Write a python function that merges two sorted lists"}]


def test_promtool_accepts_the_config_and_the_rules():
    promtool = system_binary("promtool")
    for args in (
        ["check", "config", str(DEPLOY / "prometheus" / "prometheus.yml")],
        ["check", "rules", str(DEPLOY / "prometheus" / "alerts.yml")],
    ):
        result = subprocess.run([promtool, *args], capture_output=True, text=True, timeout=60, check=False)
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_alert_rules_fire_as_intended():
    promtool = system_binary("promtool")
    result = subprocess.run(
        [promtool, "test", "rules", str(DEPLOY / "prometheus" / "alerts_test.yml")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def queried_metrics() -> set[str]:
    exprs = []
    dashboard = json.loads(DASHBOARD.read_text())
    exprs += dashboard_exprs()  # SQL panels (the ledger) have rawSql, rows have no targets
    exprs += [
        v["query"]["query"] for v in dashboard["templating"]["list"] if isinstance(v.get("query"), dict)
    ]
    rules = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())
    exprs += [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    return set(re.findall(r"\bgateway_[a-z_]+\b", "\n".join(exprs)))


DASHBOARD = DEPLOY / "grafana" / "dashboards" / "diffusion-gateway.json"
ROWS = ["Traffic", "Routing", "Shadow evaluation", "Diffusion", "Backends", "Limits", "Edge", "Usage"]


def dashboard_exprs() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [t["expr"] for p in panels for t in p.get("targets", []) if "expr" in t]


def test_the_dashboard_groups_its_panels_in_rows_by_concern():
    panels = json.loads(DASHBOARD.read_text())["panels"]
    assert panels[0]["type"] == "row", "every panel sits under a row"
    assert [p["title"] for p in panels if p["type"] == "row"] == ROWS
    # Rows in reading order: each row's panels lie below its header and above the next one's.
    tops = [p["gridPos"]["y"] for p in panels]
    assert tops == sorted(tops)
    sizes = [sum(1 for _ in group) for _, group in _by_row(panels)]
    assert all(size >= 2 for size in sizes), sizes


def _by_row(panels: list[dict]) -> list[tuple[str, list[dict]]]:
    out: list[tuple[str, list[dict]]] = []
    for p in panels:
        if p["type"] == "row":
            out.append((p["title"], []))
        else:
            out[-1][1].append(p)
    return out


def test_every_dashboard_query_is_scoped_to_the_chosen_job_and_instance():
    """One Prometheus often scrapes staging and production: without these matchers their series mix."""
    variables = {v["name"]: v for v in json.loads(DASHBOARD.read_text())["templating"]["list"]}
    assert {"datasource", "ledger", "job", "instance", "backend"} <= set(variables)
    exprs = dashboard_exprs()
    assert exprs
    for expr in exprs:
        for selector in re.findall(r"\bgateway_[a-z_]+\b(\{[^}]*\})?", expr):
            assert 'job=~"$job"' in selector and 'instance=~"$instance"' in selector, expr


def test_the_ledger_table_reads_the_datasource_the_viewer_picks():
    variables = {v["name"]: v for v in json.loads(DASHBOARD.read_text())["templating"]["list"]}
    assert variables["ledger"]["type"] == "datasource"
    assert variables["ledger"]["query"] == "grafana-postgresql-datasource"
    sql = [p for p in json.loads(DASHBOARD.read_text())["panels"] if p["type"] == "table"]
    assert sql
    for panel in sql:
        uids = [panel["datasource"]["uid"]] + [t["datasource"]["uid"] for t in panel["targets"]]
        assert set(uids) == {"${ledger}"}


def every_kind_of_traffic(gw) -> None:
    h = {"authorization": f"Bearer {gw.key}"}

    def post(body, **extra):
        return httpx.post(gw.base_url + "/chat/completions", json=body, headers={**h, **extra}, timeout=10)

    post({"model": "auto", "messages": CHAT})  # diffusion
    post({"model": "auto", "messages": CHAT, "stream": True})  # diffusion, streamed
    post({"model": "auto", "messages": CODE, "stream": True})  # autoregressive, streamed
    post(
        {"model": "auto", "messages": CHAT}, **{"x-sim-fault-diffusion": "status=500"}
    )  # fallback on failure
    post({"model": "auto", "messages": CHAT}, **{"x-sim-fault-diffusion": "rough=markup"})  # quality fallback
    post({"model": AR_MODEL, "messages": CHAT, "seed": 1})  # pinned
    httpx.get(gw.base_url + "/models", headers={"authorization": "Bearer gw-wrong"})  # auth failure
    for _ in range(6):  # over the 10 per minute the gateway under test allows: rate limited
        post({"model": "auto", "messages": CHAT})


def test_every_series_the_dashboard_and_alerts_query_exists(make_gateway):
    # Shadow evaluation on: its series (regret, missed savings, verdicts) exist from its start.
    gw = make_gateway(
        routing={"health_interval": 0.2}, limits={"requests_per_minute": 10}, shadow={"share": 1.0}
    )
    every_kind_of_traffic(gw)
    wanted = queried_metrics()
    assert {"gateway_requests_total", "gateway_diffusion_requests_total", "gateway_backend_info"} <= wanted
    assert {"gateway_usage_records_dropped_total", "gateway_route_regret_total"} <= wanted

    def present() -> set[str]:
        text = gw.scrape()
        return {s.name for f in text_string_to_metric_families(text) for s in f.samples}

    # The backends' own metrics arrive with the next scrapes (every routing.health_interval).
    assert wait_for(lambda: wanted <= present(), within=10), sorted(wanted - present())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_real_prometheus_sees_the_sampler_and_entropy_bound_per_request(make_gateway, tmp_path):
    prometheus = system_binary("prometheus")
    gw = make_gateway(limits={"requests_per_minute": 10})
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(DEPLOY / "prometheus" / "alerts.yml")],
        "scrape_configs": [
            {
                "job_name": "gateway",
                "authorization": {"credentials": METRICS_TOKEN},  # the main listener asks for it
                "static_configs": [{"targets": [f"127.0.0.1:{gw.server.port}"]}],
            }
        ],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    proc = subprocess.Popen(
        [
            prometheus,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        assert wait_for(lambda: _ready(f"http://127.0.0.1:{port}"), within=30), "prometheus did not start"
        every_kind_of_traffic(gw)

        def series(query: str) -> list[dict]:
            r = httpx.get(api + "/query", params={"query": query}, timeout=5)
            return r.json()["data"]["result"] if r.status_code == 200 else []

        query = 'gateway_diffusion_requests_total{sampler="entropy_bound", entropy_bound="0.1"}'
        assert wait_for(lambda: len(series(query)) > 0, within=30)
        labels = series(query)[0]["metric"]
        assert (
            labels["backend"] == "diffusion"
            and labels["canvas_length"] == "256"
            and labels["max_steps"] == "48"
        )
        assert wait_for(
            lambda: len(series('gateway_requests_total{backend="autoregressive"}')) > 0, within=30
        )
        # Every dashboard query, its variables as Grafana fills them for "All", is valid PromQL that
        # finds series on a gateway scraped under some job and instance.
        for expr in dashboard_exprs():
            filled = (
                expr.replace("$__rate_interval", "1m")
                .replace('"$job"', '".+"')
                .replace('"$instance"', '".+"')
                .replace('"$backend"', '".*"')
            )
            r = httpx.get(api + "/query", params={"query": filled}, timeout=5)
            assert r.status_code == 200 and r.json()["status"] == "success", (expr, r.text)
        assert len(series('gateway_requests_total{job=~".+", instance=~".+"}')) > 0
        rules = httpx.get(api + "/rules", timeout=5).json()["data"]["groups"][0]["rules"]
        defined = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())["groups"][0]["rules"]
        assert len(rules) == len(defined) and all(r["health"] in ("ok", "unknown") for r in rules)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _ready(base: str) -> bool:
    try:
        return httpx.get(base + "/-/ready", timeout=1).status_code == 200
    except httpx.HTTPError:
        time.sleep(0.1)
        return False
