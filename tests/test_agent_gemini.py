"""The Gemini adapter end to end: the real `gemini` CLI against a scripted Gemini API server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli_helpers import attempt, require_cli
from orchestrator.agents.gemini import GeminiAgent, GeminiEvents, build_argv, exit_meaning
from orchestrator.testing.gemini import GeminiServer, function_responses, user_texts
from orchestrator.testing.script import Fail, Stall, Text, ToolCall

PROMPT = "Create hello.py that prints hello"
WRITE_HELLO = ToolCall("write_file", {"file_path": "hello.py", "content": 'print("hello")\n'})


def agent(server: GeminiServer, tmp: Path) -> GeminiAgent:
    return GeminiAgent(
        {
            "cli_path": require_cli("gemini", "npm @google/gemini-cli"),
            "base_url": server.url,
            "model": "scripted-model",
            "env": server.gemini_env(tmp / "home"),
        }
    )


@pytest.mark.timeout(180)
def test_gemini_writes_the_file_and_reports_session_usage_and_actions(tmp_path: Path) -> None:
    with GeminiServer([WRITE_HELLO, Text("Created hello.py")]) as server:
        ctx, seen = attempt(tmp_path, PROMPT)
        result = agent(server, tmp_path).run(ctx)

    assert result.error is None, result.error
    assert result.exit_code == 0
    assert (ctx.workdir / "hello.py").read_text() == 'print("hello")\n'
    assert result.output == "Created hello.py"
    assert result.session_id and len(result.session_id) == 36
    assert (result.tokens_in, result.tokens_out, result.turns) == (20, 10, 2)
    assert [e.summary for e in seen] == ["Writing hello.py"]
    assert result.events == [{"type": "tool", "summary": "Writing hello.py", "status": "success"}]

    first, second = server.model_requests
    assert first.path == "/v1beta/models/scripted-model:streamGenerateContent?alt=sse"
    assert PROMPT in user_texts(first)
    assert first.headers.get("x-goog-api-key") == "<redacted>"
    [response] = function_responses(second)
    assert response["name"] == "write_file" and "hello.py" in json.dumps(response)
    assert not [r for r in server.requests if r.auxiliary]


@pytest.mark.timeout(180)
def test_gemini_resumes_the_same_session_with_its_history(tmp_path: Path) -> None:
    with GeminiServer([WRITE_HELLO, Text("Which greeting?")]) as server:
        gemini = agent(server, tmp_path)
        first = gemini.run(attempt(tmp_path, PROMPT)[0])
        assert first.error is None, first.error
        server.add(Text("Done with the casual greeting."))
        ctx, _ = attempt(tmp_path, "The human answered: casual", resume=first.session_id, number=2)
        second = gemini.run(ctx)

    assert second.error is None, second.error
    assert second.session_id == first.session_id
    assert second.output == "Done with the casual greeting."
    last = server.model_requests[-1]
    texts = user_texts(last)
    assert PROMPT in texts and texts[-1] == "The human answered: casual"
    assert "Which greeting?" in last.body_text


@pytest.mark.timeout(180)
def test_gemini_bad_key_is_an_authentication_platform_error(tmp_path: Path) -> None:
    with GeminiServer([], when_exhausted=Fail(401, message="API key not valid.")) as server:
        ctx, _ = attempt(tmp_path, PROMPT)
        result = agent(server, tmp_path).run(ctx)

    assert result.exit_code == 401 % 256
    assert result.error is not None and "API key not valid" in result.error
    assert result.platform is not None and result.platform.kind == "authentication"
    assert result.platform.spec.category == "external_service"
    assert len(server.model_requests) == 1  # the CLI does not retry a 401
    assert not (ctx.workdir / "hello.py").exists()


@pytest.mark.timeout(120)
def test_gemini_stalled_stream_is_killed_at_the_attempt_timeout(tmp_path: Path) -> None:
    with GeminiServer([Stall(90)]) as server:
        ctx, _ = attempt(tmp_path, PROMPT, timeout=6)
        result = agent(server, tmp_path).run(ctx)

    assert result.error is not None and "timed out after 6s" in result.error
    assert result.question is None
    assert result.session_id  # the init event had arrived


def test_argv_maps_permission_modes_and_long_prompts_go_to_stdin(tmp_path: Path) -> None:
    ctx, _ = attempt(tmp_path, "do it", resume="s-1")
    argv = build_argv("gemini", ctx, {"permission_mode": "acceptEdits"}, prompt_in_argv=True)
    assert argv[argv.index("--approval-mode") + 1] == "auto_edit"
    assert argv[-4:] == ["--resume", "s-1", "--prompt", "do it"]
    assert "--skip-trust" in argv
    quiet = build_argv("gemini", ctx, {"trust_workspace": False}, prompt_in_argv=False)
    assert "--prompt" not in quiet and "--skip-trust" not in quiet
    assert quiet[quiet.index("--approval-mode") + 1] == "yolo"
    assert exit_meaning(41) == "authentication failed"
    assert exit_meaning(145) == "API error HTTP 401"
    assert exit_meaning(3) is None


def test_event_folding_keeps_text_after_the_last_tool_call(tmp_path: Path) -> None:
    ctx, seen = attempt(tmp_path, "p")
    state = GeminiEvents(ctx)
    for ev in [
        {"type": "init", "session_id": "s-1", "model": "m"},
        {"type": "message", "role": "user", "content": "p"},
        {"type": "message", "role": "assistant", "content": "Let me ", "delta": True},
        {"type": "message", "role": "assistant", "content": "check.", "delta": True},
        {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t1",
         "parameters": {"command": "pytest -q"}},
        {"type": "tool_result", "tool_id": "t1", "status": "error",
         "error": {"type": "x", "message": "boom"}},
        {"type": "message", "role": "assistant", "content": "All ", "delta": True},
        {"type": "message", "role": "assistant", "content": "good.", "delta": True},
        {"type": "result", "status": "error", "error": {"message": "quota exceeded"},
         "stats": {"input_tokens": 7, "output_tokens": 3}},
    ]:  # fmt: skip
        state.line(json.dumps(ev))
    assert (state.session_id, state.final_text, state.turns) == ("s-1", "All good.", 2)
    assert state.error == "quota exceeded"
    assert [e.summary for e in seen] == ["Running: pytest -q"]
    assert state.events[0]["error"] == "boom"
