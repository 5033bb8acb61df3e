"""The Aider adapter end to end: the real `aider` against a scripted chat-completions server."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli_helpers import attempt, require_cli
from orchestrator.agents.aider import AiderAgent, AiderOutput, build_argv, parse_count
from orchestrator.testing.openai_chat import (
    ChatCompletionsServer,
    search_replace_edit,
    user_messages,
    whole_file_edit,
)
from orchestrator.testing.script import Fail, Stall

PROMPT = "Create hello.py that prints hello"


def agent(server: ChatCompletionsServer, tmp: Path) -> AiderAgent:
    return AiderAgent(
        {
            "cli_path": require_cli("aider", "PyPI aider-chat"),
            "base_url": server.base_url,
            "model": "scripted-model",
            "env": server.aider_env(tmp / "home"),
        }
    )


@pytest.mark.timeout(180)
def test_aider_writes_the_file_from_a_streamed_whole_file_edit(tmp_path: Path) -> None:
    reply = "Here it is.\n\n" + whole_file_edit("hello.py", 'print("hello")', "python")
    with ChatCompletionsServer([reply]) as server:
        ctx, seen = attempt(tmp_path, PROMPT, files=["hello.py"])
        result = agent(server, tmp_path).run(ctx)

    assert result.error is None, result.error
    assert result.exit_code == 0
    assert (ctx.workdir / "hello.py").read_text() == 'print("hello")\n'
    assert "Applied edit to hello.py" in result.output
    assert [e.summary for e in seen] == ["Creating hello.py", "Editing hello.py"]
    assert result.turns == 1
    assert result.tokens_in and result.tokens_in > 100  # streamed: aider's own estimate
    assert result.tokens_out and result.tokens_out > 0
    assert result.cost_usd is None  # aider prints no cost for a model without prices
    assert result.session_id == str(ctx.artifacts / "aider.chat.md")
    assert sorted(p.name for p in ctx.workdir.iterdir()) == ["hello.py"]  # no .aider* litter

    [request] = server.model_requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "scripted-model" and request.body["stream"] is True
    assert PROMPT in user_messages(request)[-1]
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["authorization"] == "<redacted>"
    assert not [r for r in server.requests if r.auxiliary]


@pytest.mark.timeout(240)
def test_aider_resumes_its_chat_and_applies_a_search_replace_edit(tmp_path: Path) -> None:
    first_reply = whole_file_edit("hello.py", 'print("hello")')
    edit = search_replace_edit("hello.py", 'print("hello")', 'print("hey")')
    with ChatCompletionsServer([first_reply, edit]) as server:
        aider = agent(server, tmp_path)
        first = aider.run(attempt(tmp_path, PROMPT, files=["hello.py"])[0])
        assert first.error is None, first.error
        ctx, _ = attempt(
            tmp_path,
            "The human answered: make it casual",
            files=["hello.py"],
            resume=first.session_id,
            number=2,
            options={"edit_format": "diff", "stream": False},
        )
        second = aider.run(ctx)

    assert second.error is None, second.error
    assert (ctx.workdir / "hello.py").read_text() == 'print("hey")\n'
    assert second.session_id == str(ctx.artifacts / "aider.chat.md")
    assert (second.tokens_in, second.tokens_out, second.turns) == (10, 5, 1)  # the API's usage
    last = server.model_requests[-1]
    assert not last.body.get("stream")  # --no-stream: one JSON chat.completion
    texts = user_messages(last)
    assert any(PROMPT in t for t in texts[:-1])  # the restored chat came back
    assert "make it casual" in texts[-1]


@pytest.mark.timeout(180)
def test_aider_bad_key_is_an_authentication_platform_error(tmp_path: Path) -> None:
    # OpenAI's own wording: litellm maps an `invalid_request_error` 401 without it to BadRequestError
    bad_key = Fail(401, message="Incorrect API key provided: test-key.")
    with ChatCompletionsServer([], when_exhausted=bad_key) as server:
        ctx, _ = attempt(tmp_path, PROMPT, files=["hello.py"])
        result = agent(server, tmp_path).run(ctx)

    assert result.exit_code == 0  # aider itself exits 0 after an API error
    assert result.error is not None and result.error.startswith("litellm.AuthenticationError")
    assert "Incorrect API key provided" in result.error
    assert result.platform is not None and result.platform.kind == "authentication"
    assert len(server.model_requests) == 1
    assert (ctx.workdir / "hello.py").read_text() == ""  # created empty, never edited


@pytest.mark.timeout(120)
def test_aider_stalled_stream_is_killed_at_the_attempt_timeout(tmp_path: Path) -> None:
    with ChatCompletionsServer([Stall(90)]) as server:
        ctx, _ = attempt(tmp_path, PROMPT, files=["hello.py"], timeout=20)
        result = agent(server, tmp_path).run(ctx)

    assert result.error is not None and "timed out after 20s" in result.error
    assert len(server.model_requests) == 1


def test_argv_defaults_keep_aider_from_committing_or_running_commands(tmp_path: Path) -> None:
    ctx, _ = attempt(tmp_path, "p", files=["a.py", "b.py"])
    argv = build_argv(
        "aider",
        ctx,
        {"model": "gpt-x", "base_url": "http://127.0.0.1:1/v1"},
        chat_file=tmp_path / "c.md",
        restore=False,
    )
    for flag in ("--no-git", "--no-auto-commits", "--no-suggest-shell-commands", "--yes-always"):
        assert flag in argv
    assert argv[argv.index("--model") + 1] == "openai/gpt-x"
    assert argv[-2:] == ["a.py", "b.py"]
    assert (ctx.artifacts / "aider.model-metadata.json").is_file()
    own = build_argv(
        "aider", ctx, {"model": "anthropic/x", "git": True, "shell_commands": True},
        chat_file=tmp_path / "c.md", restore=True,
    )  # fmt: skip
    assert "--git" in own and "--no-suggest-shell-commands" not in own
    assert "--restore-chat-history" in own and "--model-metadata-file" not in own


def test_output_parsing_tokens_costs_and_wrapped_errors(tmp_path: Path) -> None:
    ctx, seen = attempt(tmp_path, "p")
    state = AiderOutput(ctx)
    for line in [
        "Tokens: 2.3k sent, 1.1k cache write, 40 received. Cost: $0.01 message, $0.01 session.",
        "Tokens: 900 sent, 1.1k cache write, 500 cache hit, 10 received.",
        "Cost: $0.02 message, $0.03 session.",
        f"Applied edit to {ctx.workdir / 'src' / 'x.py'}",
        "litellm.RateLimitError: RateLimitError: OpenAIException - You exceeded your",
        "current quota, please check your plan and billing details.",
        "",
        "Tokens: 12k sent, 950 received.",
    ]:
        state.line(line)
    assert (state.tokens_in, state.tokens_out, state.turns) == (15200, 1000, 3)
    assert state.cost == pytest.approx(0.03)
    assert state.error is not None and state.error.endswith("plan and billing details.")
    assert [e.summary for e in seen] == ["Editing src/x.py"]
    assert parse_count("1.2k") == 1200 and parse_count("950") == 950
