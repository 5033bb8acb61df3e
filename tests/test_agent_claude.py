"""The `claude` agent: the REAL bundled Claude Code against a scripted Messages API on 127.0.0.1."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import needs_claude_binary

from orchestrator.agents.base import AgentEvent, AgentResult, AttemptContext, HumanQuestion
from orchestrator.agents.claude import ClaudeAgent, answers_for, describe_tool, question_from_ask
from orchestrator.models import ConfigError, Task, UserError
from orchestrator.testing import (
    AnthropicServer,
    Fail,
    Stall,
    ToolCall,
    tool_result_text,
    tool_results,
)


def real_claude(fn: Any) -> Any:
    """Runs the real binary: marked `claude`, generous timeout, skipped only if it is missing."""
    return pytest.mark.claude(needs_claude_binary(pytest.mark.timeout(120)(fn)))


ASK = ToolCall(
    "AskUserQuestion",
    {
        "questions": [
            {
                "question": "Which cache backend should I use?",
                "header": "Cache",
                "options": [
                    {
                        "label": "In-memory",
                        "description": "A dict in the process; lost on restart.",
                    },
                    {"label": "Redis", "description": "A shared server; survives restarts."},
                ],
                "multiSelect": False,
            }
        ]
    },
)


class Harness:
    """A workdir, an artifacts folder and a temp Claude config, around one scripted server."""

    def __init__(self, tmp: Path, server: AnthropicServer) -> None:
        self.tmp, self.server = tmp, server
        self.workdir = tmp / "work"
        self.workdir.mkdir(exist_ok=True)
        self.env = server.claude_code_env(tmp / "home")
        self.events: list[AgentEvent] = []
        self.attempt = 0

    def run(
        self,
        prompt: str,
        *,
        ask: Any = None,
        resume: str | None = None,
        timeout: float = 90,
        **options: Any,
    ) -> AgentResult:
        self.attempt += 1
        artifacts = self.tmp / "runs" / f"attempt-{self.attempt}"
        artifacts.mkdir(parents=True)
        prompt_file = artifacts / "prompt.md"
        prompt_file.write_text(prompt)
        ctx = AttemptContext(
            task=Task(id="1.1", title="Say hello"),
            prompt=prompt,
            prompt_file=prompt_file,
            workdir=self.workdir,
            artifacts=artifacts,
            attempt=self.attempt,
            run_id="run-test",
            timeout=timeout,
            resume_session=resume,
            options={"env": self.env, **options},
            on_event=self.events.append,
            ask_human=ask,
        )
        return ClaudeAgent().run(ctx)


@real_claude
def test_writes_the_file_the_script_asks_for(tmp_path: Path) -> None:
    target = tmp_path / "work" / "hello.py"
    script = [
        ToolCall("Write", {"file_path": str(target), "content": "print('hello')\n"}),
        "Created hello.py.",
    ]
    with AnthropicServer(script) as server:
        h = Harness(tmp_path, server)
        result = h.run("Create hello.py that prints hello")
    assert target.read_text() == "print('hello')\n"
    assert result.error is None and result.exit_code == 0 and result.question is None
    assert result.output == "Created hello.py."
    assert result.session_id and len(result.session_id) == 36
    assert result.turns == 2
    assert result.cost_usd is not None and result.cost_usd > 0
    assert result.tokens_in == 20 and result.tokens_out == 10  # two scripted turns of 10 in / 5 out
    assert result.transcript_path is not None and result.transcript_path.name == "transcript.jsonl"
    kinds = [json.loads(line)["type"] for line in result.transcript_path.read_text().splitlines()]
    assert "AssistantMessage" in kinds and kinds[-1] == "ResultMessage"
    assert server.model_requests[0].contains("Create hello.py that prints hello")
    assert "Writing hello.py" in [e.summary for e in h.events if e.kind == "tool"]
    assert server.turns_left == 0
    assert "test-key" not in result.transcript_path.read_text()


@real_claude
def test_ask_user_question_is_answered_in_the_same_live_session(tmp_path: Path) -> None:
    target = tmp_path / "work" / "cache.py"
    script = [
        ASK,
        ToolCall("Write", {"file_path": str(target), "content": "CACHE = {}\n"}),
        "Done.",
    ]
    asked: list[HumanQuestion] = []

    def human(q: HumanQuestion) -> str:
        asked.append(q)
        return "In-memory"

    with AnthropicServer(script) as server:
        result = Harness(tmp_path, server).run("Implement caching", ask=human)
    assert [q.question for q in asked] == ["Which cache backend should I use?"]
    q = asked[0]
    assert q.options == ["In-memory", "Redis"] and q.category == "ambiguous_requirements"
    assert q.detail["option_descriptions"]["Redis"] == "A shared server; survives restarts."
    answered = tool_results(server.model_requests[1])
    assert "In-memory" in tool_result_text(answered[0]) and not answered[0].get("is_error")
    assert target.read_text() == "CACHE = {}\n"
    assert result.question is None and result.error is None
    assert len({r.headers.get("X-Claude-Code-Session-Id") for r in server.model_requests}) == 1


@real_claude
def test_unanswered_question_stops_then_the_same_session_resumes_with_the_answer(
    tmp_path: Path,
) -> None:
    target = tmp_path / "work" / "cache.py"
    script = [
        ASK,
        ToolCall("Write", {"file_path": str(target), "content": "CACHE = {}\n"}),
        "Done.",
    ]
    with AnthropicServer(script) as server:
        h = Harness(tmp_path, server)
        first = h.run("Implement caching")  # nobody waits
        assert first.question is not None
        assert first.question.options == ["In-memory", "Redis"]
        assert first.question.detail["tool_input"]["questions"][0]["header"] == "Cache"
        assert first.session_id and not target.exists()
        assert len(server.model_requests) == 1  # the session stopped instead of guessing

        second = h.run("In-memory", resume=first.session_id)
    assert second.session_id == first.session_id
    resumed = server.model_requests[1]
    assert resumed.contains("Implement caching") and resumed.contains("In-memory")
    earlier = [m for m in resumed.body["messages"] if m["role"] == "assistant"]
    assert any(
        b.get("name") == "AskUserQuestion"
        for m in earlier
        for b in m["content"]
        if isinstance(b, dict)
    )
    assert target.read_text() == "CACHE = {}\n"
    assert second.question is None and second.error is None


@real_claude
def test_destructive_command_is_held_and_a_human_denies_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "precious.db").write_text("rows")
    command = f"rm -rf {data}"
    asked: list[HumanQuestion] = []

    def human(q: HumanQuestion) -> str:
        asked.append(q)
        return "Deny"

    script = [
        ToolCall("Bash", {"command": command, "description": "Remove data"}),
        "Understood, left it.",
    ]
    with AnthropicServer(script) as server:
        h = Harness(tmp_path, server)
        result = h.run("Clean up", ask=human)
    assert (data / "precious.db").read_text() == "rows"
    assert len(asked) == 1 and asked[0].category == "extreme_destructive"
    assert asked[0].question == f"The agent wants to run: {command}"
    assert asked[0].options == ["Allow", "Deny"] and asked[0].detail["command"] == command
    denied = tool_results(server.model_requests[1])[0]
    assert denied.get("is_error") and "Denied by a human" in tool_result_text(denied)
    assert result.question is None and result.output == "Understood, left it."
    assert any(e.kind == "held" for e in h.events)


@real_claude
def test_held_command_runs_when_a_human_allows_it_and_routine_ones_are_not_held(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "build").mkdir()
    asked: list[HumanQuestion] = []

    def human(q: HumanQuestion) -> str:
        asked.append(q)
        return "Allow"

    script = [
        ToolCall("Bash", {"command": "rm -rf build", "description": "Remove build output"}),
        ToolCall("Bash", {"command": f"rm -rf {data}", "description": "Remove data"}),
        "Done.",
    ]
    with AnthropicServer(script) as server:
        Harness(tmp_path, server).run("Clean up", ask=human)
    assert not (tmp_path / "work" / "build").exists() and not data.exists()
    assert [q.detail["command"] for q in asked] == [f"rm -rf {data}"]


@real_claude
def test_held_command_with_nobody_waiting_stops_the_session(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    script = [ToolCall("Bash", {"command": f"rm -rf {data}"}), "should never be asked for"]
    with AnthropicServer(script) as server:
        result = Harness(tmp_path, server).run("Clean up")
    assert data.exists()
    assert result.question is not None and result.question.category == "extreme_destructive"
    assert result.question.detail["command"] == f"rm -rf {data}"
    assert result.session_id
    assert len(server.model_requests) == 1 and server.turns_left == 1


@real_claude
@pytest.mark.parametrize(
    ("fail", "status", "kind"),
    [
        (Fail(401), 401, "authentication"),
        (Fail(429, retry_after=60), 429, "rate_limit"),
        (Fail(529), 529, "overloaded"),
    ],
)
def test_api_errors_become_platform_errors_of_their_kind(
    tmp_path: Path, fail: Fail, status: int, kind: str
) -> None:
    with AnthropicServer([fail]) as server:
        result = Harness(tmp_path, server).run("Create hello.py")
    assert result.platform is not None and result.platform.kind == kind
    assert result.platform.status == status and result.question is None
    assert result.error and result.exit_code == 1
    assert result.session_id


@real_claude
def test_server_error_is_an_ordinary_agent_error(tmp_path: Path) -> None:
    with AnthropicServer([Fail(500)]) as server:
        result = Harness(tmp_path, server).run("Create hello.py")
    assert result.question is None
    assert result.error and "500" in result.error and result.exit_code == 1


@real_claude
def test_a_stalled_model_stream_ends_in_a_timeout_not_a_hang(tmp_path: Path) -> None:
    with AnthropicServer([Stall(60)]) as server:
        result = Harness(tmp_path, server).run("Create hello.py", timeout=5)
        assert server.model_requests, "the agent reached the server before the timeout"
    assert result.exit_code == 124 and result.error == "timed out after 5s"
    assert result.session_id and result.question is None


@real_claude
def test_time_spent_waiting_for_the_human_does_not_count_against_the_timeout(
    tmp_path: Path,
) -> None:
    target = tmp_path / "work" / "cache.py"
    script = [
        ASK,
        ToolCall("Write", {"file_path": str(target), "content": "CACHE = {}\n"}),
        "Done.",
    ]

    def slow_human(_q: HumanQuestion) -> str:
        time.sleep(10)  # longer than the whole attempt's timeout below
        return "In-memory"

    with AnthropicServer(script) as server:
        result = Harness(tmp_path, server).run("Implement caching", ask=slow_human, timeout=8)
    assert result.error is None and target.exists()


@real_claude
def test_resuming_an_unknown_session_is_a_clear_agent_error(tmp_path: Path) -> None:
    with AnthropicServer(["never used"]) as server:
        result = Harness(tmp_path, server).run(
            "go on", resume="00000000-0000-4000-8000-000000000000"
        )
    assert result.exit_code == 1 and result.error
    assert result.error.startswith("cannot resume the Claude Code session")
    assert server.model_requests == []


# -- no binary needed --------------------------------------------------------------------------
def no_key_env(tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path),
        "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"),
        "ANTHROPIC_API_KEY": "",
        "CLAUDE_CODE_OAUTH_TOKEN": "",
        "ANTHROPIC_AUTH_TOKEN": "",
        "CLAUDE_CODE_USE_BEDROCK": "",
        "CLAUDE_CODE_USE_VERTEX": "",
        "CLAUDE_CODE_USE_FOUNDRY": "",
    }


def test_preflight_without_any_credentials_says_what_to_set(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="set ANTHROPIC_API_KEY") as err:
        ClaudeAgent({"env": no_key_env(tmp_path)}).preflight()
    assert "\n" not in str(err.value)


def test_preflight_accepts_a_key_or_a_stored_login(tmp_path: Path) -> None:
    ClaudeAgent({"env": {**no_key_env(tmp_path), "ANTHROPIC_API_KEY": "sk-x"}}).preflight()
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / ".credentials.json").write_text("{}")
    ClaudeAgent({"env": no_key_env(tmp_path)}).preflight()


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root is refused bypass mode"
)
def test_bypass_mode_as_root_names_is_sandbox(tmp_path: Path) -> None:
    env = {**no_key_env(tmp_path), "ANTHROPIC_API_KEY": "sk-x", "IS_SANDBOX": ""}
    with pytest.raises(ConfigError, match="IS_SANDBOX=1"):
        ClaudeAgent({"env": env, "permission_mode": "bypassPermissions"}).preflight()
    ClaudeAgent(
        {"env": {**env, "IS_SANDBOX": "1"}, "permission_mode": "bypassPermissions"}
    ).preflight()


def test_ask_user_question_input_maps_to_a_question_and_back() -> None:
    q = question_from_ask(ASK.args)
    assert q.question == "Which cache backend should I use?"
    assert q.options == ["In-memory", "Redis"] and q.detail["header"] == "Cache"
    assert q.why == "I found multiple valid approaches and need you to decide."  # not "Cache"
    assert answers_for(ASK.args, "Redis") == {"Which cache backend should I use?": "Redis"}
    two = {"questions": [{"question": "A?", "options": []}, {"question": "B?", "options": []}]}
    assert answers_for(two, '{"1": "x", "B?": "y"}') == {"A?": "x", "B?": "y"}
    assert answers_for(two, "both z") == {"A?": "both z", "B?": "both z"}
    assert question_from_ask(two).question == "1. A?\n2. B?"


def test_progress_summaries(tmp_path: Path) -> None:
    assert (
        describe_tool("Read", {"file_path": str(tmp_path / "src" / "cache.py")}, tmp_path)
        == "Reading src/cache.py"
    )
    assert (
        describe_tool("Bash", {"command": "pytest -q\necho done"}, tmp_path) == "Running: pytest -q"
    )
    assert (
        describe_tool("Write", {"file_path": "/elsewhere/x.py"}, tmp_path)
        == "Writing /elsewhere/x.py"
    )


def test_a_rejected_rate_limit_is_a_usage_limit_with_its_reset_time(tmp_path: Path) -> None:
    """The rate_limit_event is only sent to subscription logins, so it is fed in directly here."""
    from claude_agent_sdk import RateLimitEvent, RateLimitInfo, ResultMessage

    from orchestrator.agents.claude import _Attempt

    ctx = AttemptContext(
        task=Task(id="1", title="t"),
        prompt="p",
        prompt_file=tmp_path / "p",
        workdir=tmp_path,
        artifacts=tmp_path,
        attempt=1,
        run_id="r",
    )
    agent = ClaudeAgent()
    with (tmp_path / "t.jsonl").open("w") as transcript:
        state = _Attempt(ctx, transcript)
        info = RateLimitInfo(
            status="rejected", resets_at=1_900_000_000, rate_limit_type="five_hour"
        )
        agent._on_message(RateLimitEvent(rate_limit_info=info, uuid="u", session_id="s-1"), state)
        agent._on_message(
            ResultMessage(
                subtype="success",
                duration_ms=1,
                duration_api_ms=0,
                is_error=True,
                num_turns=1,
                session_id="s-1",
                result="API Error: Request rejected (429)",
                api_error_status=429,
            ),
            state,
        )
    result = agent._result(state, tmp_path / "t.jsonl", 0.1, None)
    assert result.platform is not None and result.platform.kind == "usage_limit"
    assert result.platform.retry_at == 1_900_000_000 and result.question is None
    assert result.session_id == "s-1" and result.error == "API Error: Request rejected (429)"
