"""The ask-a-human MCP tools (`orchestrator.agent_mcp`) end to end: the REAL Codex and Gemini CLIs
start the orchestrator's MCP server from their own configuration for the attempt, a scripted
model calls `ask_human` / `report_status` by name (`McpCall`), and the call reaches the
orchestrator over the attempt's channel.

Three paths: a human present (a test-side `ask_human` answers; the answer is the tool's result in
the next model request and the agent finishes in the same session), nobody there (the attempt
ends with the structured question; the same session is resumed with the answer), and the whole
run through the orchestrator CLI (`run --no-wait` → escalation row → `answer` → `resume`).
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import cli, needs_claude_binary, status_json

from agent_cli_helpers import attempt, require_cli
from orchestrator.agent_mcp import SERVER_NAME
from orchestrator.agents.base import HumanQuestion, StatusReport
from orchestrator.agents.claude import ClaudeAgent
from orchestrator.agents.codex import CodexAgent
from orchestrator.agents.gemini import GeminiAgent
from orchestrator.agents.human_tool import STOP, HumanChannel, question_of, reported
from orchestrator.testing.anthropic import AnthropicServer, tool_result_text, tool_results
from orchestrator.testing.gemini import GeminiServer, function_responses, user_texts
from orchestrator.testing.openai_responses import ResponsesServer, function_outputs, input_texts
from orchestrator.testing.script import McpCall, RecordedRequest, Text, ToolCall
from orchestrator.testing.server import ScriptedServer

QUESTION = "Which cache should cache.py use?"
ASK = McpCall(
    SERVER_NAME,
    "ask_human",
    {
        "question": QUESTION,
        "options": ["Redis", "In-memory"],
        "recommendation": "In-memory",
        "category": "ambiguous_requirements",
        "why": "Both fit the task and they differ in what survives a restart.",
    },
)
PROMPT = "Add a cache in cache.py"


# -- the two CLIs, behind one interface ------------------------------------------------------
class Codex:
    name = "codex"

    @staticmethod
    def server(script: list[Any]) -> ResponsesServer:
        return ResponsesServer(script)

    @staticmethod
    def options(server: ScriptedServer, tmp: Path) -> dict[str, Any]:
        assert isinstance(server, ResponsesServer)
        return {
            "cli_path": require_cli("codex", "npm @openai/codex"),
            "base_url": server.base_url,
            "model": "scripted-model",
            "env": server.codex_env(tmp / "home"),
        }

    @staticmethod
    def agent(options: dict[str, Any]) -> CodexAgent | GeminiAgent | ClaudeAgent:
        return CodexAgent(options)

    @staticmethod
    def tool_results(req: RecordedRequest) -> list[str]:
        return list(function_outputs(req).values())

    @staticmethod
    def prompts(req: RecordedRequest) -> list[str]:
        return input_texts(req)


class Gemini:
    name = "gemini"

    @staticmethod
    def server(script: list[Any]) -> GeminiServer:
        return GeminiServer(script)

    @staticmethod
    def options(server: ScriptedServer, tmp: Path) -> dict[str, Any]:
        assert isinstance(server, GeminiServer)
        return {
            "cli_path": require_cli("gemini", "npm @google/gemini-cli"),
            "base_url": server.url,
            "model": "scripted-model",
            "env": server.gemini_env(tmp / "home"),
        }

    @staticmethod
    def agent(options: dict[str, Any]) -> CodexAgent | GeminiAgent | ClaudeAgent:
        return GeminiAgent(options)

    @staticmethod
    def tool_results(req: RecordedRequest) -> list[str]:
        return [json.dumps(r.get("response")) for r in function_responses(req)]

    @staticmethod
    def prompts(req: RecordedRequest) -> list[str]:
        return user_texts(req)


class Claude:
    """Claude Code, the binary bundled with claude-agent-sdk (the SDK's `mcp_servers`)."""

    name = "claude"

    @staticmethod
    def server(script: list[Any]) -> AnthropicServer:
        return AnthropicServer(script)

    @staticmethod
    def options(server: ScriptedServer, tmp: Path) -> dict[str, Any]:
        assert isinstance(server, AnthropicServer)
        return {"env": server.claude_code_env(tmp / "home")}

    @staticmethod
    def agent(options: dict[str, Any]) -> CodexAgent | GeminiAgent | ClaudeAgent:
        return ClaudeAgent(options)

    @staticmethod
    def tool_results(req: RecordedRequest) -> list[str]:
        return [tool_result_text(b) for b in tool_results(req)]

    @staticmethod
    def prompts(req: RecordedRequest) -> list[str]:
        """The user's text blocks, without Claude Code's own `<system-reminder>` blocks."""
        out: list[str] = []
        for msg in req.body.get("messages") or []:
            content = msg.get("content") if msg.get("role") == "user" else None
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for b in blocks or []:
                text = str(b.get("text", "")) if b.get("type") == "text" else ""
                if text.strip() and not text.lstrip().startswith("<system-reminder>"):
                    out.append(text)
        return out


CLIS = [
    pytest.param(Codex, id="codex"),
    pytest.param(Gemini, id="gemini"),
    pytest.param(Claude, id="claude", marks=[pytest.mark.claude, needs_claude_binary]),
]
Kind = type[Codex] | type[Gemini] | type[Claude]


def asked_by(
    answer: str | None,
) -> tuple[list[HumanQuestion], Callable[[HumanQuestion], str | None]]:
    """A test-side human: records each question and gives `answer` (None: nobody is there)."""
    asked: list[HumanQuestion] = []

    def ask(q: HumanQuestion) -> str | None:
        asked.append(q)
        return answer

    return asked, ask


def assert_structured(q: HumanQuestion | dict[str, Any], agent: str) -> None:
    row = q if isinstance(q, dict) else q.__dict__
    assert row["question"] == QUESTION
    assert row["options"] == ["Redis", "In-memory"]
    assert row["recommendation"] == "In-memory"
    assert row["category"] == "ambiguous_requirements"
    assert row["why"] == "Both fit the task and they differ in what survives a restart."
    assert row["detail"]["tool"] == "orchestrator.ask_human" and row["detail"]["agent"] == agent


# -- a human present: the answer is the tool's result, the session goes on ------------------
@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", CLIS)
def test_a_live_answer_goes_back_as_the_tool_result_in_the_same_session(
    kind: Kind, tmp_path: Path
) -> None:
    with kind.server([ASK, Text("Added an in-memory cache.")]) as server:
        ctx, seen = attempt(tmp_path, PROMPT)
        asked, ctx.ask_human = asked_by("In-memory")
        result = kind.agent(kind.options(server, tmp_path)).run(ctx)

    assert result.error is None, result.error
    assert result.question is None  # answered: nothing left to escalate
    assert result.output == "Added an in-memory cache."
    [q] = asked
    assert_structured(q, kind.name)
    assert any(e.kind == "question" and QUESTION in e.summary for e in seen)
    first, second = server.model_requests
    [tool_result] = kind.tool_results(second)
    assert "A human answered: In-memory" in tool_result
    assert kind.prompts(second) == kind.prompts(first)  # one session: no new prompt
    log = [
        json.loads(line) for line in (ctx.artifacts / "human-tool.jsonl").read_text().splitlines()
    ]
    assert log[0]["tool"] == "ask_human" and "In-memory" in log[0]["text"]


# -- nobody there: the attempt ends with the question, the same session resumes -------------
@pytest.mark.timeout(90)
@pytest.mark.parametrize("kind", CLIS)
def test_headless_ask_ends_the_attempt_then_the_same_session_resumes_with_the_answer(
    kind: Kind, tmp_path: Path
) -> None:
    with kind.server([ASK, Text("Waiting for the human's answer.")]) as server:
        agent = kind.agent(kind.options(server, tmp_path))
        ctx, _ = attempt(tmp_path, PROMPT)
        first = agent.run(ctx)  # ctx.ask_human is None: nobody waits

        assert first.error is None, first.error
        assert first.question is not None and first.session_id
        assert_structured(first.question, kind.name)
        [stop] = kind.tool_results(server.model_requests[1])
        assert "Stop now" in stop and STOP.split(":")[0] in stop

        server.add(Text("Added an in-memory cache."))
        answer = f"A human answered the question {QUESTION!r}: B) In-memory"
        ctx2, _ = attempt(tmp_path, answer, resume=first.session_id, number=2)
        second = agent.run(ctx2)

    assert second.error is None, second.error
    assert second.session_id == first.session_id
    assert second.question is None and second.output == "Added an in-memory cache."
    resumed = server.model_requests[-1]
    assert kind.prompts(resumed)[-1] == answer and PROMPT in kind.prompts(resumed)
    assert resumed.contains(QUESTION)  # the earlier ask_human call is in the session's history


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", CLIS)
def test_the_first_turn_waits_for_a_slow_starting_server(
    kind: Kind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a busy machine the server's start (it imports the MCP SDK) takes seconds; the agent
    must not send its first model request without the tools (Codex does unless `required`)."""
    real = HumanChannel.server_argv
    slow = 'sleep 3; exec "$0" "$@"'
    monkeypatch.setattr(HumanChannel, "server_argv", lambda self: ["sh", "-c", slow, *real(self)])
    with kind.server([ASK, Text("Added an in-memory cache.")]) as server:
        ctx, _ = attempt(tmp_path, PROMPT)
        asked, ctx.ask_human = asked_by("In-memory")
        result = kind.agent(kind.options(server, tmp_path)).run(ctx)
    assert result.error is None, result.error
    assert [q.question for q in asked] == [QUESTION]
    assert "A human answered: In-memory" in kind.tool_results(server.model_requests[1])[0]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", CLIS)
def test_time_a_person_spends_answering_does_not_count_against_the_timeout(
    kind: Kind, tmp_path: Path
) -> None:
    """The attempt's timeout is 10 s; the human answers only when the attempt is 13 s old."""
    import threading
    import time

    with kind.server([ASK, Text("Added an in-memory cache.")]) as server:
        ctx, _ = attempt(tmp_path, PROMPT, timeout=10)
        started = time.monotonic()

        def slow_human(_q: HumanQuestion) -> str:
            threading.Event().wait(started + 13 - time.monotonic())  # past the whole timeout
            return "In-memory"

        ctx.ask_human = slow_human
        result = kind.agent(kind.options(server, tmp_path)).run(ctx)
    assert time.monotonic() - started > 13
    assert result.error is None, result.error
    assert result.output == "Added an in-memory cache."
    assert "A human answered: In-memory" in kind.tool_results(server.model_requests[1])[0]


# -- report_status is a structured signal -----------------------------------------------------
@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", CLIS)
def test_report_status_reaches_the_result(kind: Kind, tmp_path: Path) -> None:
    report = McpCall(
        SERVER_NAME,
        "report_status",
        {"status": "blocked", "summary": "The staging database password is not in the vault."},
    )
    with kind.server([report, Text("All done!")]) as server:
        ctx, _ = attempt(tmp_path, PROMPT)
        result = kind.agent(kind.options(server, tmp_path)).run(ctx)

    assert result.error is None, result.error
    assert result.reported_status == StatusReport(
        "blocked", "The staging database password is not in the vault."
    )
    [kept] = kind.tool_results(server.model_requests[1])
    assert "Status recorded." in kept
    interp = reported(result.reported_status)
    assert interp is not None and interp.verdict == "needs_human"  # not the text's "All done!"
    assert interp.question and "password is not in the vault" in interp.question


def test_reported_statuses_and_questions_read_plainly() -> None:
    failed = reported(StatusReport("failed", "pytest still fails in test_cache.py"))
    assert failed is not None and (failed.verdict, failed.error) == (
        "failed",
        "pytest still fails in test_cache.py",
    )
    done = reported(StatusReport("completed", "Added cache.py"))
    assert done is not None and done.verdict == "completed" and done.source == "marker"
    assert reported(None) is None
    q = question_of({"question": " Drop it? ", "options": ["Yes", " ", "No"], "category": "x"}, "a")
    assert (q.question, q.options, q.category, q.recommendation) == (
        "Drop it?",
        ["Yes", "No"],
        None,
        None,
    )


# -- the whole run: escalation row, `orchestrator answer`, `resume` ---------------------------
def write_plan(tmp: Path) -> Path:
    (tmp / "plan.md").write_text(
        textwrap.dedent("""\
            # Cache
            ## Task 1.1: Add a cache in cache.py
            **Description:** Add a cache in cache.py.
            **Tests:**
            ```bash
            test -f cache.py
            ```
            """)
    )
    (tmp / "work").mkdir(exist_ok=True)
    return tmp / "plan.md"


def write_config(tmp: Path, kind: Kind, options: dict[str, Any]) -> dict[str, str]:
    """`[codex]`/`[gemini]` in orchestrator.toml; the variables the adapter unsets are removed
    from the runner's own environment instead (TOML has no None)."""
    env = {k: v for k, v in options["env"].items() if v is not None}
    lines = [f"[{kind.name}]"]
    for key in [k for k in ("cli_path", "base_url", "model") if k in options]:
        lines.append(f"{key} = {json.dumps(options[key])}")
    lines.append("env = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items()) + " }")
    (tmp / "orchestrator.toml").write_text("\n".join(lines) + "\n")
    return {k: "" for k, v in options["env"].items() if v is None and k in os.environ}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", CLIS)
def test_run_no_wait_escalates_the_tool_question_and_answer_resumes_the_same_session(
    kind: Kind, tmp_path: Path
) -> None:
    target = tmp_path / "work" / "cache.py"
    script: list[Any] = [ASK, Text("Waiting for the human's answer.")]
    path = write_plan(tmp_path)
    with kind.server(script) as server:
        blank = write_config(tmp_path, kind, kind.options(server, tmp_path))
        run = "run", str(path), "--agent", kind.name, "--workdir", "work", "--no-wait"
        first = cli(tmp_path, *run, timeout=90, **blank)
        assert first.returncode == 3, first.stdout + first.stderr
        assert "NEEDS HUMAN INPUT" in first.stdout

        rows = json.loads(cli(tmp_path, "escalations", "--json").stdout)
        [esc] = rows
        assert esc["question"] == QUESTION and esc["asker"] == "agent"
        assert esc["options"] == ["Redis", "In-memory"]
        assert esc["recommendation"] == "In-memory"
        assert esc["category"] == "ambiguous_requirements"
        assert esc["why"] == "Both fit the task and they differ in what survives a restart."
        assert esc["detail"]["structured"] is True and esc["detail"]["agent"] == kind.name

        ans = cli(tmp_path, "answer", str(esc["id"]), "--option", "B")
        assert ans.returncode == 0, ans.stdout + ans.stderr
        server.add(make_write(kind, target), Text("Added an in-memory cache."))
        done = cli(tmp_path, "resume", "--no-wait", timeout=90, **blank)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Task 1.1: COMPLETED" in done.stdout

    assert target.read_text() == "CACHE = {}\n"
    resumed = server.model_requests[2]
    assert any("In-memory" in p and "Continue the task" in p for p in kind.prompts(resumed))
    assert resumed.contains(QUESTION)  # the same session: the earlier call is in its history
    attempts = status_json(tmp_path)["attempts"]
    assert [a["verdict"] for a in attempts] == ["needs_human", "completed"]
    assert attempts[0]["session_id"] and attempts[0]["session_id"] == attempts[1]["session_id"]


def make_write(kind: Kind, target: Path) -> ToolCall:
    """Each CLI's own file-writing tool call."""
    if kind is Codex:
        return ToolCall("exec_command", {"cmd": f"printf 'CACHE = {{}}\\n' > {target.name}"})
    if kind is Claude:
        return ToolCall("Write", {"file_path": str(target), "content": "CACHE = {}\n"})
    return ToolCall("write_file", {"file_path": target.name, "content": "CACHE = {}\n"})


@pytest.mark.timeout(120)
def test_run_wait_a_human_answering_from_another_process_reaches_the_live_codex_session(
    tmp_path: Path,
) -> None:
    from tests.helpers import cli_popen
    from tests.test_claude_scenarios import finish, wait_for_escalation

    target = tmp_path / "work" / "cache.py"
    path = write_plan(tmp_path)
    with Codex.server([ASK]) as server:
        server.add(make_write(Codex, target), Text("Added an in-memory cache."))
        blank = write_config(tmp_path, Codex, Codex.options(server, tmp_path))
        runner = cli_popen(
            tmp_path, "run", str(path), "--agent", "codex", "--workdir", "work", "--wait", **blank
        )
        try:
            try:
                esc = wait_for_escalation(tmp_path, runner, timeout=90)
            except AssertionError:
                server.dump_requests(tmp_path / "requests.jsonl")
                raise
            assert esc["question"] == QUESTION and esc["detail"]["live"] is True
            assert len(server.model_requests) == 1  # the session waits on the tool call
            ans = cli(tmp_path, "answer", str(esc["id"]), "--option", "B")
            assert ans.returncode == 0, ans.stdout + ans.stderr
            code, out, err = finish(runner, timeout=90)
        finally:
            if runner.poll() is None:
                runner.kill()
    assert code == 0, f"{out}\n{err}"
    assert "Task 1.1: COMPLETED" in out
    [answered] = Codex.tool_results(server.model_requests[1])
    assert "A human answered: In-memory" in answered
    assert target.read_text() == "CACHE = {}\n"
    attempts = status_json(tmp_path)["attempts"]
    assert len(attempts) == 1 and attempts[0]["verdict"] == "completed"
    assert len({r.headers.get("thread-id") for r in server.model_requests}) == 1


@pytest.mark.timeout(90)
def test_run_a_blocked_report_escalates_whatever_the_final_text_says(tmp_path: Path) -> None:
    blocked = McpCall(
        SERVER_NAME,
        "report_status",
        {"status": "blocked", "summary": "The staging database password is not in the vault."},
    )
    path = write_plan(tmp_path)
    (tmp_path / "work" / "cache.py").write_text("CACHE = {}\n")  # the gate passes
    with Gemini.server([blocked, Text("All done!")]) as server:
        blank = write_config(tmp_path, Gemini, Gemini.options(server, tmp_path))
        run = "run", str(path), "--agent", "gemini", "--workdir", "work", "--no-wait"
        proc = cli(tmp_path, *run, timeout=80, **blank)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    [esc] = json.loads(cli(tmp_path, "escalations", "--json").stdout)
    assert esc["question"] == (
        "The agent reports it is blocked: The staging database password is not in the vault."
    )
    assert esc["why"] == "The agent reports it is blocked and cannot continue on its own."
    assert esc["detail"]["source"] == "marker"
    assert status_json(tmp_path)["attempts"][0]["verdict"] == "needs_human"


# -- the channel and the Gemini home, without a CLI ------------------------------------------
def test_the_channel_answers_over_its_socket_and_refuses_bad_calls(tmp_path: Path) -> None:
    from orchestrator.agent_mcp import call

    ctx, seen = attempt(tmp_path, PROMPT)
    asked: list[HumanQuestion] = []
    channel = HumanChannel(ctx, "codex")

    def nobody(q: HumanQuestion) -> None:
        assert channel.waiting  # the clock an attempt timeout should not count runs
        asked.append(q)

    ctx.ask_human = nobody
    with channel:
        sock = channel.socket_path
        assert len(sock) < 100 and oct(Path(sock).parent.stat().st_mode)[-3:] == "700"
        assert call(sock, "ask_human", {"question": "First?"}) == STOP
        assert call(sock, "ask_human", {"question": "Second?"}) == STOP
        with pytest.raises(RuntimeError, match="status must be one of completed, blocked"):
            call(sock, "report_status", {"status": "done", "summary": "x"})
        with pytest.raises(RuntimeError, match="unknown tool 'rm'"):
            call(sock, "rm", {})
        assert call(sock, "report_status", {"status": "Failed", "summary": " tests fail "}) == (
            "Status recorded."
        )
    assert not Path(sock).parent.exists()  # the private folder is gone with the attempt
    assert not channel.waiting and channel.waited() > 0
    assert [q.question for q in asked] == ["First?", "Second?"]
    assert channel.question is not None and channel.question.question == "First?"
    assert channel.status == StatusReport("failed", "tests fail")
    assert [e.kind for e in seen] == ["question", "question", "status"]
    log = (ctx.artifacts / "human-tool.jsonl").read_text().splitlines()
    assert [json.loads(line)["tool"] for line in log] == [
        "ask_human",
        "ask_human",
        "report_status",
        "rm",
        "report_status",
    ]


def test_the_gemini_home_keeps_the_users_settings_and_links_the_rest(tmp_path: Path) -> None:
    from orchestrator.agents.human_tool import gemini_home

    real = tmp_path / "real"
    (real / ".gemini" / "tmp" / "work").mkdir(parents=True)
    (real / ".gemini" / "oauth_creds.json").write_text("{}")
    (real / ".agents" / "skills").mkdir(parents=True)
    settings = (
        '{\n  // the user\'s own\n  "security": {"auth": {"selectedType": "oauth-personal"}},\n'
        '  /* theirs */ "mcpServers": {"docs": {"command": "docs-mcp", "args": ["//not-a-comment"]}}\n}'
    )
    (real / ".gemini" / "settings.json").write_text(settings)
    ctx, _ = attempt(tmp_path, PROMPT)
    with HumanChannel(ctx, "gemini") as channel:
        env = gemini_home(channel, {"GEMINI_CLI_HOME": str(real)})
        own = Path(env["GEMINI_CLI_HOME"]) / ".gemini"
        merged = json.loads((own / "settings.json").read_text())
        assert merged["security"] == {"auth": {"selectedType": "oauth-personal"}}
        assert merged["mcpServers"]["docs"] == {"command": "docs-mcp", "args": ["//not-a-comment"]}
        ours = merged["mcpServers"]["orchestrator"]
        assert ours["args"][-2:] == ["--socket", channel.socket_path] and ours["trust"] is True
    assert own.is_relative_to(ctx.artifacts)
    assert (own / "tmp").resolve() == (real / ".gemini" / "tmp").resolve()
    assert (own / "oauth_creds.json").is_symlink()
    assert (own.parent / ".agents" / "skills").is_dir() and (own.parent / ".agents").is_symlink()
    assert (real / ".gemini" / "settings.json").read_text() == settings  # untouched
    assert (real / ".gemini" / "history").is_dir()


def test_the_servers_categories_and_statuses_are_the_orchestrators() -> None:
    from typing import get_args, get_type_hints

    from orchestrator.agent_mcp import STATUSES, CategoryArg, StatusArg
    from orchestrator.models import CATEGORIES

    assert get_args(CategoryArg) == CATEGORIES
    assert get_args(StatusArg) == STATUSES == get_args(get_type_hints(StatusReport)["status"])
