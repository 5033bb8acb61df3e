"""The orchestrator's side of the ask-a-human MCP tools (`orchestrator.agent_mcp`): a channel the
adapter serves for one attempt, and how each agent's own MCP configuration names the server.

    with HumanChannel(ctx, "codex") as channel:
        config |= codex_config(channel)       # or gemini_home(channel, env) / claude_servers(channel)
        proc = run_process(argv, ..., paused=channel.waited)
    result = channel.apply(result)            # the question and the reported status

The agent starts the MCP server as its child; the server connects back to a Unix socket in a
private (0700) temporary folder — short, so the path fits the socket limit wherever the attempt
folder is. Each call is served in its own thread: `ask_human` becomes a `HumanQuestion` and goes
to `ctx.ask_human` (a human present answers and the agent goes on in the same session); with
nobody there the question is kept for `AgentResult.question` and the tool tells the agent to stop,
so the run pauses and the same session is resumed with the answer. `report_status` becomes
`AgentResult.reported_status`. Every call and its answer is appended to `human-tool.jsonl` in the
attempt's folder.
"""

from __future__ import annotations

import json
import os
import shutil
import socketserver
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from orchestrator.agent_mcp import SERVER_NAME, STATUSES
from orchestrator.agents.base import (
    AgentEvent,
    AgentResult,
    AttemptContext,
    HumanQuestion,
    StatusReport,
)
from orchestrator.interpret.model import WHY_BLOCKED, Interpretation
from orchestrator.models import CATEGORIES, Category

TOOL_TIMEOUT_S = 7 * 24 * 3600
"""How long an agent waits for one tool call: a person may answer much later."""
STARTUP_TIMEOUT_S = 120
"""The server imports the MCP SDK (~1.5 s alone, more on a busy machine)."""
LOG = "human-tool.jsonl"

ANSWERED = "A human answered: {answer}\nContinue the task with this answer."
STOP = (
    "The question was recorded for a human. Stop now: do not work around it, do not guess and "
    "do not call more tools; end your turn. You will be resumed in this session with the answer."
)
STATUS_KEPT = "Status recorded."


class HumanChannel:
    """One attempt's channel; use as a context manager around the agent's process."""

    def __init__(self, ctx: AttemptContext, agent: str) -> None:
        self.ctx = ctx
        self.agent = agent
        self.question: HumanQuestion | None = None
        self.status: StatusReport | None = None
        self._folder: str | None = None
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._lock = threading.Lock()
        self._asking, self._since, self._waited = 0, 0.0, 0.0
        self.on_wait: Callable[[bool], None] | None = None
        """Told when a person starts (True) and stops (False) being asked: an adapter that keeps
        its own clock (Claude's) pauses it; CLI adapters pass `waited` to `run_process`."""

    @property
    def socket_path(self) -> str:
        if self._folder is None:
            raise RuntimeError("the channel is not open")
        return os.path.join(self._folder, "s")

    def server_argv(self) -> list[str]:
        """The command that starts the MCP server (this Python, so the same orchestrator)."""
        return [sys.executable, "-m", "orchestrator.agent_mcp", "--socket", self.socket_path]

    # -- life cycle -------------------------------------------------------------------------------
    def __enter__(self) -> Self:
        self._folder = tempfile.mkdtemp(prefix="orch-ask-")  # 0700: only this user connects
        channel = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                channel._serve(self.rfile.readline(), self.wfile)

        server = socketserver.ThreadingUnixStreamServer(self.socket_path, Handler)
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
        ).start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    # -- calls ------------------------------------------------------------------------------------
    def _serve(self, line: bytes, out: Any) -> None:
        tool, args = "?", {}
        try:
            request = json.loads(line)
            tool, args = str(request.get("tool")), dict(request.get("args") or {})
            if tool == "ask_human":
                reply: dict[str, Any] = {"text": self.ask(args)}
            elif tool == "report_status":
                reply = {"text": self.report(args)}
            else:
                reply = {"error": f"unknown tool {tool!r}"}
        except (ValueError, TypeError, AttributeError) as e:  # the tool's error, for the model
            reply = {"error": str(e) if tool != "?" else f"bad request: {e}"}
        self._log({"tool": tool, "args": args, **reply})
        try:
            out.write(json.dumps(reply).encode() + b"\n")
            out.flush()
        except OSError as e:  # the agent is gone (killed, timed out): nobody reads the answer
            self._log({"event": "reply_lost", "error": repr(e)})

    def ask(self, args: dict[str, Any]) -> str:
        q = question_of(args, self.agent)
        self._emit(AgentEvent("question", f"Asking: {q.question}", {"category": q.category}))
        answer = None
        if self.ctx.ask_human is not None:
            self._clock(+1)
            try:
                answer = self.ctx.ask_human(q)
            except Exception as e:  # a broken panel must not break the attempt: nobody answered
                self._log({"event": "ask_human_failed", "error": repr(e)})
            finally:
                self._clock(-1)
        if answer is not None:
            return ANSWERED.format(answer=answer)
        with self._lock:
            self.question = self.question or q  # the first open question is the one asked
        return STOP

    @property
    def waiting(self) -> bool:
        """True while a person is being asked (the agent waits on the tool call)."""
        return self._asking > 0

    def waited(self) -> float:
        """Seconds spent asking a person so far (overlapping asks count once), which an attempt
        timeout should not count: what a process deadline would add back."""
        with self._lock:
            now = time.monotonic() - self._since if self._asking else 0.0
            return self._waited + now

    def _clock(self, step: int) -> None:
        with self._lock:
            starts = step > 0 and self._asking == 0
            if starts:
                self._since = time.monotonic()
            self._asking += step
            ends = step < 0 and self._asking == 0
            if ends:
                self._waited += time.monotonic() - self._since
        if (starts or ends) and self.on_wait is not None:
            try:
                self.on_wait(starts)
            except Exception as e:  # the clock is a nicety; the question must still be asked
                self._log({"event": "on_wait_failed", "error": repr(e)})

    def report(self, args: dict[str, Any]) -> str:
        status = str(args.get("status") or "").strip().lower()
        if status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        self.status = StatusReport(status, str(args.get("summary") or "").strip())  # type: ignore[arg-type]
        self._emit(AgentEvent("status", f"Reported {status}", {"summary": self.status.summary}))
        return STATUS_KEPT

    def apply(self, result: AgentResult) -> AgentResult:
        """The attempt's result with the question asked (unless the adapter already has one, such
        as an external-service error) and the reported status."""
        if result.question is None and self.question is not None:
            result.question = self.question
        if self.status is not None:
            result.reported_status = self.status
        return result

    def _emit(self, event: AgentEvent) -> None:
        try:
            self.ctx.on_event(event)
        except Exception as e:  # a broken progress line must not break the attempt
            self._log({"event": "on_event_failed", "error": repr(e)})

    def _log(self, record: dict[str, Any]) -> None:
        with self._lock, (self.ctx.artifacts / LOG).open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, default=str) + "\n")


def question_of(args: dict[str, Any], agent: str) -> HumanQuestion:
    """The escalation for an `ask_human` call; an unknown category is dropped, not guessed."""
    category: Category | None = next((c for c in CATEGORIES if c == args.get("category")), None)
    options = [str(o).strip() for o in args.get("options") or [] if str(o).strip()]
    recommendation = str(args.get("recommendation") or "").strip() or None
    return HumanQuestion(
        question=str(args.get("question") or "").strip() or "The agent asks for a decision.",
        options=options,
        recommendation=recommendation,
        category=category,
        why=str(args.get("why") or "").strip() or None,
        detail={"tool": f"{SERVER_NAME}.ask_human", "agent": agent},
    )


def reported(report: StatusReport | None) -> Interpretation | None:
    """What the judge reads from `report_status` before any text: failed and blocked are the
    agent's own word; completed is evidence the gates still check."""
    if report is None:
        return None
    summary = report.summary or f"The agent reported {report.status}."
    if report.status == "blocked":
        return Interpretation(
            verdict="needs_human",
            question=f"The agent reports it is blocked: {summary}",
            why=WHY_BLOCKED,
            source="marker",
            confident=True,
            evidence=summary,
        )
    verdict = "failed" if report.status == "failed" else "completed"
    error = summary if verdict == "failed" else None
    return Interpretation(
        verdict=verdict, source="marker", confident=True, error=error, evidence=summary
    )


# -- each agent's own MCP configuration -------------------------------------------------------
def codex_config(channel: HumanChannel) -> dict[str, Any]:
    """Codex `-c` overrides: the server for this run of `codex exec` only (no config file)."""
    prefix = f"mcp_servers.{SERVER_NAME}"
    argv = channel.server_argv()
    return {
        f"{prefix}.command": argv[0],
        f"{prefix}.args": argv[1:],
        f"{prefix}.startup_timeout_sec": STARTUP_TIMEOUT_S,
        f"{prefix}.tool_timeout_sec": TOOL_TIMEOUT_S,
        f"{prefix}.default_tools_approval_mode": "approve",
        f"{prefix}.required": True,  # else the first turn goes out before the server is up
    }


def gemini_home(channel: HumanChannel, env: Mapping[str, str | None]) -> dict[str, str]:
    """Gemini CLI reads MCP servers only from settings files; the system ones must be root-owned
    and the project one is the user's repository. So the attempt gets its own `GEMINI_CLI_HOME`
    in its folder: `.gemini/settings.json` is the user's settings plus our server, every other
    entry of the user's `.gemini` (credentials, sessions under `tmp/`, history) is a symlink to
    the real one, so sessions are saved where `--resume` finds them (and `~/.agents` is linked
    too). The real home is only given
    `tmp/` and `history/` when Gemini CLI never made them. Returns the variable to set."""
    real = Path(env.get("GEMINI_CLI_HOME") or os.environ.get("GEMINI_CLI_HOME") or Path.home())
    real_dir = real / ".gemini"
    for sub in ("tmp", "history"):
        (real_dir / sub).mkdir(parents=True, exist_ok=True)
    home = channel.ctx.artifacts / "gemini-home"
    own = home / ".gemini"
    own.mkdir(parents=True, exist_ok=True)
    entries = [e for e in real_dir.iterdir() if e.name != "settings.json"]
    agents = real / ".agents"  # the user's global agents and skills, also under that home
    for entry, link in [(e, own / e.name) for e in entries] + [(agents, home / agents.name)]:
        if (entry.exists() or entry.is_symlink()) and not (link.exists() or link.is_symlink()):
            link.symlink_to(entry)
    settings = _json_object(real_dir / "settings.json")
    argv = channel.server_argv()
    servers = dict(settings.get("mcpServers") or {})
    servers[SERVER_NAME] = {
        "command": argv[0],
        "args": argv[1:],
        "timeout": TOOL_TIMEOUT_S * 1000,
        "trust": True,  # its tools never wait for an approval prompt nobody can answer
        "description": "Ask the human who runs the orchestrator; report how the task ended.",
    }
    settings["mcpServers"] = servers
    (own / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return {"GEMINI_CLI_HOME": str(home)}


def _json_object(path: Path) -> dict[str, Any]:
    """A settings file as an object (Gemini CLI allows // and /* */ comments); {} if none."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    try:
        loaded = json.loads(_strip_comments(text))
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _strip_comments(text: str) -> str:
    out: list[str] = []
    i, n, quoted = 0, len(text), False
    while i < n:
        c = text[i]
        if quoted:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
            out.append(c)
        elif text.startswith("//", i):
            i = text.find("\n", i)
            if i < 0:
                break
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def claude_servers(channel: HumanChannel) -> dict[str, Any]:
    """The SDK's `mcp_servers` option: Claude Code starts the same stdio server."""
    argv = channel.server_argv()
    return {SERVER_NAME: {"type": "stdio", "command": argv[0], "args": argv[1:]}}
