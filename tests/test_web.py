"""`orchestrator serve`: the JSON API with httpx against the real server (a subprocess on
127.0.0.1, shared by this module), a terminal prompt racing a web answer, and the inbox in a real
headless Chromium: see the ambiguous task's question, click B, watch the `--wait` runner finish."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.helpers import EXAMPLES, ROOT, cli, cli_env, cli_popen

AMBIGUOUS = str(EXAMPLES / "ambiguous_task.md")
TOKEN = "test-token-0123456789"
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def until(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    """Poll a condition with a deadline (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class Served:
    def __init__(self, tmp: Path, url: str) -> None:
        self.tmp, self.url = tmp, url
        self.http = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, trust_env=False
        )

    def open_escalation(self, run_id: str) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            rows = self.http.get("/api/escalations").json()["escalations"]
            return next((e for e in rows if e["run_id"] == run_id), None)

        esc: dict[str, Any] = until(found, f"run {run_id}'s question")
        return esc

    def answer(self, esc_id: int, body: Any, **kw: Any) -> httpx.Response:
        return self.http.post(f"/api/escalations/{esc_id}/answer", json=body, **kw)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One `orchestrator serve --port 0` for the module, over its own store, with a token."""
    tmp = tmp_path_factory.mktemp("serve")
    proc = cli_popen(tmp, "serve", "--port", "0", ORCHESTRATOR_SERVE_TOKEN=TOKEN)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        assert TOKEN not in line  # a token from the environment is never printed
        yield Served(tmp, match.group(0))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def paused_run(tmp: Path) -> str:
    """The ambiguous task, paused on its question (exit 3)."""
    proc = cli(tmp, "run", AMBIGUOUS, "--agent", "replay", "--workdir", "w", "--no-wait")
    assert proc.returncode == 3, proc.stderr
    runs = json.loads(cli(tmp, "runs", "--json").stdout)
    return str(runs[0]["id"])


def test_the_api_answers_once_and_resumes_a_paused_run(served: Served) -> None:
    run_id = paused_run(served.tmp)
    esc = served.open_escalation(run_id)
    assert esc["question"].startswith("The task says to add caching")
    assert [c["key"] for c in esc["choices"]] == ["A", "B", "C"]
    assert any(r["id"] == run_id for r in served.http.get("/api/runs").json()["runs"])
    run = served.http.get(f"/api/runs/{run_id}").json()
    assert run["run"]["status"] == "PAUSED" and not run["held"]
    assert "settings_json" not in run["run"]
    assert run["tasks"][0]["status"] == "PAUSED_FOR_INTERVENTION"

    bad = served.answer(esc["id"], {"option": "Z"})
    assert bad.status_code == 400 and "valid: A, B, C" in bad.json()["error"]
    assert served.answer(esc["id"], {"option": "B", "text": "x"}).status_code == 400
    assert served.answer(esc["id"], {"action": "dance"}).status_code == 400
    assert served.answer(99999, {"option": "B"}).status_code == 404
    form = served.http.post(f"/api/escalations/{esc['id']}/answer", data={"option": "B"})
    assert form.status_code == 415

    ok = served.answer(esc["id"], {"option": "B"})
    assert ok.status_code == 200, ok.text
    row = ok.json()["escalation"]
    assert (row["channel"], row["response"]) == ("web", "B) In-memory (fast, local only)")
    assert ok.json()["resume"]["started"] is True
    again = served.answer(esc["id"], {"action": "skip"})
    assert again.status_code == 409 and "already answered" in again.json()["error"]

    done = until(
        lambda: (
            (d := served.http.get(f"/api/runs/{run_id}").json())["run"]["status"] == "COMPLETED"
            and d
        ),
        "the background resume to complete the run",
    )
    assert done["tasks"][0]["status"] == "COMPLETED" and done["tasks"][0]["attempts"] == 2
    log = done["resumes"][0]["log"]
    assert log.startswith("resume-") and log.endswith(".log")
    attempt = done["tasks"][0]["attempt_rows"][0]
    assert "1.1/attempt-1/prompt.md" in attempt["files"]

    page = served.http.get(f"/runs/{run_id}")
    assert page.status_code == 200 and "Resumed in the background" in page.text
    prompt = served.http.get(f"/runs/{run_id}/files/1.1/attempt-1/prompt.md")
    assert prompt.status_code == 200 and "Implement caching" in prompt.text
    assert prompt.headers["content-type"].startswith("text/plain")
    (served.tmp / "runs" / run_id / "out").symlink_to(served.tmp / "state.db")
    for outside in ("%2e%2e/%2e%2e/state.db", "..%2F..%2Fstate.db", "%2Fetc%2Fpasswd", "out"):
        assert served.http.get(f"/runs/{run_id}/files/{outside}").status_code == 404, outside
    missing = served.http.get("/api/runs/no-such-run")
    assert missing.status_code == 404 and "no run" in missing.json()["error"]


def test_token_cookie_and_cross_site_posts(served: Served) -> None:
    anon = httpx.Client(base_url=served.url, trust_env=False)
    assert anon.get("/api/escalations").status_code == 401
    assert anon.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    first = anon.get("/runs?token=" + TOKEN)
    assert first.status_code == 303 and first.headers["location"] == "/runs"
    assert (
        "HttpOnly" in first.headers["set-cookie"] and "SameSite=Lax" in first.headers["set-cookie"]
    )
    assert anon.get("/runs").status_code == 200  # the cookie from now on
    hostile = served.http.post(
        "/api/escalations/1/answer",
        json={"option": "B"},
        headers={"Origin": "http://evil.example"},
    )
    assert hostile.status_code == 403
    page = served.http.get("/")
    assert page.headers["x-frame-options"] == "DENY"
    assert "default-src 'self'" in page.headers["content-security-policy"]


def test_loopback_answers_only_to_its_own_host_names(tmp_path: Path) -> None:
    """Without a token, a DNS-rebound name pointing at 127.0.0.1 gets nothing."""
    from starlette.testclient import TestClient

    from orchestrator.store import Store
    from orchestrator.web.app import create_app

    app = create_app(Store(f"sqlite:///{tmp_path / 'state.db'}"), token=None, loopback=True)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.get("/api/escalations").json() == {"escalations": []}
        assert client.get("/", headers={"Host": "localhost:8765"}).status_code == 200
        assert client.get("/", headers={"Host": "evil.example:8765"}).status_code == 421


def test_a_terminal_prompt_shows_the_web_answer_that_won(served: Served) -> None:
    """The runner asks at a real terminal; the answer comes from the web page first."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "orchestrator",
            "run",
            AMBIGUOUS,
            "--agent",
            "replay",
            "--workdir",
            "term",
        ],
        cwd=served.tmp,
        env=cli_env(served.tmp),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    try:

        def read() -> bytes:
            nonlocal seen
            if select.select([master], [], [], 0.1)[0]:
                with contextlib.suppress(OSError):
                    seen += os.read(master, 4096)
            return seen

        try:
            until(lambda: b"Your response" in read(), "the terminal prompt")
        except AssertionError:
            raise AssertionError(seen.decode(errors="replace")) from None
        runs = served.http.get("/api/runs").json()["runs"]
        run_id = next(r["id"] for r in runs if r["workdir"].endswith("term"))
        esc = served.open_escalation(run_id)
        ok = served.answer(esc["id"], {"option": "C"})
        assert ok.status_code == 200 and ok.json()["resume"]["held"] is True
        until(lambda: (read(), proc.poll() is not None)[1], "the run to finish")
        read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        os.close(master)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode("utf-8", errors="replace"))
    assert proc.wait(timeout=10) == 0, text
    assert "Answered elsewhere (web" in text and "C) File-based" in text, text
    assert "Task 1.1: COMPLETED" in text
    row = served.http.get(f"/api/runs/{run_id}").json()["escalations"][0]
    assert (row["channel"], row["response_kind"]) == ("web", "option")


@pytest.mark.skipif(
    not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()),
    reason="needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)",
)
def test_the_inbox_in_a_real_browser(served: Served, tmp_path: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    runner = cli_popen(
        served.tmp, "run", AMBIGUOUS, "--agent", "replay", "--workdir", "browser", "--wait"
    )
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--no-proxy-server"):
        options.add_argument(arg)
    options.add_argument("--window-size=1000,900")
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    try:
        runs = until(
            lambda: [
                r
                for r in served.http.get("/api/runs").json()["runs"]
                if r["workdir"].endswith("browser")
            ],
            "the --wait run",
        )
        esc = served.open_escalation(runs[0]["id"])
        driver.get(f"{served.url}/?token={TOKEN}")  # the printed link: a cookie, then the inbox
        card = until(lambda: driver.find_elements(By.ID, f"esc-{esc['id']}"), "the card")[0]
        assert "doesn't specify the type" in card.text and "Redis" in card.text
        assert "Recommendation: B for simplicity" in card.text
        shot = tmp_path / "inbox.png"
        driver.save_screenshot(str(shot))
        if os.environ.get("ORCHESTRATOR_UPDATE_SCREENSHOT") == "1":
            shutil.copy(shot, ROOT / "docs" / "inbox.png")
        card.find_element(By.CSS_SELECTOR, 'button[data-value="B"]').click()
        status = card.find_element(By.CSS_SELECTOR, ".status")
        until(lambda: "Answered: B) In-memory" in status.text, "the page to confirm")
        assert "waiting runner picks it up" in status.text
        driver.save_screenshot(str(tmp_path / "answered.png"))
        assert runner.wait(timeout=60) == 0, runner.communicate()
    finally:
        driver.quit()
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    row = served.http.get(f"/api/runs/{runs[0]['id']}").json()["escalations"][0]
    assert row["channel"] == "web" and row["wait_s"] > 0
    assert row["response"] == "B) In-memory (fast, local only)"
