"""Google Gemini CLI in headless mode (`gemini -p … --output-format stream-json`): one attempt is
one Gemini CLI session, resumable by its id (`--resume <session id>`).

Stream events read (gemini-cli 0.61): `init` (session id, model), `message` (assistant text
arrives as `delta` chunks; the final text is what came after the last tool call), `tool_use` /
`tool_result` (→ live line, events), `error` (warnings), `result` (`status`, `error`, `stats`
with `input_tokens`/`output_tokens`/`tool_calls`).

Exit codes (packages/core `FatalError` subclasses and `handleError`): 0 success; 1 general
error; 41 authentication (`FatalAuthenticationError`: no or invalid auth method/key); 42 input
error; 44 sandbox error; 52 config error; 53 session turn limit reached; 54 fatal tool error;
55 untrusted workspace; 130 cancelled. An API error exits with its HTTP status modulo 256
(`process.exit(error.status)`): 401 → 145, 403 → 147, 429 → 173, 500 → 244. Authentication,
permission, quota and limit errors become a `rules.platform` kind (the exit code, then the
message), which the judge waits for, backs off from or asks a person about.

Options (constructor defaults, overridden by `ctx.options`): `model`; `approval_mode`
(`yolo` by default: headless Gemini CLI cannot ask for approval; `auto_edit`, `plan`,
`default`), or `permission_mode` mapped from Claude's names; `base_url` → `GOOGLE_GEMINI_BASE_URL`;
`trust_workspace` (default true → `--skip-trust`, else Gemini CLI silently downgrades `yolo` in
folders it has not been told to trust); `env` (None unsets); `cli_path`.

Every attempt offers the orchestrator's `ask_human` / `report_status` MCP tools (`agent_mcp`;
the model sees `mcp_orchestrator_ask_human`): Gemini CLI takes MCP servers only from settings
files, so the attempt runs with its own `GEMINI_CLI_HOME` (see `human_tool.gemini_home`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from orchestrator.agents._cli import CLIAgent, child_env, json_object, short
from orchestrator.agents.base import AgentEvent, AgentOptions, AgentResult, AttemptContext
from orchestrator.agents.human_tool import HumanChannel, gemini_home
from orchestrator.agents.process import ProcessResult, run_process
from orchestrator.rules.platform import kind_of, kind_of_status

MAX_EVENTS = 500
MAX_TEXT = 256 * 1024
MAX_ARG_PROMPT = 100_000
"""Longer prompts go through stdin: Linux caps one argument at 128 KiB."""

EXIT_CODES = {
    41: "authentication failed",
    42: "input error",
    44: "sandbox error",
    52: "configuration error",
    53: "session turn limit reached",
    54: "fatal tool error",
    55: "untrusted workspace",
    130: "cancelled",
}
HTTP_EXITS = {status % 256: status for status in (401, 402, 403, 429, 500, 502, 503, 504, 529)}
EXIT_KINDS = {41: "authentication", 53: "max_turns"}
"""Exit codes that are `rules.platform` kinds whatever the message says."""
APPROVAL_FROM_PERMISSION = {
    "bypassPermissions": "yolo",
    "acceptEdits": "auto_edit",
    "plan": "plan",
    "default": "default",
}


class GeminiOptions(AgentOptions):
    """`[gemini]` and per-task overrides; see the module docstring."""

    model: str | None = None
    approval_mode: str | None = None
    permission_mode: str | None = None
    base_url: str | None = None
    trust_workspace: bool = True
    env: dict[str, str | None] = Field(default_factory=dict)
    cli_path: str | None = None


def build_argv(
    cli: str, ctx: AttemptContext, opts: Mapping[str, Any], *, prompt_in_argv: bool
) -> list[str]:
    approval = opts.get("approval_mode") or APPROVAL_FROM_PERMISSION.get(
        str(opts.get("permission_mode")), "yolo"
    )
    argv = [cli, "--output-format", "stream-json", "--approval-mode", str(approval)]
    if opts.get("trust_workspace", True):
        argv.append("--skip-trust")
    if opts.get("model"):
        argv += ["--model", str(opts["model"])]
    if ctx.resume_session:
        argv += ["--resume", ctx.resume_session]
    if prompt_in_argv:
        argv += ["--prompt", ctx.prompt]
    return argv


@dataclass
class GeminiEvents:
    """Folds the stream-json events as they arrive, keeping only what the result needs."""

    ctx: AttemptContext
    session_id: str | None = None
    text: list[str] = field(default_factory=list)
    text_size: int = 0
    turns: int = 0
    in_turn: bool = False
    stats: dict[str, Any] = field(default_factory=dict)
    status: str | None = None
    error: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    tools: dict[str, str] = field(default_factory=dict)

    @property
    def final_text(self) -> str:
        return "".join(self.text)

    def line(self, raw: str) -> None:
        ev = json_object(raw)
        if ev is not None:
            self.event(ev)

    def _model_output(self) -> None:
        if not self.in_turn:
            self.turns += 1
            self.in_turn = True

    def event(self, ev: dict[str, Any]) -> None:
        kind = ev.get("type")
        if kind == "init":
            self.session_id = str(ev.get("session_id") or "") or self.session_id
        elif kind == "message":
            if ev.get("role") != "assistant":
                self.in_turn = False
                return
            self._model_output()
            chunk = str(ev.get("content") or "")
            if not ev.get("delta"):
                self.text, self.text_size = [], 0
            if self.text_size < MAX_TEXT:
                self.text.append(chunk)
                self.text_size += len(chunk)
        elif kind == "tool_use":
            self._model_output()
            self.text, self.text_size = [], 0
            name = str(ev.get("tool_name") or "")
            params = ev.get("parameters") if isinstance(ev.get("parameters"), dict) else {}
            summary = describe_tool(name, params or {})
            self.tools[str(ev.get("tool_id"))] = summary
            self.ctx.on_event(AgentEvent(kind="tool", summary=summary, data={"tool": name}))
        elif kind == "tool_result":
            self.in_turn = False
            if len(self.events) < MAX_EVENTS:
                record: dict[str, Any] = {
                    "type": "tool",
                    "summary": self.tools.get(str(ev.get("tool_id")), ""),
                    "status": ev.get("status"),
                }
                err = ev.get("error")
                if isinstance(err, dict):
                    record["error"] = str(err.get("message", ""))[:500]
                self.events.append(record)
        elif kind == "error" and len(self.events) < MAX_EVENTS:
            self.events.append({"type": "warning", "message": str(ev.get("message", ""))[:500]})
        elif kind == "result":
            self.status = str(ev.get("status") or "")
            stats = ev.get("stats")
            self.stats = stats if isinstance(stats, dict) else {}
            err = ev.get("error")
            if self.status != "success":
                message = err.get("message") if isinstance(err, dict) else err
                self.error = str(message or f"gemini result status {self.status!r}")


def describe_tool(name: str, params: Mapping[str, Any]) -> str:
    """`Writing hello.py`, `Running: pytest -q`, ... from a Gemini CLI tool call."""
    path = str(params.get("file_path") or params.get("dir_path") or params.get("path") or "")
    if name == "write_file":
        return f"Writing {path}"
    if name in ("replace", "edit"):
        return f"Editing {path}"
    if name in ("read_file", "read_many_files"):
        return f"Reading {path or short(json.dumps(params.get('paths', '')))}"
    if name == "run_shell_command":
        return f"Running: {short(str(params.get('command') or ''))}"
    if name in ("grep_search", "glob", "search_file_content"):
        return f"Searching: {short(str(params.get('pattern') or ''))}"
    if name == "list_directory":
        return f"Listing {path}"
    if name == "web_fetch":
        return f"Fetching {short(str(params.get('prompt') or ''))}"
    if name == "google_web_search":
        return f"Searching the web: {short(str(params.get('query') or ''))}"
    return f"Calling {name}"


def exit_meaning(code: int) -> str | None:
    """What a Gemini CLI exit code says, when it says more than "failed"."""
    if code in EXIT_CODES:
        return EXIT_CODES[code]
    if code in HTTP_EXITS:
        return f"API error HTTP {HTTP_EXITS[code]}"
    return None


class GeminiAgent(CLIAgent):
    """Runs the Gemini CLI headless in the workdir; see the module docstring for options."""

    name = cli_name = "gemini"
    options_model = GeminiOptions
    program = "gemini CLI"
    install = "npm install -g @google/gemini-cli"
    label = "Gemini CLI"

    def exit_error(self, proc: ProcessResult) -> str:
        """With what the exit code means, and stderr only when there is some."""
        meaning = exit_meaning(proc.exit_code)
        stderr = proc.stderr_tail(4000).strip()[-500:]
        error = f"gemini exited with {proc.exit_code}" + (f" ({meaning})" if meaning else "")
        return error + (f": {stderr}" if stderr else "")

    def platform_kind(self, error: str, exit_code: int) -> str | None:
        """Exits 41 (authentication) and 53 (turn limit) whatever the message says; then the
        message (a 429 may be a daily quota); then an API error's HTTP status (exit modulo 256)."""
        if exit_code in EXIT_KINDS:
            return EXIT_KINDS[exit_code]
        return kind_of(error) or kind_of_status(HTTP_EXITS.get(exit_code))

    def attempt(self, ctx: AttemptContext, opts: dict[str, Any], cli: str) -> AgentResult:
        env_overrides = dict(opts.get("env") or {})
        if opts.get("base_url"):
            env_overrides["GOOGLE_GEMINI_BASE_URL"] = str(opts["base_url"])
        in_argv = len(ctx.prompt.encode()) <= MAX_ARG_PROMPT
        state = GeminiEvents(ctx)
        with HumanChannel(ctx, self.name) as channel:  # the ask_human / report_status tools
            env_overrides |= gemini_home(channel, env_overrides)
            proc = run_process(
                build_argv(cli, ctx, opts, prompt_in_argv=in_argv),
                cwd=ctx.workdir,
                stdout_path=ctx.artifacts / "gemini.stream.jsonl",
                stderr_path=ctx.artifacts / "gemini.stderr.log",
                timeout=ctx.timeout,
                env=child_env(env_overrides),
                stdin_data=None if in_argv else ctx.prompt.encode(),
                on_line=state.line,
                paused=channel.waited,  # a person answering is not the agent's time
            )
        error, question = self.failure(proc, ctx.timeout, state.error)
        stats = state.stats
        return AgentResult(
            output=state.final_text,
            exit_code=proc.exit_code,
            transcript_path=proc.stdout_path,
            session_id=state.session_id,
            tokens_in=_int(stats.get("input_tokens")),
            tokens_out=_int(stats.get("output_tokens")),
            turns=state.turns or None,
            error=error,
            events=state.events,
            question=question or channel.question,
            reported_status=channel.status,
        )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) else None
