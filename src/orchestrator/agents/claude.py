"""Claude Code through the official `claude-agent-sdk` (which bundles the real binary).

One attempt is one Claude Code session. Three things make it more than "run and wait":

- the agent's own questions (`AskUserQuestion`) reach a human through `ctx.ask_human`; the answer
  goes back into the same live session (`answers` in the updated tool input). When nobody waits,
  the tool is denied, the session stops, and `AgentResult.question` + `session_id` let the run
  loop resume that SAME session later with the answer as the prompt;
- every shell tool call passes `CommandPolicy` first (a PreToolUse hook, so it holds in every
  permission mode); a held command is asked like a question (`extreme_destructive`);
- errors retrying cannot fix (bad key, no credit, rate limit) come back as an `external_service`
  question instead of a plain failure.

Permissions: the default permission mode is Claude Code's `default`, with our `can_use_tool`
callback approving every tool call it is asked about — unattended, and it works as root.
`bypassPermissions` as root needs `IS_SANDBOX=1` (Claude Code refuses otherwise); we say so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from pydantic import Field

from orchestrator.agents import process
from orchestrator.agents.base import (
    AgentEvent,
    AgentOptions,
    AgentResult,
    AttemptContext,
    HumanQuestion,
)
from orchestrator.agents.claude_errors import (
    crash_message,
    is_exit_after_result,
    platform_error,
    result_error_text,
)
from orchestrator.agents.human_tool import HumanChannel, claude_servers
from orchestrator.interpret.model import WHY
from orchestrator.models import ConfigError, UserError
from orchestrator.policy import CommandPolicy, PolicyHit, is_approval

if TYPE_CHECKING:
    from orchestrator.config import Settings

KEY_VARS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN")
PROVIDER_VARS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")


class ClaudeOptions(AgentOptions):
    """`[claude]` and per-task overrides. At run time `ctx.options` may also carry
    `approved_commands`: exact commands a human already allowed (after an `extreme_destructive`
    answer), so a resumed session may run them; that one is never configured."""

    model: str | None = None
    fallback_model: str | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    max_turns: int | None = Field(None, ge=1)
    append_system_prompt: str | None = None
    max_budget_usd: float | None = Field(None, gt=0)
    """Claude Code's own cap per attempt, and the orchestrator's per-task cap from recorded costs."""
    env: dict[str, str] = Field(default_factory=dict)
    cli_path: str | None = None


ASK_TOOL = "AskUserQuestion"
STOP_AND_WAIT = (
    "A human must decide this. Stop now: do not work around it and do not guess. "
    "The session will be resumed with the human's answer."
)


# -- questions -------------------------------------------------------------------------------
def question_from_ask(tool_input: Mapping[str, Any]) -> HumanQuestion:
    """The escalation for an `AskUserQuestion` call: its questions, option labels, descriptions."""
    questions = [q for q in tool_input.get("questions") or [] if isinstance(q, dict)]
    texts = [str(q.get("question", "")).strip() for q in questions]
    first = questions[0] if questions else {}
    options = [o for o in first.get("options") or [] if isinstance(o, dict)]
    labels = [str(o.get("label", "")) for o in options]
    recommended = next((lb for lb in labels if "(recommended)" in lb.lower()), None)
    text = texts[0] if len(texts) == 1 else "\n".join(f"{i}. {t}" for i, t in enumerate(texts, 1))
    return HumanQuestion(
        question=text or "The agent asks for a decision.",
        options=labels if len(questions) == 1 else [],
        recommendation=recommended,
        category="ambiguous_requirements",
        why=WHY["ambiguous_requirements"],  # the header is a chip label ("Cache"), not a sentence
        detail={
            "header": str(first.get("header") or ""),
            "tool_input": dict(tool_input),
            "option_descriptions": {
                str(o.get("label", "")): str(o.get("description", "")) for o in options
            },
            "multi_select": bool(first.get("multiSelect", False)),
        },
    )


def answers_for(tool_input: Mapping[str, Any], answer: str) -> dict[str, str]:
    """`answers` for AskUserQuestion's updated input: question text → answer text.

    With several questions, a JSON object answer maps question text (or "1", "2", ...) to
    answers; any other answer text is given to every question.
    """
    texts = [
        str(q.get("question", "")) for q in tool_input.get("questions") or [] if isinstance(q, dict)
    ]
    parsed: Any = None
    if len(texts) > 1:
        try:
            parsed = json.loads(answer)
        except ValueError:
            parsed = None
    if isinstance(parsed, dict):
        out = {}
        for i, t in enumerate(texts, 1):
            value = parsed.get(t, parsed.get(str(i)))
            out[t] = str(value) if value is not None else answer
        return out
    return {t: answer for t in texts}


# -- the live progress line ------------------------------------------------------------------
def describe_tool(name: str, tool_input: Mapping[str, Any], workdir: Path) -> str:
    """`Reading src/cache.py`, `Running: pytest -q`, `Writing hello.py`, ..."""

    def rel(key: str) -> str:
        raw = str(tool_input.get(key) or "")
        try:
            return str(Path(raw).resolve().relative_to(workdir.resolve())) if raw else raw
        except ValueError:
            return raw

    def short(s: str, n: int = 80) -> str:
        line = s.strip().splitlines()[0] if s.strip() else ""
        return line if len(line) <= n else line[: n - 1] + "…"

    if name == "Read":
        return f"Reading {rel('file_path')}"
    if name == "Write":
        return f"Writing {rel('file_path')}"
    if name in ("Edit", "MultiEdit"):
        return f"Editing {rel('file_path')}"
    if name == "NotebookEdit":
        return f"Editing {rel('notebook_path')}"
    if name in ("Bash", "PowerShell"):
        return f"Running: {short(str(tool_input.get('command', '')))}"
    if name in ("Glob", "Grep"):
        return f"Searching: {short(str(tool_input.get('pattern', '')))}"
    if name == "WebFetch":
        return f"Fetching {tool_input.get('url', '')}"
    if name == "WebSearch":
        return f"Searching the web: {short(str(tool_input.get('query', '')))}"
    if name in ("Task", "Agent"):
        return f"Delegating: {short(str(tool_input.get('description', '')))}"
    if name == ASK_TOOL:
        return f"Asking: {short(question_from_ask(tool_input).question)}"
    if name == "TodoWrite":
        return "Updating the todo list"
    return name


# -- credentials -----------------------------------------------------------------------------
def has_credentials(env: Mapping[str, str]) -> bool:
    """True when Claude Code has a key, a token, a cloud provider or stored login to use."""
    if any(env.get(k) for k in KEY_VARS + PROVIDER_VARS):
        return True
    home = Path(env.get("HOME") or Path.home())
    config = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    if (config / ".credentials.json").is_file():
        return True
    if sys.platform == "darwin":  # the login lives in the keychain; its account marker is here
        marker = home / ".claude.json"
        try:
            return marker.is_file() and "oauthAccount" in marker.read_text(errors="replace")
        except OSError:
            return False
    return False


def root_bypass_problem(permission_mode: str | None, env: Mapping[str, str]) -> str | None:
    if permission_mode != "bypassPermissions" or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    if env.get("IS_SANDBOX") == "1":
        return None
    return (
        "Claude Code refuses permission_mode=bypassPermissions as root: set IS_SANDBOX=1 "
        "(only on a disposable sandbox machine) or use permission_mode=default, where the "
        "orchestrator approves tool calls itself"
    )


# -- one attempt -----------------------------------------------------------------------------
class _Attempt:
    """What one session produced so far, filled in by the message loop and the callbacks."""

    def __init__(self, ctx: AttemptContext, transcript: IO[str]) -> None:
        self.ctx = ctx
        self.transcript = transcript
        self.question: HumanQuestion | None = None
        self.events: list[dict[str, Any]] = []
        self.session_id: str | None = ctx.resume_session
        self.last_text = ""
        self.result: Any = None
        self.assistant_error: str | None = None
        self.rate_limit: dict[str, Any] | None = None
        self.stderr: list[str] = []
        self.deadline: anyio.CancelScope | None = None
        """The attempt's timeout scope: time spent waiting for a human is added back to it."""
        self._asking = 0
        self._paused = (math.inf, 0.0)
        self.loop: Any = None
        """The session's event loop, for `hold` from the ask_human channel's thread."""

    def record(self, kind: str, payload: Mapping[str, Any]) -> None:
        self.transcript.write(json.dumps({"type": kind, **payload}, default=str) + "\n")
        self.transcript.flush()

    def emit(self, kind: str, summary: str, **data: Any) -> None:
        event = AgentEvent(kind=kind, summary=summary, data=data)
        self.events.append({"kind": kind, "summary": summary, "data": data})
        try:
            self.ctx.on_event(event)
        except Exception as e:  # a broken progress line must not break the attempt
            self.record("orchestrator", {"event": "on_event_failed", "error": repr(e)})

    async def ask(self, question: HumanQuestion) -> str | None:
        """Ask the human who waits (blocking, so in a worker thread); None when nobody does."""
        if self.ctx.ask_human is None:
            return None
        ask = self.ctx.ask_human
        self._pause_clock()
        try:
            return await anyio.to_thread.run_sync(ask, question, abandon_on_cancel=True)
        except Exception as e:
            self.record("orchestrator", {"event": "ask_human_failed", "error": repr(e)})
            return None
        finally:
            self._resume_clock()

    def hold(self, waiting: bool) -> None:
        """An ask_human tool call (on the channel's thread) pauses the clock the same way."""
        if self.loop is not None:
            with contextlib.suppress(RuntimeError):  # the session has ended meanwhile
                clock = self._pause_clock if waiting else self._resume_clock
                anyio.from_thread.run_sync(clock, token=self.loop)

    def _pause_clock(self) -> None:
        """The agent's timeout does not run while a human thinks (asks may overlap)."""
        if self._asking == 0 and self.deadline is not None:
            self._paused = (self.deadline.deadline, time.monotonic())
            self.deadline.deadline = math.inf
        self._asking += 1

    def _resume_clock(self) -> None:
        self._asking -= 1
        if self._asking == 0 and self.deadline is not None:
            deadline, since = self._paused
            self.deadline.deadline = deadline + (time.monotonic() - since)


class ClaudeAgent:
    """The `claude` agent: one Claude Code session per attempt, through `claude-agent-sdk`.

    `options` are defaults for every attempt; `ctx.options` (per task) override them.
    """

    name = "claude"
    options_model = ClaudeOptions

    def __init__(
        self,
        options: Mapping[str, Any] | None = None,
        policy: CommandPolicy | None = None,
    ) -> None:
        self.defaults = dict(options or {})
        self.policy = policy or CommandPolicy()

    @classmethod
    def from_settings(cls, settings: Settings, plan_path: Path) -> ClaudeAgent:
        agent = cls(
            settings.agent_section(cls.name), policy=CommandPolicy.from_config(settings.policy)
        )
        agent.preflight()
        return agent

    # -- checks before a run -----------------------------------------------------------------
    def _env(self, opts: Mapping[str, Any]) -> dict[str, str]:
        return {**os.environ, **{k: str(v) for k, v in (opts.get("env") or {}).items()}}

    def preflight(self) -> None:
        """Raise `UserError` when Claude Code cannot start: no credentials, or root + bypass."""
        env = self._env(self.defaults)
        if not has_credentials(env):
            raise UserError(
                "no API key for Claude Code: set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN "
                "from `claude setup-token`, or log in once with `claude`)"
            )
        problem = root_bypass_problem(self.defaults.get("permission_mode"), env)
        if problem:
            raise ConfigError(problem)

    # -- the attempt -------------------------------------------------------------------------
    def run(self, ctx: AttemptContext) -> AgentResult:
        opts = {**self.defaults, **ctx.options}
        problem = root_bypass_problem(opts.get("permission_mode"), self._env(opts))
        if problem:
            raise ConfigError(problem)
        ctx.artifacts.mkdir(parents=True, exist_ok=True)
        path = ctx.artifacts / "transcript.jsonl"
        started = time.monotonic()
        with path.open("w", encoding="utf-8") as transcript, HumanChannel(ctx, self.name) as hc:
            state = _Attempt(ctx, transcript)
            opts = {**opts, "mcp_servers": claude_servers(hc)}  # ask_human, report_status
            hc.on_wait = state.hold
            try:
                anyio.run(self._session, ctx, opts, state)
                crash: str | None = None
            except Exception as e:  # the SDK or the binary failed: an agent error, not ours
                crash = crash_message(e, state.stderr)
                state.record("orchestrator", {"event": "error", "error": crash})
                if state.result is not None and is_exit_after_result(e):
                    crash = None  # the CLI exits non-zero after an error result it already sent
        return hc.apply(self._result(state, path, time.monotonic() - started, crash))

    def _options(self, ctx: AttemptContext, opts: Mapping[str, Any], state: _Attempt) -> Any:
        from claude_agent_sdk import ClaudeAgentOptions, HookMatcher

        approved = set(opts.get("approved_commands") or [])

        async def can_use_tool(name: str, tool_input: dict[str, Any], _perm: Any) -> Any:
            from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

            if name != ASK_TOOL:
                return PermissionResultAllow()
            question = question_from_ask(tool_input)
            state.emit("question", f"Asking: {question.question}", category=question.category)
            answer = await state.ask(question)
            state.record(
                "orchestrator",
                {"event": "question", "question": dataclasses.asdict(question), "answer": answer},
            )
            if answer is not None:
                return PermissionResultAllow(
                    updated_input={**tool_input, "answers": answers_for(tool_input, answer)}
                )
            state.question = question
            return PermissionResultDeny(message=STOP_AND_WAIT, interrupt=True)

        async def pre_tool_use(hook_input: Any, _tool_use_id: str | None, _hook: Any) -> Any:
            tool, tool_input = hook_input.get("tool_name", ""), hook_input.get("tool_input") or {}
            hit = self.policy.check(tool, tool_input, ctx.workdir)
            if hit is None or hit.command in approved:
                return {}
            return await self._held(hit, state, approved)

        system_prompt: Any = None
        if opts.get("append_system_prompt"):
            system_prompt = {
                "type": "preset",
                "preset": "claude_code",
                "append": str(opts["append_system_prompt"]),
            }
        allowed = [t for t in opts.get("allowed_tools") or [] if not str(t).startswith(ASK_TOOL)]
        env = {k: str(v) for k, v in (opts.get("env") or {}).items()} | process.mark_vars()
        kwargs: dict[str, Any] = {
            "cwd": str(ctx.workdir),
            "resume": ctx.resume_session,
            "can_use_tool": can_use_tool,
            "hooks": {
                "PreToolUse": [
                    HookMatcher(matcher=None, hooks=[pre_tool_use], timeout=7 * 24 * 3600)
                ]
            },
            "permission_mode": opts.get("permission_mode") or "default",
            "allowed_tools": allowed,
            "disallowed_tools": list(opts.get("disallowed_tools") or []),
            "mcp_servers": opts.get("mcp_servers") or {},
            "env": env,
            "stderr": lambda line: _keep_tail(state.stderr, line),
        }
        for key in ("model", "fallback_model", "max_turns", "max_budget_usd", "cli_path"):
            if opts.get(key) is not None:
                kwargs[key] = opts[key]
        if system_prompt is not None:
            kwargs["system_prompt"] = system_prompt
        return ClaudeAgentOptions(**kwargs)

    async def _held(self, hit: PolicyHit, state: _Attempt, approved: set[str]) -> dict[str, Any]:
        """A command the policy holds: ask the human who waits, or stop the session."""
        question = hit.question()
        state.emit("held", f"Held: {hit.command}", rule=hit.rule, reason=hit.reason)
        answer = await state.ask(question)
        state.record(
            "orchestrator", {"event": "held", "hit": dataclasses.asdict(hit), "answer": answer}
        )
        if answer is not None and is_approval(answer):
            approved.add(hit.command)
            return _decision("allow", "A human allowed this command.")
        if answer is not None:
            said = (
                ""
                if answer.strip().lower().rstrip(".!") in ("deny", "no", "n")
                else f" They said: {answer}"
            )
            return _decision(
                "deny",
                f"Denied by a human: this command {hit.reason} ({hit.rule}).{said} "
                "Do not run it or an equivalent; continue without it or explain why it is needed.",
            )
        state.question = question
        out = _decision("deny", f"Held for a human: this command {hit.reason}. {STOP_AND_WAIT}")
        out.update({"continue_": False, "stopReason": "Held for a human decision"})
        return out

    async def _session(self, ctx: AttemptContext, opts: Mapping[str, Any], state: _Attempt) -> None:
        from claude_agent_sdk import ClaudeSDKClient

        with warnings.catch_warnings():  # AskUserQuestion reaches can_use_tool in every mode
            warnings.filterwarnings("ignore", message="can_use_tool will not be invoked")
            options = self._options(ctx, opts, state)
            with anyio.move_on_after(ctx.timeout) as scope:
                state.deadline, state.loop = scope, anyio.lowlevel.current_token()
                async with ClaudeSDKClient(options) as client:
                    process.spawned_by(client._transport)  # recorded: reaped after a crash
                    await client.query(ctx.prompt)
                    async for message in client.receive_response():
                        self._on_message(message, state)
        if scope.cancelled_caught:
            state.emit("status", f"Timed out after {ctx.timeout:g}s")
            state.record("orchestrator", {"event": "timeout", "seconds": ctx.timeout})
            state.result = state.result or _Timeout(ctx.timeout or 0)

    def _on_message(self, message: Any, state: _Attempt) -> None:
        from claude_agent_sdk import (
            AssistantMessage,
            RateLimitEvent,
            ResultMessage,
            SystemMessage,
            TextBlock,
            ToolUseBlock,
        )

        payload = _as_dict(message)
        state.record(type(message).__name__, payload)
        session = getattr(message, "session_id", None) or (
            message.data.get("session_id") if isinstance(message, SystemMessage) else None
        )
        if session:
            state.session_id = session
        if isinstance(message, AssistantMessage):
            if message.error:
                state.assistant_error = message.error
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    state.emit(
                        "tool",
                        describe_tool(block.name, block.input, state.ctx.workdir),
                        tool=block.name,
                        id=block.id,
                    )
                elif isinstance(block, TextBlock) and block.text.strip():
                    state.last_text = block.text
                    state.emit("text", block.text.strip().splitlines()[0][:120])
        elif isinstance(message, RateLimitEvent):
            info = message.rate_limit_info
            if info.status == "rejected":
                state.rate_limit = {
                    "status": info.status,
                    "retry_at": info.resets_at,
                    "rate_limit_type": info.rate_limit_type,
                }
                state.emit("status", "Rate limit reached", retry_at=info.resets_at)
        elif isinstance(message, ResultMessage):
            state.result = message

    def _result(
        self, state: _Attempt, path: Path, elapsed: float, crash: str | None
    ) -> AgentResult:
        r = state.result
        usage = getattr(r, "usage", None) or {}
        tokens_in = None
        if usage:
            tokens_in = sum(
                int(usage.get(k) or 0)
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            )
        out = AgentResult(
            output=(getattr(r, "result", None) or state.last_text or ""),
            transcript_path=path,
            session_id=getattr(r, "session_id", None) or state.session_id,
            cost_usd=getattr(r, "total_cost_usd", None),
            tokens_in=tokens_in,
            tokens_out=int(usage["output_tokens"])
            if usage.get("output_tokens") is not None
            else None,
            turns=getattr(r, "num_turns", None),
            duration_s=elapsed,
            events=state.events,
            question=state.question,
        )
        if isinstance(r, _Timeout):
            out.error, out.exit_code = f"timed out after {r.seconds:g}s", 124
            return out
        if state.question is not None:
            return out
        is_error = bool(getattr(r, "is_error", False)) or crash is not None or r is None
        text = crash or result_error_text(r) or "Claude Code ended without a result"
        platform = platform_error(r, text, state.assistant_error, state.rate_limit)
        if is_error and platform is not None:
            out.error, out.exit_code, out.platform = text, 1, platform
        elif is_error and getattr(r, "subtype", "") == "error_max_budget_usd":
            out.error, out.exit_code = text, 1
            out.question = HumanQuestion(
                question=f"Claude Code stopped at its budget cap (spent ${out.cost_usd or 0:.2f}).",
                options=["Raise the budget and resume", "Skip the task", "Abort the run"],
                detail={"reason": "max_budget_usd", "cost_usd": out.cost_usd},
            )
        elif is_error:
            out.error, out.exit_code = text, 1
        return out


@dataclasses.dataclass
class _Timeout:
    seconds: float


def _as_dict(message: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(message) and not isinstance(message, type):
        return dataclasses.asdict(message)
    return {"repr": repr(message)}


def _decision(decision: str, reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def _keep_tail(lines: list[str], line: str, limit: int = 40) -> None:
    lines.append(line)
    del lines[:-limit]
