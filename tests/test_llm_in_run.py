"""The LLM layers inside a real run: `orchestrator run --llm` (the interpreter) and `--brain openai`
(the retry brain), the real CLI as a subprocess, the LLM a scripted OpenAI-compatible server on
127.0.0.1 (`ChatCompletionsServer`, non-streaming JSON replies)."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import cli, status_json

from orchestrator.config import Settings
from orchestrator.interpret import interpret
from orchestrator.judge import Judge
from orchestrator.testing import Fail
from orchestrator.testing.openai_chat import ChatCompletionsServer, user_messages

UNSURE = "I looked at the task. The cache could live in a few places."
"""Replay output the rules are not confident about (asserted below): `--llm` asks the LLM. ('There
are a few ways to do this.' was one until the rules learnt to read it as a choice left to the user.)"""

LLM_QUESTION = "Should the cache live in memory or in Redis?"
LLM_OPTIONS = ["In-memory dict", "Redis"]


def write_plan(tmp: Path, steps: list[dict[str, Any]]) -> Path:
    """One task whose gate really runs (`test -f cache.py`), and its replay scenario beside it."""
    plan = tmp / "plan.md"
    plan.write_text(
        textwrap.dedent("""\
            # Cache

            ## Task 1.1: Add a cache in cache.py
            **Description:** Add a cache module `cache.py`.
            **Tests:**
            ```bash
            test -f cache.py
            ```
            """),
        encoding="utf-8",
    )
    (tmp / "plan.replay.yaml").write_text(
        yaml.safe_dump({"tasks": {"1.1": steps}}), encoding="utf-8"
    )
    (tmp / "work").mkdir(exist_ok=True)
    return plan


def run_with_llm(
    tmp: Path, server: ChatCompletionsServer, *flags: str
) -> subprocess.CompletedProcess[str]:
    return cli(
        tmp,
        "run",
        str(tmp / "plan.md"),
        "--agent",
        "replay",
        "--workdir",
        "work",
        "--no-wait",
        *flags,
        ORCHESTRATOR_LLM_BACKEND="openai",
        ORCHESTRATOR_LLM_BASE_URL=server.base_url,
        ORCHESTRATOR_LLM_MODEL="m",
        ORCHESTRATOR_LLM_API_KEY="test-key",
    )


def show(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def open_escalations(tmp: Path) -> list[dict[str, Any]]:
    proc = cli(tmp, "escalations", "--json")
    assert proc.returncode == 0, show(proc)
    rows: list[dict[str, Any]] = json.loads(proc.stdout) if proc.stdout.strip() else []
    return rows


def interpreter_answer(**fields: Any) -> str:
    """Seed 000's interpreter JSON (plus `category`)."""
    base: dict[str, Any] = {
        "needs_human": False,
        "question": None,
        "options": None,
        "recommendation": None,
        "task_completed": False,
        "task_failed": False,
        "error_message": None,
        "category": None,
    }
    return json.dumps(base | fields)


DONE_STEP = {"output": UNSURE, "writes": {"cache.py": "CACHE = {}\n"}}


def test_the_replay_output_is_one_the_rules_are_unsure_about() -> None:
    rules = interpret(UNSURE)
    assert rules.confident is False and rules.verdict == "completed"


# -- (a) the interpreter LLM decides where the rules are unsure ---------------------------------
def test_llm_interpreter_turns_an_unsure_output_into_a_question(tmp_path: Path) -> None:
    write_plan(tmp_path, [DONE_STEP])
    answer = interpreter_answer(
        needs_human=True,
        question=LLM_QUESTION,
        options=LLM_OPTIONS,
        recommendation="In-memory dict",
        category="ambiguous_requirements",
    )
    with ChatCompletionsServer([answer]) as server:
        proc = run_with_llm(tmp_path, server, "--llm")
    assert proc.returncode == 3, show(proc)
    assert "NEEDS HUMAN INPUT" in proc.stdout
    assert "Traceback" not in proc.stderr

    [req] = server.model_requests
    assert req.body["model"] == "m" and req.body.get("stream") is False
    [prompt] = user_messages(req)
    assert UNSURE in prompt and "needs_human" in prompt  # the output, in seed 000's prompt
    auth = {k.lower(): v for k, v in req.headers.items()}.get("authorization")
    assert auth == "<redacted>"  # the key was sent, and the recording does not keep it

    [esc] = open_escalations(tmp_path)
    assert esc["question"] == LLM_QUESTION
    assert esc["options"] == LLM_OPTIONS
    assert esc["recommendation"] == "In-memory dict"
    assert esc["category"] == "ambiguous_requirements"
    assert esc["detail"]["source"] == "llm"
    data = status_json(tmp_path)
    assert data["tasks"][0]["status"] == "PAUSED_FOR_INTERVENTION"
    assert [a["verdict"] for a in data["attempts"]] == ["needs_human"]


def test_without_llm_the_rules_alone_complete_the_task_and_no_llm_is_asked(
    tmp_path: Path,
) -> None:
    write_plan(tmp_path, [DONE_STEP])
    with ChatCompletionsServer([interpreter_answer(needs_human=True)]) as server:
        proc = run_with_llm(tmp_path, server)
    assert proc.returncode == 0, show(proc)
    assert server.model_requests == []


# -- (b) a broken LLM: the rules' verdict stands -------------------------------------------------
def test_llm_invalid_json_the_rules_verdict_stands(tmp_path: Path) -> None:
    write_plan(tmp_path, [DONE_STEP])
    with ChatCompletionsServer(
        ["Sure! I think the agent is probably fine, no JSON here."]
    ) as server:
        proc = run_with_llm(tmp_path, server, "--llm")
    assert proc.returncode == 0, show(proc)
    assert len(server.model_requests) == 1  # it was asked
    assert "Task 1.1: COMPLETED" in proc.stdout
    assert "LLM interpreter (openai) failed" in proc.stderr  # logged, not swallowed
    assert "Traceback" not in proc.stderr
    assert open_escalations(tmp_path) == []
    assert [a["verdict"] for a in status_json(tmp_path)["attempts"]] == ["completed"]


def test_llm_http_500_the_rules_verdict_stands(tmp_path: Path) -> None:
    write_plan(tmp_path, [DONE_STEP])
    with ChatCompletionsServer([Fail(500)]) as server:
        proc = run_with_llm(tmp_path, server, "--llm")
    assert proc.returncode == 0, show(proc)
    assert len(server.model_requests) == 1
    assert "HTTP 500" in proc.stderr and "Traceback" not in proc.stderr
    assert status_json(tmp_path)["tasks"][0]["status"] == "COMPLETED"


def test_llm_unreachable_the_rules_verdict_stands(tmp_path: Path) -> None:
    write_plan(tmp_path, [DONE_STEP])
    with ChatCompletionsServer([]) as server:
        pass  # stopped: its port now refuses connections
    proc = run_with_llm(tmp_path, server, "--llm")
    assert proc.returncode == 0, show(proc)
    assert "unreachable" in proc.stderr and "Traceback" not in proc.stderr


# -- (c) the retry brain through the same server ------------------------------------------------
FAIL_STEP = {"output": "I wrote the cache somewhere else.", "writes": {"elsewhere.py": "X = 1\n"}}


def test_brain_openai_escalates_after_one_failed_attempt(tmp_path: Path) -> None:
    write_plan(tmp_path, [FAIL_STEP, DONE_STEP])
    reason = "The task needs a decision about where the cache lives"
    answer = json.dumps({"decision": "escalate", "reason": reason, "guidance_for_retry": None})
    with ChatCompletionsServer([answer]) as server:
        proc = run_with_llm(tmp_path, server, "--brain", "openai")
    assert proc.returncode == 3, show(proc)
    assert "Task 1.1: FAILED (attempt 1/3)" in proc.stdout
    [req] = server.model_requests
    [prompt] = user_messages(req)
    assert "retry a failed task or escalate" in prompt  # seed 001's prompt
    assert "Task: 1.1 - Add a cache in cache.py" in prompt
    assert "test -f cache.py" in prompt  # the failed gate is in the attempt history

    data = status_json(tmp_path)
    assert [a["verdict"] for a in data["attempts"]] == ["failed"]
    assert data["tasks"][0]["status"] == "PAUSED_FOR_INTERVENTION"
    [esc] = open_escalations(tmp_path)
    assert reason in esc["question"]


def test_brain_openai_retry_guidance_reaches_the_next_prompt(tmp_path: Path) -> None:
    write_plan(tmp_path, [FAIL_STEP, DONE_STEP])
    answer = json.dumps(
        {
            "decision": "retry",
            "reason": "The file is in the wrong place",
            "guidance_for_retry": "Use pathlib",
        }
    )
    with ChatCompletionsServer([answer]) as server:
        proc = run_with_llm(tmp_path, server, "--brain", "openai")
    assert proc.returncode == 0, show(proc)
    assert len(server.model_requests) == 1  # the second attempt passed: no second opinion needed
    run_id = status_json(tmp_path)["run"]["id"]
    attempts = tmp_path / "runs" / run_id / "1.1"
    assert "Use pathlib" not in (attempts / "attempt-1" / "prompt.md").read_text()
    assert "Use pathlib" in (attempts / "attempt-2" / "prompt.md").read_text()
    data = status_json(tmp_path)
    assert [a["verdict"] for a in data["attempts"]] == ["failed", "completed"]
    assert data["attempts"][0]["guidance"] == "Use pathlib"


def test_brain_openai_broken_llm_falls_back_to_the_rules(tmp_path: Path) -> None:
    write_plan(tmp_path, [FAIL_STEP, DONE_STEP])
    with ChatCompletionsServer([Fail(500)]) as server:
        proc = run_with_llm(tmp_path, server, "--brain", "openai")
    assert proc.returncode == 0, show(proc)  # the rules retried, the second attempt passed
    assert len(server.model_requests) == 1
    assert "brain: LLM backend openai failed" in proc.stderr
    assert [a["verdict"] for a in status_json(tmp_path)["attempts"]] == ["failed", "completed"]


def test_brain_backend_wins_over_the_interpreter_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--llm --brain openai` with the interpreter on `claude`: the brain still asks openai."""
    monkeypatch.setenv("ORCHESTRATOR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("ORCHESTRATOR_LLM_MODEL", "m")
    judge = Judge(Settings(llm=True, llm_backend="claude", brain="openai"))
    assert judge.llm is not None and judge.llm.name == "claude"
    assert judge.brain.llm is not None and judge.brain.llm.name == "openai"
    auto = Judge(Settings(llm=True, llm_backend="openai", brain="auto"))
    assert auto.brain.llm is auto.llm  # auto shares the interpreter's backend
