"""The store's metrics: `metrics.read` on known rows (SQLite and, where reachable, PostgreSQL),
`/metrics` behind the server's token rule, a real Prometheus scraping a real `orchestrator serve`
while seed 000's scenarios A and B run, and the Grafana dashboard built on the same names."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import insert
from tests.helpers import EXAMPLES, ROOT, cli, cli_popen

from orchestrator import metrics
from orchestrator.models import Plan, Task
from orchestrator.schema import attempts, escalations
from orchestrator.store import Store

PG_URL = os.environ.get("ORCHESTRATOR_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
PROMETHEUS = Path("/usr/bin/prometheus")
DASHBOARD = ROOT / "docs" / "grafana-dashboard.json"
TOKEN = "metrics-token-0123456789"


def until(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    """Poll a condition every 0.2 s until a deadline (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


# -- read() on known rows -----------------------------------------------------------------------
def _attempt(run: str, task: str, n: int, **values: Any) -> dict[str, Any]:
    return {
        "run_id": run,
        "task_id": task,
        "number": n,
        "started_at": 1000.0,
        "artifact_dir": f"/x/{task}/attempt-{n}",
        "verdict": None,
        "duration_s": None,
        "cost_usd": None,
        "model": None,
        **values,
    }


def _escalation(run: str, task: str, **values: Any) -> dict[str, Any]:
    return {
        "run_id": run,
        "task_id": task,
        "question": "Which cache?",
        "options_json": "[]",
        "detail_json": "{}",
        "created_at": 1000.0,
        "category": None,
        "channel": None,
        "answered_at": None,
        "wait_s": None,
        **values,
    }


def _seed(store: Store, tmp_path: Path) -> None:
    plan = Plan(
        path="p.md",
        format="milestone",
        tasks=[Task(id="1.1", title="one"), Task(id="1.2", title="two"), Task(id="E2E", title="v")],
    )
    store.create_run("r1", plan, tmp_path, "replay", {})
    store.create_run("r2", plan, tmp_path, "claude", {})
    store.update_task("r1", "1.1", status="COMPLETED")
    store.update_task("r1", "1.2", status="PAUSED_FOR_INTERVENTION")
    store.set_run_status("r1", "PAUSED")
    with store.tx() as conn:
        conn.execute(
            insert(attempts),
            [
                _attempt("r1", "1.1", 1, agent="replay", verdict="failed", duration_s=0.5),
                _attempt("r1", "1.1", 2, agent="replay", verdict="completed", duration_s=3.0),
                _attempt(
                    "r2", "1.1", 1, agent="claude", model="sonnet", verdict="completed",
                    duration_s=45.0, cost_usd=0.25,
                ),
                _attempt(
                    "r2", "1.2", 1, agent="claude", model="sonnet", verdict="failed",
                    duration_s=9000.0, cost_usd=1.5,
                ),
                _attempt(
                    "r2", "1.2", 2, agent="claude", model="opus", verdict="needs_human",
                    duration_s=20.0, cost_usd=2.0,
                ),
                _attempt("r2", "E2E", 1, agent="claude", model="opus"),  # still running
            ],
        )  # fmt: skip
        conn.execute(
            insert(escalations),
            [
                _escalation(
                    "r1", "1.1", level=2, category="ambiguous_requirements", status="answered",
                    channel="web", answered_at=1040.0, wait_s=40.0,
                ),
                _escalation(
                    "r1", "1.2", level=2, category="ambiguous_requirements", status="answered",
                    channel="cli", answered_at=8200.0, wait_s=7200.0,
                ),
                _escalation("r2", "1.2", level=2, status="open"),
                _escalation("r2", "E2E", level=1, category="external_service", status="open"),
            ],
        )  # fmt: skip
    finished = {"attempt": 3, "verdict": "failed", "action": "escalate"}
    store.add_event(
        "r1",
        "attempt_finished",
        {**finished, "reason": "Task 1.2 failed 3 times with similar errors", "loop": "repeated"},
        "1.2",
    )
    store.add_event(
        "r2",
        "attempt_finished",
        {**finished, "reason": "Task 1.2 is oscillating between two errors", "loop": "oscillation"},
        "1.2",
    )
    store.add_event(
        "r2",
        "attempt_finished",
        {**finished, "reason": "Milestone verification failed 5 times (limit 5)", "loop": "max_attempts"},
        "E2E",
    )  # fmt: skip
    # no loop, though the reason quotes what a loop's payload looks like
    store.add_event(
        "r2",
        "attempt_finished",
        {**finished, "reason": 'agent said {"loop": "repeated"}', "loop": None},
        "1.1",
    )


def test_read_on_known_rows(store: Store, tmp_path: Path) -> None:
    _seed(store, tmp_path)
    series = {s.name: s for s in metrics.read(store)}
    assert set(series) == {
        "orchestrator_escalations_total",
        "orchestrator_open_escalations",
        "orchestrator_human_wait_seconds",
        "orchestrator_loops_detected_total",
        "orchestrator_attempts_total",
        "orchestrator_cost_usd_total",
        "orchestrator_attempt_duration_seconds",
        "orchestrator_tasks",
        "orchestrator_runs",
    }
    esc = series["orchestrator_escalations_total"]
    assert esc.kind == "counter" and esc.labels == ("category", "level", "channel")
    assert {s.labels: s.value for s in esc.samples} == {
        (("category", "ambiguous_requirements"), ("level", "2"), ("channel", "cli")): 1,
        (("category", "ambiguous_requirements"), ("level", "2"), ("channel", "web")): 1,
        (("category", "none"), ("level", "2"), ("channel", "none")): 1,
        (("category", "external_service"), ("level", "1"), ("channel", "none")): 1,
    }
    assert series["orchestrator_open_escalations"].value() == 2

    wait = series["orchestrator_human_wait_seconds"]
    assert wait.kind == "histogram" and wait.bounds == metrics.WAIT_BUCKETS
    by_channel = {h.labels: h for h in wait.histograms}
    web, cli_wait = by_channel[(("channel", "web"),)], by_channel[(("channel", "cli"),)]
    assert (web.count, web.sum, cli_wait.count, cli_wait.sum) == (1, 40.0, 1, 7200.0)
    assert dict(zip(wait.bounds, web.buckets, strict=True))[30] == 0
    assert dict(zip(wait.bounds, web.buckets, strict=True))[60] == 1
    assert dict(zip(wait.bounds, cli_wait.buckets, strict=True))[3600] == 0
    assert dict(zip(wait.bounds, cli_wait.buckets, strict=True))[3 * 3600] == 1

    loops = series["orchestrator_loops_detected_total"]
    assert loops.value(type="task", kind="repeated") == 1
    assert loops.value(type="task", kind="oscillation") == 1
    assert loops.value(type="e2e", kind="max_attempts") == 1
    assert sum(s.value for s in loops.samples) == 3  # every type and kind is there, from 0

    att = series["orchestrator_attempts_total"]
    assert {s.labels: s.value for s in att.samples} == {
        (("agent", "replay"), ("verdict", "failed")): 1,
        (("agent", "replay"), ("verdict", "completed")): 1,
        (("agent", "claude"), ("verdict", "completed")): 1,
        (("agent", "claude"), ("verdict", "failed")): 1,
        (("agent", "claude"), ("verdict", "needs_human")): 1,
    }  # the running attempt has no verdict yet
    cost = series["orchestrator_cost_usd_total"]
    assert cost.value(agent="claude", model="sonnet") == pytest.approx(1.75)
    assert cost.value(agent="claude", model="opus") == pytest.approx(2.0)
    assert cost.value(agent="replay", model="none") == 0

    dur = {h.labels: h for h in series["orchestrator_attempt_duration_seconds"].histograms}
    claude, replay = dur[(("agent", "claude"),)], dur[(("agent", "replay"),)]
    assert (claude.count, claude.sum, replay.count, replay.sum) == (3, 9065.0, 2, 3.5)
    bounds = metrics.ATTEMPT_BUCKETS
    assert dict(zip(bounds, replay.buckets, strict=True))[1] == 1
    assert dict(zip(bounds, replay.buckets, strict=True))[5] == 2
    assert dict(zip(bounds, claude.buckets, strict=True))[30] == 1
    assert dict(zip(bounds, claude.buckets, strict=True))[60] == 2
    assert claude.buckets[-1] == 2 and claude.per_bucket()[-1] == 1  # 9000 s: only +Inf

    tasks_ = series["orchestrator_tasks"]
    assert tasks_.value(status="PENDING") == 4  # r1's E2E and r2's three (rows inserted directly)
    assert tasks_.value(status="COMPLETED") == 1
    assert tasks_.value(status="PAUSED_FOR_INTERVENTION") == 1
    assert tasks_.value(status="RUNNING") == 0 and len(tasks_.samples) == 6
    assert series["orchestrator_runs"].value(status="PAUSED") == 1
    assert series["orchestrator_runs"].value(status="RUNNING") == 1


def test_exposition_is_prometheus_text(tmp_path: Path) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    from orchestrator.prometheus import exposition

    store = Store(f"sqlite:///{tmp_path / 'state.db'}")
    _seed(store, tmp_path)
    families = {f.name: f for f in text_string_to_metric_families(exposition(store).decode())}
    store.close()
    assert families["orchestrator_escalations"].type == "counter"
    assert families["orchestrator_human_wait_seconds"].type == "histogram"
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in families.values()
        for s in f.samples
    }
    assert (
        samples[("orchestrator_loops_detected_total", (("kind", "repeated"), ("type", "task")))]
        == 1
    )
    assert (
        samples[("orchestrator_human_wait_seconds_bucket", (("channel", "web"), ("le", "+Inf")))]
        == 1
    )
    assert samples[("orchestrator_attempt_duration_seconds_sum", (("agent", "claude"),))] == 9065
    assert samples[("orchestrator_open_escalations", ())] == 2
    names = {name for name, _ in samples}
    assert names <= metrics.names(), names - metrics.names()


# -- /metrics and the token rule ------------------------------------------------------------------
def test_metrics_needs_the_token_off_loopback(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from orchestrator.web.app import create_app

    store = Store(f"sqlite:///{tmp_path / 'state.db'}")
    served = create_app(store, token=TOKEN, loopback=False)
    with TestClient(served, base_url="http://192.0.2.10:8765") as client:
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and ok.headers["content-type"].startswith("text/plain")
        assert "orchestrator_open_escalations 0.0" in ok.text
    tokenless = create_app(store, token=None, loopback=False)  # `serve` never builds this: refused
    with TestClient(tokenless, base_url="http://192.0.2.10:8765") as client:
        assert client.get("/metrics").status_code == 403
    loopback = create_app(store, token=None, loopback=True)
    with TestClient(loopback, base_url="http://127.0.0.1:8765") as client:
        assert client.get("/metrics").status_code == 200  # open on loopback
        assert client.get("/metrics", headers={"Host": "evil.example:8765"}).status_code == 421
    store.close()


# -- a real Prometheus scraping a real `orchestrator serve` ----------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.mark.skipif(
    not PROMETHEUS.is_file(),
    reason=f"needs Debian's prometheus ({PROMETHEUS}; apt-get install prometheus)",
)
def test_prometheus_scrapes_seed_000_scenarios(tmp_path: Path) -> None:
    server = cli_popen(tmp_path, "serve", "--port", "0", ORCHESTRATOR_SERVE_TOKEN=TOKEN)
    prom: subprocess.Popen[bytes] | None = None
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert match, (
            line,
            server.stderr.read() if server.poll() is not None and server.stderr else "",
        )
        target = f"127.0.0.1:{match.group(1)}"
        refused = httpx.get(f"http://{target}/metrics", trust_env=False)
        assert refused.status_code == 401  # with a token set, a scrape must send it

        prom_port = _free_port()
        (tmp_path / "prometheus.yml").write_text(
            json.dumps(  # YAML is a superset of JSON
                {
                    "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                    "scrape_configs": [
                        {
                            "job_name": "orchestrator",
                            "scrape_interval": "1s",
                            "scrape_timeout": "1s",
                            "authorization": {"type": "Bearer", "credentials": TOKEN},
                            "static_configs": [{"targets": [target]}],
                        }
                    ],
                }
            )
        )
        prom_log = (tmp_path / "prometheus.log").open("wb")
        prom = subprocess.Popen(
            [
                str(PROMETHEUS),
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
            ],
            cwd=tmp_path,
            stdout=prom_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        api = httpx.Client(base_url=f"http://127.0.0.1:{prom_port}", trust_env=False, timeout=5)

        # seed 000's scenario A: the ambiguous task asks, a human answers B, the run completes
        first = cli(tmp_path, "run", str(EXAMPLES / "ambiguous_task.md"), "--agent", "replay",
                    "--workdir", "a", "--no-wait")  # fmt: skip
        assert first.returncode == 3, first.stdout + first.stderr
        esc = json.loads(cli(tmp_path, "escalations", "--json").stdout)[0]
        assert cli(tmp_path, "answer", str(esc["id"]), "--option", "B").returncode == 0
        done = cli(tmp_path, "resume")
        assert done.returncode == 0, done.stdout + done.stderr
        # scenario B: the doomed task fails alike three times: LOOP DETECTED, a human is asked
        doomed = cli(tmp_path, "run", str(EXAMPLES / "doomed_to_fail.md"), "--agent", "replay",
                     "--workdir", "b", "--no-wait")  # fmt: skip
        assert doomed.returncode == 3, doomed.stdout + doomed.stderr
        assert "LOOP DETECTED" in doomed.stdout

        def query(promql: str) -> float | None:
            try:
                reply = api.get("/api/v1/query", params={"query": promql})
            except httpx.TransportError:  # Prometheus is still starting
                return None
            data = reply.json()
            if reply.status_code != 200 or data["status"] != "success":
                return None
            result = data["data"]["result"]
            return sum(float(r["value"][1]) for r in result) if result else None

        def scraped() -> bool:
            return all(
                (value := query(q)) is not None and value >= want
                for q, want in (
                    ("orchestrator_escalations_total", 2),
                    ('orchestrator_loops_detected_total{type="task"}', 1),
                    ("orchestrator_human_wait_seconds_count", 1),
                    ("orchestrator_open_escalations", 1),
                )
            )

        def why() -> str:
            try:
                targets = api.get("/api/v1/targets").json()["data"]["activeTargets"]
            except (httpx.HTTPError, ValueError, KeyError):
                targets = "Prometheus not answering"
            return f"targets: {targets}\nlog: {(tmp_path / 'prometheus.log').read_text()[-3000:]}"

        try:
            until(scraped, "Prometheus to answer the store's escalations and loops", timeout=90)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{why()}") from None
        # the seed's own query, exactly
        reply = api.get("/api/v1/query", params={"query": "orchestrator_escalations_total"}).json()
        series = {
            (r["metric"]["channel"], r["metric"]["category"]) for r in reply["data"]["result"]
        }
        assert ("cli", "ambiguous_requirements") in series and ("none", "none") in series
        # Prometheus holds what the store says (the runs are over: nothing changes any more)
        store = Store(f"sqlite:///{tmp_path / 'state.db'}")
        now = {m.name: m for m in metrics.read(store)}
        store.close()
        for verdict in ("failed", "needs_human", "completed"):
            want = now["orchestrator_attempts_total"].value(agent="replay", verdict=verdict)
            got = query(f'orchestrator_attempts_total{{agent="replay",verdict="{verdict}"}}')
            assert (got or 0.0) == want, (verdict, got, want)
        assert now["orchestrator_attempts_total"].value(agent="replay", verdict="failed") >= 3
        assert query('orchestrator_tasks{status="PAUSED_FOR_INTERVENTION"}') == 1
        assert query('up{job="orchestrator"}') == 1
    finally:
        if prom is not None:
            _stop(prom)
        _stop(server)


# -- the Grafana dashboard --------------------------------------------------------------------------
PROMQL_FUNCTIONS = {
    "sum", "rate", "increase", "histogram_quantile", "by", "without", "le", "max", "min", "avg",
    "count", "topk", "clamp_min", "irate", "delta", "vector", "or", "and", "on", "ignoring",
}  # fmt: skip


def _exprs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                yield value
            else:
                yield from _exprs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _exprs(item)


def test_grafana_dashboard_uses_only_the_metrics_read_produces() -> None:
    board = json.loads(DASHBOARD.read_text())
    assert board["schemaVersion"] >= 36 and board["title"]
    inputs = {i["name"] for i in board.get("__inputs", [])}
    assert "DS_PROMETHEUS" in inputs
    exprs = list(_exprs(board["panels"]))
    assert len(exprs) >= 8
    known = metrics.names()
    used: set[str] = set()
    for expr in exprs:
        without_strings = re.sub(r'"[^"]*"|\[[^\]]*\]', "", expr)
        without_labels = re.sub(
            r"\{[^}]*\}|\bby\s*\([^)]*\)|\bwithout\s*\([^)]*\)", "", without_strings
        )
        names = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", without_labels)) - PROMQL_FUNCTIONS
        names = {n for n in names if not re.fullmatch(r"[0-9.e]+", n)}
        assert names <= known, (expr, names - known)
        used |= names
    wanted = {
        "orchestrator_escalations_total",
        "orchestrator_loops_detected_total",
        "orchestrator_attempts_total",
        "orchestrator_cost_usd_total",
        "orchestrator_attempt_duration_seconds_bucket",
        "orchestrator_human_wait_seconds_bucket",
        "orchestrator_open_escalations",
        "orchestrator_tasks",
    }
    assert wanted <= used, wanted - used
    for panel in board["panels"]:
        if panel.get("type") != "row":
            assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}", panel["title"]
