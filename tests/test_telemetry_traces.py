"""Issue 10, traces: real runs through the CLI export over OTLP/HTTP to a receiver this test runs
on 127.0.0.1, decoded with OpenTelemetry's own protobuf classes."""

from __future__ import annotations

import gzip
import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from tests.helpers import EXAMPLES, cli, cli_popen

AMBIGUOUS = str(EXAMPLES / "ambiguous_task.md")
DOOMED = str(EXAMPLES / "doomed_to_fail.md")
FAKE_KEY = "acme-fake-secret-4f9c2b7d1e"
"""A credential's value, in a `*_API_KEY` variable and in text an agent and a human write."""
HEADER_SECRET = "hdr-fake-secret-8a1d5c3e9f"
"""A `[telemetry] headers` value: sent to the collector, never stored, never in a span."""


@dataclass
class Received:
    body: bytes
    headers: dict[str, str]
    request: ExportTraceServiceRequest


@dataclass
class Receiver:
    url: str
    requests: list[Received] = field(default_factory=list)
    metrics: list[ExportMetricsServiceRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def spans(self, trace_id: str | None = None) -> list[dict[str, Any]]:
        """Every span received (of one trace), flattened with its resource and attributes."""
        out = []
        with self.lock:
            reqs = list(self.requests)
        for r in reqs:
            for rs in r.request.resource_spans:
                resource = {a.key: _value(a.value) for a in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        span = {
                            "name": s.name,
                            "trace_id": s.trace_id.hex(),
                            "span_id": s.span_id.hex(),
                            "parent": s.parent_span_id.hex() or None,
                            "start": s.start_time_unix_nano,
                            "end": s.end_time_unix_nano,
                            "attrs": {a.key: _value(a.value) for a in s.attributes},
                            "events": [e.name for e in s.events],
                            "status": s.status.code,
                            "resource": resource,
                        }
                        if trace_id is None or span["trace_id"] == trace_id:
                            out.append(span)
        return out


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    rec = Receiver("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path == "/v1/traces":
                req = ExportTraceServiceRequest()
                req.ParseFromString(body)
                with rec.lock:
                    rec.requests.append(Received(body, dict(self.headers.items()), req))
                reply = ExportTraceServiceResponse().SerializeToString()
            else:
                mreq = ExportMetricsServiceRequest()
                mreq.ParseFromString(body)
                with rec.lock:
                    rec.metrics.append(mreq)
                reply = b""
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    rec.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield rec
    server.shutdown()
    server.server_close()


def _otel(rec: Receiver, **extra: str) -> Any:
    """The environment pointing a run at the receiver (Any: spread as `cli`'s `**env`)."""
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": rec.url, **extra}


def _trace_of(tmp: Path) -> tuple[str, str, dict[str, Any]]:
    """(run id, trace id, stored settings) of the only run in the test's store."""
    with sqlite3.connect(tmp / "state.db") as conn:
        run_id, settings = conn.execute("SELECT id, settings_json FROM runs").fetchone()
    meta = json.loads(settings)
    return run_id, meta["otel"]["trace_id"], meta


def _by_id(spans: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {s["span_id"]: s for s in spans}


def test_paused_then_resumed_run_is_one_trace_with_a_long_escalation_span(
    tmp_path: Path, receiver: Receiver
) -> None:
    env = _otel(receiver, OTEL_SERVICE_NAME="orch-test")
    first = cli(
        tmp_path, "run", AMBIGUOUS, "--agent", "replay", "--workdir", "w", "--no-wait", **env
    )
    assert first.returncode == 3, first.stdout + first.stderr
    run_id, trace_id, _ = _trace_of(tmp_path)
    paused = receiver.spans(trace_id)
    assert {s["name"] for s in paused} >= {"orchestrator.run", "orchestrator.task"}
    assert "orchestrator.escalation" not in {s["name"] for s in paused}  # not answered yet

    escs = json.loads(cli(tmp_path, "escalations", "--json").stdout)
    assert cli(tmp_path, "answer", str(escs[0]["id"]), "--option", "B").returncode == 0
    done = cli(tmp_path, "resume", **env)
    assert done.returncode == 0, done.stdout + done.stderr

    spans = receiver.spans(trace_id)
    ids = _by_id(spans)
    names = [s["name"] for s in spans]
    (run,) = [s for s in spans if s["name"] == "orchestrator.run"]
    (resumed,) = [s for s in spans if s["name"] == "orchestrator.resume"]
    assert run["parent"] is None and resumed["parent"] == run["span_id"]  # one trace, two processes
    assert (
        run["attrs"]["orchestrator.run.id"] == run_id
        and resumed["attrs"]["orchestrator.run.resumed"]
    )
    assert run["resource"]["service.name"] == "orch-test" and "service.version" in run["resource"]
    assert run["attrs"]["orchestrator.run.status"] == "PAUSED"
    assert resumed["attrs"]["orchestrator.run.status"] == "COMPLETED"
    for s in spans:
        if s["name"] == "orchestrator.task":
            assert ids[s["parent"]]["name"] in ("orchestrator.run", "orchestrator.resume")
        if s["name"] == "orchestrator.attempt":
            assert ids[s["parent"]]["name"] == "orchestrator.task"
        if s["name"] == "orchestrator.gate":
            assert ids[s["parent"]]["name"] == "orchestrator.attempt"
            assert "orchestrator.gate.command" in s["attrs"] and "process.exit.code" in s["attrs"]
    attempts = sorted(
        (s for s in spans if s["name"] == "orchestrator.attempt"),
        key=lambda s: s["attrs"]["orchestrator.attempt.number"],
    )
    assert [a["attrs"]["orchestrator.attempt.verdict"] for a in attempts] == ["failed", "completed"]
    assert attempts[0]["attrs"]["orchestrator.attempt.outcome"] == "escalate"
    assert attempts[0]["attrs"]["orchestrator.attempt.category"] == "ambiguous_requirements"
    assert attempts[1]["attrs"]["orchestrator.cost_usd"] == pytest.approx(0.04)
    assert attempts[1]["attrs"]["orchestrator.agent"] == "replay"
    passed = [
        s
        for s in spans
        if s["name"] == "orchestrator.gate" and s["parent"] == attempts[1]["span_id"]
    ]
    assert len(passed) == 2 and all(g["attrs"]["process.exit.code"] == 0 for g in passed)
    assert names.count("orchestrator.gate") == 4  # the question's attempt left them failing

    (esc,) = [s for s in spans if s["name"] == "orchestrator.escalation"]
    assert (
        esc["parent"] == run["span_id"]
    )  # opened by the first process, answered before the second
    a = esc["attrs"]
    assert a["escalation.question"].startswith("The task says to add caching")
    assert len(a["escalation.question"]) <= 200
    assert a["escalation.response"].startswith("B) In-memory")
    assert a["escalation.channel"] == "cli" and a["escalation.category"] == "ambiguous_requirements"
    assert a["escalation.options"][1] == "In-memory (fast, local only)"
    assert a["escalation.wait_seconds"] > 0
    with sqlite3.connect(tmp_path / "state.db") as conn:
        created, answered = conn.execute(
            "SELECT created_at, answered_at FROM escalations"
        ).fetchone()
    assert abs(esc["start"] / 1e9 - created) < 0.01 and abs(esc["end"] / 1e9 - answered) < 0.01
    assert esc["start"] < run["end"] < esc["end"] <= resumed["start"]  # spans the pause


def test_loop_detected_and_consultant_spans(tmp_path: Path, receiver: Receiver) -> None:
    proc = cli(
        tmp_path,
        "run",
        DOOMED,
        "--agent",
        "replay",
        "--workdir",
        "w",
        "--no-wait",
        "--consultant",
        **_otel(receiver),
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    _, trace_id, _ = _trace_of(tmp_path)
    spans = receiver.spans(trace_id)
    ids = _by_id(spans)
    loops = [s for s in spans if s["name"] == "orchestrator.loop_detected"]
    assert loops, [s["name"] for s in spans]
    loop = loops[0]
    assert (
        loop["attrs"]["orchestrator.loop.kind"]
        and loop["attrs"]["orchestrator.loop.similarity"] > 0
    )
    assert loop["attrs"]["orchestrator.loop.reason"]
    assert ids[loop["parent"]]["name"] == "orchestrator.task"
    failed = [s for s in spans if s["name"] == "orchestrator.gate" and s["status"] == 2]
    assert failed and all(s["attrs"]["process.exit.code"] != 0 for s in failed)
    (consult,) = [s for s in spans if s["name"] == "orchestrator.consultant"]
    assert ids[consult["parent"]]["name"] == "orchestrator.task"
    assert consult["attrs"]["orchestrator.consultant.root_cause"]
    assert consult["attrs"]["orchestrator.consultant.hints"]
    third = next(
        s
        for s in spans
        if s["name"] == "orchestrator.attempt" and s["attrs"]["orchestrator.attempt.number"] == 3
    )
    assert third["end"] <= consult["start"] <= consult["end"]  # it read the three failures
    levels = [s for s in spans if "orchestrator.level_reached" in s["events"]]
    assert levels and levels[0]["name"] == "orchestrator.task"


def test_no_secret_in_any_exported_byte(tmp_path: Path, receiver: Receiver) -> None:
    """A credential in the environment, in the agent's question, in a gate command and in the
    human's answer, and a header from `[telemetry]`: none of it in a span or the stored settings."""
    (tmp_path / "p.md").write_text(
        f"# P\n## Task 1.1: Pick\n**Tests:**\n```bash\ntest -f done.txt --token={FAKE_KEY}\n```\n"
    )
    (tmp_path / "p.replay.yaml").write_text(
        "tasks:\n  '1.1':\n"
        f'    - output: "STATUS: needs_human\\nQUESTION: Use key {FAKE_KEY} here?\\n'
        'OPTIONS:\\nA) yes\\nB) no"\n'
        "    - output: done\n      writes: {done.txt: ok}\n"
    )
    (tmp_path / "orchestrator.toml").write_text(
        f'[telemetry]\nservice_name = "orch-secret"\n[telemetry.headers]\nx-team-key = "{HEADER_SECRET}"\n'
    )
    env = _otel(receiver, ACME_API_KEY=FAKE_KEY)
    before = len(receiver.requests)
    first = cli(tmp_path, "run", "p.md", "--agent", "replay", "--workdir", "w", "--no-wait", **env)
    assert first.returncode == 3, first.stdout + first.stderr
    esc = json.loads(cli(tmp_path, "escalations", "--json").stdout)[0]["id"]
    assert cli(tmp_path, "answer", str(esc), f"go on, the key is {FAKE_KEY}").returncode == 0
    cli(tmp_path, "resume", "--no-wait", **env)
    _, trace_id, meta = _trace_of(tmp_path)
    ours = receiver.requests[before:]
    spans = receiver.spans(trace_id)
    assert any(s["name"] == "orchestrator.escalation" for s in spans)
    assert spans[0]["resource"]["service.name"] == "orch-secret"
    assert ours and all(r.headers.get("x-team-key") == HEADER_SECRET for r in ours)
    for r in ours:
        assert FAKE_KEY.encode() not in r.body and HEADER_SECRET.encode() not in r.body
    assert meta["telemetry"]["headers"] == {"x-team-key": "<redacted>"}
    with sqlite3.connect(tmp_path / "state.db") as conn:
        stored = "".join(str(row) for row in conn.execute("SELECT * FROM runs"))
    assert HEADER_SECRET not in stored


def test_off_and_free_when_nothing_is_configured(tmp_path: Path) -> None:
    """No endpoint: the CLI never imports OpenTelemetry and a run starts no exporter thread."""
    code = (
        "import sys, threading\n"
        "from orchestrator import api, cli\n"
        "out = api.run(sys.argv[1], agent='replay', workdir=sys.argv[2], wait='no-wait',"
        " checkpoints=False)\n"
        "assert out.exit_code == 0, out\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
        "print([t.name for t in threading.enumerate() if t is not threading.main_thread()])\n"
    )
    env = {k: v for k, v in _clean_env(tmp_path).items() if not k.startswith("OTEL_")}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(EXAMPLES / "hello.md"), str(tmp_path / "w")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    modules, threads = proc.stdout.strip().splitlines()[-2:]
    assert modules == "[]" and "Otel" not in threads, proc.stdout


def _clean_env(tmp: Path) -> dict[str, str]:
    from tests.helpers import cli_env

    return cli_env(tmp)


def _run_hello(tmp: Path, rec: Receiver, **env: str) -> Any:
    """`orchestrator run examples/hello.md --agent replay` with the receiver and `env` set."""
    return cli(
        tmp,
        "run",
        str(EXAMPLES / "hello.md"),
        "--agent",
        "replay",
        "--workdir",
        "w",
        **_otel(rec, **env),
    )


def test_sdk_disabled_exports_nothing(tmp_path: Path, receiver: Receiver) -> None:
    before = len(receiver.requests)
    proc = _run_hello(tmp_path, receiver, OTEL_SDK_DISABLED="true")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(receiver.requests) == before
    with sqlite3.connect(tmp_path / "state.db") as conn:
        assert "otel" not in json.loads(
            conn.execute("SELECT settings_json FROM runs").fetchone()[0]
        )


def test_the_standard_sampler_variable_decides_for_the_whole_trace(
    tmp_path: Path, receiver: Receiver
) -> None:
    """`OTEL_TRACES_SAMPLER=always_off`: the run's trace is recorded as not sampled and none of its
    spans is exported (spans are made by hand, so the sampler is asked for the trace's root)."""
    proc = _run_hello(tmp_path, receiver, OTEL_TRACES_SAMPLER="always_off")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _, trace_id, meta = _trace_of(tmp_path)
    assert meta["otel"]["sampled"] is False
    assert receiver.spans(trace_id) == []


def _points(req: ExportMetricsServiceRequest) -> dict[str, list[tuple[dict[str, Any], Any]]]:
    """Metric name → (attributes, value or histogram count) of every point in one push."""
    out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
    for rm in req.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                for p in getattr(m, kind).data_points:
                    attrs = {a.key: _value(a.value) for a in p.attributes}
                    value = p.count if kind == "histogram" else p.as_double or p.as_int
                    out.setdefault(m.name, []).append((attrs, value))
    return out


def test_metrics_pushed_from_the_store_at_run_end(tmp_path: Path, receiver: Receiver) -> None:
    before = len(receiver.metrics)
    proc = cli(
        tmp_path,
        "run",
        DOOMED,
        "--agent",
        "replay",
        "--workdir",
        "w",
        "--no-wait",
        **_otel(receiver),
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    (push,) = receiver.metrics[before:]
    points = _points(push)
    loops = dict((a["type"], v) for a, v in points["orchestrator_loops_detected"])
    assert loops["task"] >= 1
    assert sum(v for _, v in points["orchestrator_escalations"]) >= 1
    assert sum(v for _, v in points["orchestrator_attempt_duration_seconds"]) >= 3
    resource = {a.key: _value(a.value) for a in push.resource_metrics[0].resource.attributes}
    assert resource["service.name"] == "orchestrator"


def _poll(what: Any, timeout: float = 60) -> Any:
    """`what()` once it is truthy (another process is getting there)."""
    deadline = time.monotonic() + timeout
    while not (value := what()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
    return value


def _open_escalations(tmp: Path) -> list[Any] | None:
    if not (tmp / "state.db").exists():
        return None
    with sqlite3.connect(tmp / "state.db") as conn:
        try:
            return conn.execute("SELECT id FROM escalations WHERE status = 'open'").fetchall()
        except sqlite3.OperationalError:  # the schema is being made
            return None


def test_waiting_run_answered_from_another_process(tmp_path: Path, receiver: Receiver) -> None:
    """--wait: one process asks and applies the answer; the escalation span is the task's child."""
    proc = cli_popen(
        tmp_path,
        "run",
        AMBIGUOUS,
        "--agent",
        "replay",
        "--workdir",
        "w",
        "--wait",
        **_otel(receiver),
    )
    try:
        (esc_id,) = _poll(lambda: _open_escalations(tmp_path))[0]
        assert cli(tmp_path, "answer", str(esc_id), "--recommended").returncode == 0
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    _, trace_id, _ = _trace_of(tmp_path)
    spans = receiver.spans(trace_id)
    ids = _by_id(spans)
    assert "orchestrator.resume" not in {s["name"] for s in spans}
    (esc,) = [s for s in spans if s["name"] == "orchestrator.escalation"]
    assert ids[esc["parent"]]["name"] == "orchestrator.task"
    assert esc["attrs"]["escalation.response_kind"] == "recommended"
    assert esc["attrs"]["escalation.wait_seconds"] > 0


def test_interrupted_run_flushes_its_spans(tmp_path: Path, receiver: Receiver) -> None:
    """SIGTERM mid-attempt: the run ends INTERRUPTED (exit 143) and its spans are exported."""
    (tmp_path / "p.md").write_text("# P\n## Task 1.1: Slow\nDo it.\n")
    (tmp_path / "p.replay.yaml").write_text("tasks:\n  '1.1':\n    - {output: done, delay: 60}\n")
    proc = cli_popen(
        tmp_path, "run", "p.md", "--agent", "replay", "--workdir", "w", **_otel(receiver)
    )
    try:
        _poll(
            lambda: (
                (tmp_path / "runs").is_dir() and list((tmp_path / "runs").glob("*/1.1/attempt-1"))
            )
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
    _, trace_id, _ = _trace_of(tmp_path)
    spans = receiver.spans(trace_id)
    (run,) = [s for s in spans if s["name"] == "orchestrator.run"]
    assert run["attrs"]["orchestrator.run.status"] == "INTERRUPTED"
    (attempt,) = [s for s in spans if s["name"] == "orchestrator.attempt"]
    assert attempt["attrs"]["orchestrator.ended_by"] == "run_interrupted"


def test_the_standard_variables_win_over_the_telemetry_section() -> None:
    from orchestrator import telemetry
    from orchestrator.config import TelemetryConfig

    cfg = TelemetryConfig(
        otlp_endpoint="http://cfg:4318/", service_name="cfg", headers={"A": "1", "b": "2"}
    )
    assert not telemetry.enabled("traces", TelemetryConfig(), {})  # nothing set: off
    assert telemetry.enabled("traces", cfg, {})
    assert telemetry.endpoint("traces", cfg, {}) == "http://cfg:4318/v1/traces"
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318"}
    assert telemetry.endpoint("metrics", cfg, env) == "http://env:4318/v1/metrics"
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "http://own/path"
    assert telemetry.endpoint("traces", cfg, env) == "http://own/path"
    assert not telemetry.enabled("traces", cfg, {"OTEL_SDK_DISABLED": "True"})
    assert not telemetry.enabled("traces", cfg, {"OTEL_TRACES_EXPORTER": "none"})
    assert telemetry.enabled("metrics", cfg, {"OTEL_TRACES_EXPORTER": "none"})
    assert telemetry.config_headers("traces", cfg, {"OTEL_EXPORTER_OTLP_HEADERS": "a=9"}) == {
        "b": "2"
    }
    assert telemetry.service_name(cfg, {}) == "cfg"
    assert telemetry.service_name(TelemetryConfig(), {}) == "orchestrator"
    assert telemetry.service_name(cfg, {"OTEL_SERVICE_NAME": "env"}) is None  # the SDK reads it
    assert telemetry.timeout("traces", {}) == telemetry.EXPORT_TIMEOUT
    assert telemetry.timeout("traces", {"OTEL_EXPORTER_OTLP_TIMEOUT": "20"}) is None
