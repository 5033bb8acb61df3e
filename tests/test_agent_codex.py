"""The Codex adapter end to end: the real `codex` CLI against a scripted Responses API server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli_helpers import attempt, require_cli
from orchestrator.agents.base import AttemptContext
from orchestrator.agents.codex import CodexAgent, CodexEvents, build_argv
from orchestrator.models import Task
from orchestrator.testing.openai_responses import ResponsesServer, function_outputs, input_texts
from orchestrator.testing.script import Fail, Stall, Text, ToolCall

PROMPT = "Create hello.py that prints hello"
WRITE_HELLO = ToolCall("exec_command", {"cmd": "printf 'print(\"hello\")\\n' > hello.py"})


def agent(server: ResponsesServer, tmp: Path, **extra: object) -> CodexAgent:
    return CodexAgent(
        {
            "cli_path": require_cli("codex", "npm @openai/codex"),
            "base_url": server.base_url,
            "model": "scripted-model",
            "env": server.codex_env(tmp / "home"),
            **extra,
        }
    )


@pytest.mark.timeout(180)
def test_codex_writes_the_file_and_reports_thread_usage_and_actions(tmp_path: Path) -> None:
    with ResponsesServer([WRITE_HELLO, Text("Created hello.py")]) as server:
        ctx, seen = attempt(tmp_path, PROMPT)
        result = agent(server, tmp_path).run(ctx)

    assert result.error is None, result.error
    assert result.exit_code == 0
    assert (ctx.workdir / "hello.py").read_text() == 'print("hello")\n'
    assert result.output == "Created hello.py"
    assert result.session_id and len(result.session_id) == 36
    assert (result.tokens_in, result.tokens_out, result.turns) == (20, 10, 1)
    assert [e.summary for e in seen] == ["Running: printf 'print(\"hello\")\\n' > hello.py"]
    assert result.events[0]["exit_code"] == 0
    assert result.transcript_path is not None and result.transcript_path.is_file()

    first, second = server.model_requests
    assert first.path == "/v1/responses"
    assert PROMPT in input_texts(first)
    assert first.headers.get("thread-id") == result.session_id
    assert first.headers.get("authorization") == "<redacted>"
    outputs = function_outputs(second)
    assert list(outputs) == ["call_0_0"] and "exited with code 0" in outputs["call_0_0"]


@pytest.mark.timeout(180)
def test_codex_resumes_the_same_thread_with_its_history(tmp_path: Path) -> None:
    with ResponsesServer([WRITE_HELLO, Text("Which greeting?")]) as server:
        codex = agent(server, tmp_path)
        first = codex.run(attempt(tmp_path, PROMPT)[0])
        assert first.session_id
        server.add(Text("Done with the casual greeting."))
        ctx, _ = attempt(tmp_path, "The human answered: casual", resume=first.session_id, number=2)
        second = codex.run(ctx)

    assert second.error is None, second.error
    assert second.session_id == first.session_id
    assert second.output == "Done with the casual greeting."
    last = server.model_requests[-1]
    assert input_texts(last)[-2:] == [PROMPT, "The human answered: casual"]
    assert "Which greeting?" in last.body_text  # the thread's history came back


@pytest.mark.timeout(180)
def test_codex_bad_key_is_an_authentication_platform_error(tmp_path: Path) -> None:
    with ResponsesServer(
        [], when_exhausted=Fail(401, message="Incorrect API key provided")
    ) as server:
        ctx, _ = attempt(tmp_path, PROMPT)
        result = agent(server, tmp_path).run(ctx)

    assert result.exit_code != 0
    assert result.error is not None and "401" in result.error
    assert result.platform is not None and result.platform.kind == "authentication"
    assert len(server.requests) >= 1
    assert not (ctx.workdir / "hello.py").exists()


@pytest.mark.timeout(120)
def test_codex_stalled_stream_is_killed_at_the_attempt_timeout(tmp_path: Path) -> None:
    with ResponsesServer([Stall(90)]) as server:
        ctx, _ = attempt(tmp_path, PROMPT, timeout=4)
        result = agent(server, tmp_path).run(ctx)

    assert result.error is not None and "timed out after 4s" in result.error
    assert result.question is None
    assert result.session_id  # the thread had started


def test_argv_for_resume_custom_provider_and_bypass(tmp_path: Path) -> None:
    ctx = AttemptContext(
        task=Task(id="1", title="t"),
        prompt="p",
        prompt_file=tmp_path / "p.md",
        workdir=tmp_path,
        artifacts=tmp_path,
        attempt=1,
        run_id="r",
        resume_session="abc",
    )
    argv = build_argv(
        "codex",
        ctx,
        {"base_url": "http://127.0.0.1:1/v1", "permission_mode": "bypassPermissions", "model": "m"},
    )
    assert argv[:4] == ["codex", "exec", "resume", "abc"]
    assert "--dangerously-bypass-approvals-and-sandbox" in argv
    assert 'model_providers.orchestrator.base_url="http://127.0.0.1:1/v1"' in argv
    assert not any(a.startswith("sandbox_mode=") for a in argv)
    assert argv[-1] == "-"
    plain = build_argv("codex", ctx, {"sandbox": "read-only"})
    assert 'sandbox_mode="read-only"' in plain


def test_event_folding_ignores_reconnects_and_keeps_the_last_message(tmp_path: Path) -> None:
    ctx, seen = attempt(tmp_path, "p")
    state = CodexEvents(ctx)
    for ev in [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 1/5 (stream error)"},
        {"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": "one"}},
        {
            "type": "item.completed",
            "item": {"id": "i1", "type": "file_change", "changes": [{"path": "a.py"}]},
        },
        {"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "two"}},
        {"type": "turn.failed", "error": {"message": "usage limit reached"}},
    ]:
        state.line(json.dumps(ev))
    state.line("not json")
    assert (state.thread_id, state.final_text, state.turns) == ("t-1", "two", 1)
    assert state.error == "usage limit reached"
    assert [e.summary for e in seen] == ["Editing a.py"]
