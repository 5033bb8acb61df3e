"""The agent platform's own errors, end to end (issue 11 §1): each REAL agent CLI (the Claude Code
bundled with the SDK, Codex, Gemini CLI, Aider from `.ci/install-agents.sh`) runs a one-task plan
through the orchestrator (`api.run`, in process) against its scripted model server on 127.0.0.1,
which answers with an HTTP error; the test asserts what the orchestrator did: waited for a reset,
backed off and ran the attempt again without spending it, or asked a person (`external_service`)
with the table's one-sentence why. The agents' own retries are turned off (Claude Code:
`CLAUDE_CODE_MAX_RETRIES=0`; Codex: `request_max_retries`/`stream_max_retries` 0) or the errors
chosen are ones they do not retry (Gemini CLI and Aider on 401/403/billing); back-off delays are
shrunk through the table's own data (`transitions.BACKOFF`)."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import needs_claude_binary

from agent_cli_helpers import require_cli
from orchestrator import api, transitions
from orchestrator.rows import AttemptRow, EscalationRow
from orchestrator.rules.platform import KINDS
from orchestrator.store import Store
from orchestrator.testing import AnthropicServer, Fail, Text, ToolCall
from orchestrator.testing.gemini import GeminiServer
from orchestrator.testing.openai_chat import ChatCompletionsServer
from orchestrator.testing.openai_responses import ResponsesServer

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transitions, "BACKOFF", (0.2, 0.4, 0.6))


def run(tmp: Path, agent: str, options: dict[str, Any], **settings: Any) -> Store:
    """One task (`hello.py` must exist), run to its end or its first question; the store."""
    (tmp / "plan.md").write_text(
        textwrap.dedent("""\
            # Hello
            ## Task 1.1: Create hello.py
            **Description:** Create hello.py that prints hello.
            **Tests:**
            ```bash
            test -f hello.py
            ```
            """)
    )
    (tmp / "work").mkdir(exist_ok=True)
    db = f"sqlite:///{tmp / 'state.db'}"
    api.run(
        tmp / "plan.md",
        agent=agent,
        workdir=str(tmp / "work"),
        db=db,
        wait="no-wait",
        interactive=False,
        checkpoints=False,
        verify_milestone=False,
        **{agent: options},
        **settings,
    )
    return api.open_store(db)


def attempts(store: Store) -> list[AttemptRow]:
    run_id = store.latest_run_id()
    assert run_id is not None
    return store.attempts(run_id)


def escalation(store: Store) -> EscalationRow:
    [esc] = store.escalations(store.latest_run_id(), open_only=True)
    return esc


def task_row(store: Store) -> Any:
    run_id = store.latest_run_id()
    assert run_id is not None
    return store.task(run_id, "1.1")


def assert_asks_for(store: Store, kind: str) -> EscalationRow:
    esc = escalation(store)
    assert esc["category"] == "external_service"
    assert esc["why"] == KINDS[kind].why
    assert esc["detail"]["platform"] == kind
    assert esc["options"] == ["Retry now", "Skip this task", "Abort the run"]
    assert esc["question"].endswith("?") and "see its output" not in esc["question"]
    assert task_row(store)["status"] == "PAUSED_FOR_INTERVENTION"
    return esc


def assert_backed_off_then_done(store: Store, backoffs: int) -> None:
    rows = attempts(store)
    assert [a["decision"] for a in rows] == ["backoff"] * backoffs + ["complete"], rows
    assert [a["verdict"] for a in rows[:-1]] == ["rate_limited"] * backoffs
    row = task_row(store)
    assert row["status"] == "COMPLETED"
    assert row["attempts_since_resume"] == 0  # the backed-off attempts were not spent


# -- Claude Code ---------------------------------------------------------------------------------
def claude_options(server: AnthropicServer, tmp: Path) -> dict[str, Any]:
    return {"env": server.claude_code_env(tmp / "home")}  # CLAUDE_CODE_MAX_RETRIES=0


def claude_write(tmp: Path) -> ToolCall:
    return ToolCall("Write", {"file_path": str(tmp / "work" / "hello.py"), "content": "print(1)\n"})


@pytest.mark.claude
@needs_claude_binary
def test_claude_overloaded_529_backs_off_without_spending_an_attempt(tmp_path: Path) -> None:
    script = [Fail(529), claude_write(tmp_path), "Created hello.py."]
    with AnthropicServer(script) as server:
        store = run(tmp_path, "claude", claude_options(server, tmp_path))
    assert_backed_off_then_done(store, 1)
    assert (tmp_path / "work" / "hello.py").is_file()


@pytest.mark.claude
@needs_claude_binary
def test_claude_rate_limit_naming_its_reset_waits_then_completes(tmp_path: Path) -> None:
    limit = Fail(429, message="Rate limit exceeded. Please try again in 2 seconds.")
    script = [limit, claude_write(tmp_path), "Created hello.py."]
    with AnthropicServer(script) as server:
        started = time.monotonic()
        store = run(tmp_path, "claude", claude_options(server, tmp_path))
    rows = attempts(store)
    assert [a["decision"] for a in rows] == ["wait", "complete"]
    assert rows[0]["verdict"] == "rate_limited" and "429" in (rows[0]["error_summary"] or "")
    assert time.monotonic() - started >= 1.5  # it slept until the reset
    assert task_row(store)["attempts_since_resume"] == 0


@pytest.mark.claude
@needs_claude_binary
def test_claude_invalid_key_401_asks_a_person_with_the_why(tmp_path: Path) -> None:
    with AnthropicServer([], when_exhausted=Fail(401, message="invalid x-api-key")) as server:
        store = run(tmp_path, "claude", claude_options(server, tmp_path))
    esc = assert_asks_for(store, "authentication")
    assert "Claude Code" in esc["question"] and "renew the API key" in esc["question"]
    assert [a["decision"] for a in attempts(store)] == ["escalate"]


@pytest.mark.claude
@needs_claude_binary
def test_claude_overloaded_every_time_backs_off_three_times_then_asks(tmp_path: Path) -> None:
    with AnthropicServer([], when_exhausted=Fail(529)) as server:
        store = run(tmp_path, "claude", claude_options(server, tmp_path))
    rows = attempts(store)
    assert [a["decision"] for a in rows] == ["backoff", "backoff", "backoff", "escalate"]
    assert_asks_for(store, "overloaded")
    assert task_row(store)["attempts_since_resume"] == 0  # nothing was spent on the outage


@pytest.mark.claude
@needs_claude_binary
def test_claude_max_turns_is_retried_with_guidance_to_go_on(tmp_path: Path) -> None:
    look = ToolCall("Bash", {"command": "ls", "description": "List files"})
    script = [look, claude_write(tmp_path), "Created hello.py."]
    with AnthropicServer(script) as server:
        options = claude_options(server, tmp_path) | {"max_turns": 1}
        store = run(tmp_path, "claude", options)
        rows = attempts(store)
        assert rows[0]["decision"] == "retry"
        assert "ran out of turns" in (rows[0]["guidance"] or "")
        assert task_row(store)["attempts_since_resume"] >= 1  # this one is spent


# -- Codex -----------------------------------------------------------------------------------------
def codex_options(server: ResponsesServer, tmp: Path) -> dict[str, Any]:
    return {
        "cli_path": require_cli("codex", "npm @openai/codex"),
        "base_url": server.base_url,
        "model": "scripted-model",
        "env": server.codex_env(tmp / "home"),
        "config": {
            "model_providers.orchestrator.request_max_retries": 0,
            "model_providers.orchestrator.stream_max_retries": 0,
        },
    }


CODEX_WRITE = ToolCall("exec_command", {"cmd": "printf 'print(1)\\n' > hello.py"})


def test_codex_usage_limit_already_reset_backs_off_then_completes(tmp_path: Path) -> None:
    # a plan's usage limit: Codex prints "… or try again at 12:00 PM" (local time, minutes only);
    # a reset time already past is backed off from (briefly, not counted), never spun on
    limit = Fail(
        429,
        body={
            "error": {
                "type": "usage_limit_reached",
                "message": "The usage limit has been reached",
                "plan_type": "plus",
                "resets_at": int(time.time()) - 90,
            }
        },
    )
    with ResponsesServer([limit, CODEX_WRITE, Text("Created hello.py")]) as server:
        store = run(tmp_path, "codex", codex_options(server, tmp_path))
    rows = attempts(store)
    assert "try again at" in (rows[0]["error_summary"] or "")
    assert_backed_off_then_done(store, 1)


def test_codex_usage_limit_resetting_too_late_asks_a_person(tmp_path: Path) -> None:
    later = int(time.time()) + 5 * 3600
    limit = Fail(429, body={"error": {"type": "usage_limit_reached", "resets_at": later}})
    with ResponsesServer([], when_exhausted=limit) as server:
        store = run(tmp_path, "codex", codex_options(server, tmp_path), rate_limit_wait=60.0)
    esc = assert_asks_for(store, "usage_limit")
    assert esc["detail"]["retry_at"] is not None and "it resets at" in esc["question"]


def test_codex_rate_limit_without_a_reset_backs_off(tmp_path: Path) -> None:
    # with its own retries off Codex says only "exceeded retry limit, last status: 429 …"
    with ResponsesServer([Fail(429), CODEX_WRITE, Text("Created hello.py")]) as server:
        store = run(tmp_path, "codex", codex_options(server, tmp_path))
    assert_backed_off_then_done(store, 1)


def test_codex_server_error_backs_off_without_spending_an_attempt(tmp_path: Path) -> None:
    with ResponsesServer([Fail(500), CODEX_WRITE, Text("Created hello.py")]) as server:
        store = run(tmp_path, "codex", codex_options(server, tmp_path))
    assert_backed_off_then_done(store, 1)


def test_codex_invalid_key_asks_a_person_with_the_why(tmp_path: Path) -> None:
    bad_key = Fail(401, message="Incorrect API key provided: test-key.")
    with ResponsesServer([], when_exhausted=bad_key) as server:
        store = run(tmp_path, "codex", codex_options(server, tmp_path))
    esc = assert_asks_for(store, "authentication")
    assert "Codex" in esc["question"]


# -- Gemini CLI -------------------------------------------------------------------------------------
def gemini_options(server: GeminiServer, tmp: Path) -> dict[str, Any]:
    return {
        "cli_path": require_cli("gemini", "npm @google/gemini-cli"),
        "base_url": server.url,
        "model": "scripted-model",
        "env": server.gemini_env(tmp / "home"),
    }


def test_gemini_invalid_key_asks_a_person_with_the_why(tmp_path: Path) -> None:
    with GeminiServer([], when_exhausted=Fail(401, message="API key not valid.")) as server:
        store = run(tmp_path, "gemini", gemini_options(server, tmp_path))
    esc = assert_asks_for(store, "authentication")
    assert "Gemini CLI" in esc["question"]
    assert len(server.model_requests) == 1  # one attempt, no back-off: a key needs a person


def test_gemini_permission_denied_asks_a_person(tmp_path: Path) -> None:
    denied = Fail(403, message="Permission denied on resource project scripted.")
    with GeminiServer([], when_exhausted=denied) as server:
        store = run(tmp_path, "gemini", gemini_options(server, tmp_path))
    assert_asks_for(store, "permission")


def test_gemini_daily_quota_exhausted_asks_a_person(tmp_path: Path) -> None:
    # a per-day quota is terminal for Gemini CLI (no retries of its own): no reset it can name
    message = (
        "Quota exceeded for quota metric 'Generate Content API requests per day' and limit "
        "'GenerateContent request limit per day' of service 'generativelanguage.googleapis.com'"
    )
    violation = {"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}
    body = {
        "error": {
            "code": 429,
            "message": message,
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [violation],
                }
            ],
        }
    }
    with GeminiServer([], when_exhausted=Fail(429, body=body)) as server:
        store = run(tmp_path, "gemini", gemini_options(server, tmp_path))
    esc = assert_asks_for(store, "quota")
    assert "quota" in esc["question"]
    assert len(server.model_requests) == 1


# -- Aider ----------------------------------------------------------------------------------------
def aider_options(server: ChatCompletionsServer, tmp: Path) -> dict[str, Any]:
    return {
        "cli_path": require_cli("aider", "PyPI aider-chat"),
        "base_url": server.base_url,
        "model": "scripted-model",
        "env": server.aider_env(tmp / "home"),
    }


def test_aider_credit_exhausted_asks_a_person_for_credit(tmp_path: Path) -> None:
    # Anthropic's wording; a 400 that litellm raises as BadRequestError (aider does not retry it)
    no_credit = Fail(
        400,
        message="Your credit balance is too low to access the API. Please go to Plans & Billing "
        "to upgrade or purchase credits.",
    )
    with ChatCompletionsServer([], when_exhausted=no_credit) as server:
        store = run(tmp_path, "aider", aider_options(server, tmp_path))
    esc = assert_asks_for(store, "billing")
    assert "add credit" in esc["question"]


def test_aider_invalid_key_asks_a_person_with_the_why(tmp_path: Path) -> None:
    bad_key = Fail(401, message="Incorrect API key provided: test-key.")
    with ChatCompletionsServer([], when_exhausted=bad_key) as server:
        store = run(tmp_path, "aider", aider_options(server, tmp_path))
    assert_asks_for(store, "authentication")
