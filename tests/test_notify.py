"""Notifications, delivered for real by apprise to an HTTP receiver on 127.0.0.1: the question
arrives before the run pauses or prompts, a dead or hanging channel costs at most the timeout,
and no channel's secret is ever shown or stored."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.helpers import EXAMPLES, cli, cli_env, cli_popen, status_json, terminal

from orchestrator.config import NotifyConfig
from orchestrator.events import RunFinished, Waiting
from orchestrator.observers.notify import Message, Notifier, deliver, with_ntfy_extras
from orchestrator.plans import load_plan
from orchestrator.redaction import redact_text, redact_url
from orchestrator.store import Store

AMBIGUOUS = str(EXAMPLES / "ambiguous_task.md")
PROMPT = b"Your response (or 'skip' for recommendation)"


class Receiver:
    """An HTTP server on 127.0.0.1 recording each request with its arrival time; with `hang`
    it never answers (until closed)."""

    def __init__(self, hang: bool = False) -> None:
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append(
                    {
                        "t": time.time(),
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": body.decode(),
                    }
                )
                if hang:
                    outer.release.wait(30)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"id": "m1"}')

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def notify_env(urls: list[str], **extra: str) -> dict[str, str]:
    return {"ORCHESTRATOR_NOTIFY__URLS": json.dumps(urls)} | extra


def timed_lines(proc: subprocess.Popen[str]) -> list[tuple[float, str]]:
    """Each stdout line with the time it was read."""
    assert proc.stdout is not None
    return [(time.time(), line) for line in proc.stdout]


def first(lines: list[tuple[float, str]], text: str) -> float:
    return next(t for t, line in lines if text in line)


def events(tmp: Path, kind: str) -> list[dict[str, Any]]:
    run_id = status_json(tmp)["run"]["id"]
    return Store(f"sqlite:///{tmp / 'state.db'}").events(run_id, kind)


def test_json_webhook_has_the_question_before_the_run_pauses(
    tmp_path: Path, receiver: Receiver
) -> None:
    url = f"json://127.0.0.1:{receiver.port}/hook"
    proc = cli_popen(
        tmp_path,
        *("run", AMBIGUOUS, "--agent", "replay", "--workdir", "w", "--no-wait"),
        **notify_env([url], ORCHESTRATOR_NOTIFY__EVENTS='["escalation", "run_finished"]'),
    )
    lines = timed_lines(proc)
    assert proc.wait(timeout=60) == 3, proc.stderr.read() if proc.stderr else ""
    paused = first(lines, "PAUSED_FOR_INTERVENTION (escalation")
    [req] = receiver.requests  # a paused run (exit 3) is neither finished nor failed
    assert req["path"] == "/hook" and req["t"] < paused
    body = json.loads(req["body"])
    message = body["message"]
    assert body["title"] == "orchestrator: task 1.1 needs you"
    assert "doesn't specify the type. What would you prefer?" in message
    for option in ("A) Redis (distributed, persistent)", "B) In-memory (fast, local only)"):
        assert option in message
    assert "Recommendation: B for simplicity" in message
    assert "Why: I found multiple valid approaches" in message
    run_id = status_json(tmp_path)["run"]["id"]
    assert "orchestrator answer 1 --option A" in message
    assert f"then: orchestrator resume {run_id}" in message
    assert "web page" not in message  # no public_url: no link
    [sent] = events(tmp_path, "notification_sent")
    assert sent["task_id"] == "1.1"
    assert sent["payload"]["channel"] == f"json://127.0.0.1:{receiver.port}/<redacted>"
    assert sent["payload"] | {"duration_s": 0} == {
        "event": "escalation",
        "escalation_id": 1,
        "channel": sent["payload"]["channel"],
        "duration_s": 0,
    }


def test_ntfy_has_the_question_and_answer_buttons_before_the_terminal_prompt(
    tmp_path: Path, receiver: Receiver
) -> None:
    env = cli_env(
        tmp_path,
        **notify_env(
            [f"ntfy://127.0.0.1:{receiver.port}/orchestrator-topic"],
            ORCHESTRATOR_NOTIFY__EVENTS='["escalation", "run_finished"]',
            ORCHESTRATOR_NOTIFY__PUBLIC_URL="https://orch.example.net/",
            ORCHESTRATOR_SERVE_TOKEN="serve-token-123",
        ),
    )
    term = terminal(
        tmp_path,
        ["run", AMBIGUOUS, *("--agent", "replay", "--workdir", "w")],
        [(PROMPT, b"B")],
        env=env,
        timeout=60,
    )
    text = term.text
    assert term.code == 0, text
    assert term.typed_at, text
    prompted = term.typed_at[0]
    asked, finished = receiver.requests
    assert asked["t"] < prompted
    assert asked["path"] == "/"  # ntfy's JSON publish: the topic is in the body
    body = json.loads(asked["body"])
    assert body["topic"] == "orchestrator-topic"
    assert "What would you prefer?" in body["message"]
    assert "C) File-based (simple, persistent)" in body["message"]
    assert "or at the terminal, where the run is asking now" in body["message"]
    assert "or on the web page: https://orch.example.net/" in body["message"]
    assert asked["headers"]["X-Click"] == "https://orch.example.net/"
    buttons = json.loads(asked["headers"]["X-Actions"])
    assert [b["label"] for b in buttons] == [
        "A) Redis (distributed, persistent)",
        "B) In-memory (fast, local only)",
        "C) File-based (simple, persistent)",
    ]
    for button, key in zip(buttons, "ABC", strict=True):
        assert button["action"] == "http" and button["method"] == "POST"
        assert button["url"] == "https://orch.example.net/api/escalations/1/answer"
        assert button["headers"]["Authorization"] == "Bearer serve-token-123"
        assert json.loads(button["body"]) == {"option": key, "channel": "ntfy"}
    assert "Run " in json.loads(finished["body"])["message"]
    assert "1.1 Implement caching: COMPLETED" in json.loads(finished["body"])["message"]
    assert json.loads(finished["body"])["title"] == "orchestrator: run finished"
    assert [e["payload"]["event"] for e in events(tmp_path, "notification_sent")] == [
        "escalation",
        "run_finished",
    ]


def test_a_waiting_run_is_answered_from_what_the_notification_says(
    tmp_path: Path, receiver: Receiver
) -> None:
    proc = cli_popen(
        tmp_path,
        *("run", AMBIGUOUS, "--agent", "replay", "--workdir", "w", "--wait"),
        **notify_env([f"json://127.0.0.1:{receiver.port}/"]),
    )
    deadline = time.monotonic() + 60
    while not receiver.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    message = json.loads(receiver.requests[0]["body"])["message"]
    assert "the run is waiting and goes on by itself" in message
    command = re.search(r"orchestrator answer (\d+) --recommended", message)
    assert command is not None, message
    assert cli(tmp_path, "answer", command[1], "--option", "B").returncode == 0
    assert proc.wait(timeout=60) == 0
    esc = json.loads(cli(tmp_path, "escalations", "--all", "--json").stdout)[0]
    assert (esc["channel"], esc["response"]) == ("cli", "B) In-memory (fast, local only)")


def test_dead_and_hanging_channels_cost_at_most_the_timeout_and_are_recorded(
    tmp_path: Path,
) -> None:
    hanging = Receiver(hang=True)
    dead = f"json://me:hunter2secret@127.0.0.1:{refused_port()}/hook"
    try:
        proc = cli_popen(
            tmp_path,
            *("run", AMBIGUOUS, "--agent", "replay", "--workdir", "w", "--no-wait"),
            **notify_env(
                [dead, f"ntfy://127.0.0.1:{hanging.port}/t0pic"],
                ORCHESTRATOR_NOTIFY__TIMEOUT="2",
            ),
        )
        lines = timed_lines(proc)
        assert proc.wait(timeout=60) == 3
        stderr = proc.stderr.read() if proc.stderr else ""
    finally:
        hanging.close()
    [held] = hanging.requests
    assert first(lines, "PAUSED_FOR_INTERVENTION (escalation") - held["t"] < 2 + 1.5
    failed = events(tmp_path, "notification_failed")
    assert sorted(e["payload"]["channel"] for e in failed) == sorted(
        [
            f"json://<redacted>@127.0.0.1:{dead.rsplit(':', 1)[1].split('/')[0]}/<redacted>",
            f"ntfy://127.0.0.1:{hanging.port}/<redacted>",
        ]
    )
    assert all(e["payload"]["error"] for e in failed)
    assert "notification to json://<redacted>@127.0.0.1" in stderr
    run = Store(f"sqlite:///{tmp_path / 'state.db'}").run(status_json(tmp_path)["run"]["id"])
    assert run is not None
    assert json.loads(run["settings_json"])["notify"]["urls"] == "<redacted>"
    everything = stderr + "".join(line for _, line in lines) + json.dumps(failed)
    everything += run["settings_json"]
    assert "hunter2secret" not in everything and "t0pic" not in everything


def test_config_show_and_errors_never_show_a_notify_secret(tmp_path: Path) -> None:
    (tmp_path / "orchestrator.toml").write_text(
        '[notify]\nurls = ["tgram://123456:BOTTOKENabc/98765", "json://u:pw9secret@hooks.example.com/h"]\n'
    )
    shown = cli(tmp_path, "config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    urls = json.loads(shown.stdout)["settings"]["notify.urls"]["value"]
    assert urls == ["tgram://<redacted>", "json://<redacted>@hooks.example.com/<redacted>"]
    text = cli(tmp_path, "config", "show").stdout
    assert "BOTTOKEN" not in text and "pw9secret" not in text and "98765" not in text
    bad = cli(tmp_path, "config", "show", ORCHESTRATOR_NOTIFY__URLS='["BOTTOKENxyz"]')
    assert bad.returncode == 2
    assert "entry 1 is not an apprise URL" in bad.stderr and "BOTTOKENxyz" not in bad.stderr


def test_redaction_and_ntfy_extras() -> None:
    assert redact_url("discord://1234/abcd") == "discord://<redacted>"
    assert redact_url("ntfys://ntfy.sh/my-topic?token=tk_1") == "ntfys://ntfy.sh/<redacted>"
    assert redact_url("mailto://me:pw@gmail.com") == "mailto://<redacted>@gmail.com"
    assert redact_text("failed: slack://T1/B2/C3/#chan.") == "failed: slack://<redacted>"
    assert redact_text("see https://example.com/docs") == "see https://example.com/docs"
    msg = Message("t", "b", [{"action": "http", "label": "50%20 off"}], "https://x.example/")
    url = with_ntfy_extras("ntfy://h.example/t?priority=high", msg)
    assert url.startswith("ntfy://h.example/t?priority=high&actions=")
    import apprise

    plugin = apprise.Apprise.instantiate(url)
    assert plugin is not None
    assert json.loads(plugin._NotifyNtfy__actions)[0]["label"] == "50%20 off"  # type: ignore[attr-defined]
    assert with_ntfy_extras("json://h.example/x", msg) == "json://h.example/x"


def test_deliver_gives_up_on_a_hanging_channel_at_the_timeout() -> None:
    hanging = Receiver(hang=True)
    try:
        t0 = time.monotonic()
        [(channel, error, _)] = deliver(
            [f"json://127.0.0.1:{hanging.port}/x"], Message("t", "b"), 0.5
        )
        assert time.monotonic() - t0 < 1.0
    finally:
        hanging.close()
    assert channel == f"json://127.0.0.1:{hanging.port}/<redacted>" and error


def test_an_ntfy_button_answers_through_serve_and_the_waiting_run_completes(
    tmp_path: Path, receiver: Receiver
) -> None:
    """What a tap does: the button's own request (method, URL, headers, body) against a real
    `orchestrator serve` with a token; the `--wait` runner takes the answer and finishes."""
    token = {"ORCHESTRATOR_SERVE_TOKEN": "tok-e2e-123"}
    serve = cli_popen(tmp_path, "serve", "--port", "0", "--no-resume", **token)
    try:
        assert serve.stdout is not None
        found = re.search(r"http://127\.0\.0\.1:\d+", serve.stdout.readline())
        assert found is not None
        run = cli_popen(
            tmp_path,
            *("run", AMBIGUOUS, "--agent", "replay", "--workdir", "w", "--wait"),
            **notify_env(
                [f"ntfy://127.0.0.1:{receiver.port}/topic"],
                ORCHESTRATOR_NOTIFY__PUBLIC_URL=found[0],
                **token,
            ),
        )
        deadline = time.monotonic() + 60
        while not receiver.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        button = json.loads(receiver.requests[0]["headers"]["X-Actions"])[1]
        tap = httpx.request(
            button["method"], button["url"], headers=button["headers"], content=button["body"]
        )
        assert tap.status_code == 200, tap.text
        assert run.wait(timeout=60) == 0
    finally:
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(timeout=10)
    esc = json.loads(cli(tmp_path, "escalations", "--all", "--json").stdout)[0]
    assert (esc["channel"], esc["response"]) == ("ntfy", "B) In-memory (fast, local only)")


def test_a_failed_run_is_sent_only_when_run_failed_is_asked_for(
    tmp_path: Path, receiver: Receiver
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'state.db'}")
    store.create_run("r1", load_plan(EXAMPLES / "hello.md"), tmp_path, "replay", {})
    summary = [{"task_id": "1.1", "title": "Parse", "status": "FAILED", "cost_usd": 0.25}]
    failed = RunFinished("r1", "FAILED", 1, 42.0, summary)
    url = f"form://127.0.0.1:{receiver.port}/end"
    Notifier(NotifyConfig(urls=[url]), store).notify(failed)  # default: escalations only
    assert receiver.requests == []
    asked = NotifyConfig(urls=[url], events=["run_failed"], public_url="http://h.example:1/")
    Notifier(asked, store).notify(failed)
    Notifier(asked, store).notify(RunFinished("r1", "COMPLETED", 0, 1.0, summary))
    [req] = receiver.requests
    assert "title=orchestrator%3A+run+failed" in req["body"]
    assert "1.1+Parse%3A+FAILED" in req["body"] and "%240.25" in req["body"]
    assert "http%3A%2F%2Fh.example%3A1%2F" in req["body"]  # the web page, no double slash
    [sent] = store.events("r1", "notification_sent")
    assert sent["payload"]["event"] == "run_failed" and sent["task_id"] is None


def test_a_long_wait_for_a_limit_reset_is_told_by_default_a_short_one_is_not(
    tmp_path: Path, receiver: Receiver
) -> None:
    """A usage limit that resets hours away is waited out (the run is idle on purpose): the
    person hears when it will go on, and that there is nothing to answer."""
    store = Store(f"sqlite:///{tmp_path / 'state.db'}")
    store.create_run("r1", load_plan(EXAMPLES / "hello.md"), tmp_path, "replay", {})
    url = f"json://127.0.0.1:{receiver.port}/wait"
    reason = "Claude Code: 5-hour limit reached ∙ resets 3am"
    notifier = Notifier(NotifyConfig(urls=[url]), store)
    notifier.notify(Waiting("r1", "1.1", time.time() + 60, reason))  # a back-off: not worth it
    assert receiver.requests == []
    notifier.notify(Waiting("r1", "1.1", time.time() + 3 * 3600, reason))
    [req] = receiver.requests
    body = json.loads(req["body"])
    assert "waiting 3.0 h" in body["title"] or "waiting 2.9 h" in body["title"], body
    assert "task 1.1" in body["message"] and "resets 3am" in body["message"]
    assert "Nothing to answer" in body["message"]
    [sent] = store.events("r1", "notification_sent")
    assert sent["payload"]["event"] == "wait" and sent["task_id"] == "1.1"
    quiet = Notifier(NotifyConfig(urls=[url], events=["escalation"]), store)
    quiet.notify(Waiting("r1", "1.1", time.time() + 3 * 3600, reason))
    assert len(receiver.requests) == 1
