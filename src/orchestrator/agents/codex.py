"""OpenAI Codex CLI through `codex exec --json`: one attempt is one Codex thread (or one more turn
of it on resume), its JSONL events turned into the common result.

Events read (codex-cli 0.169): `thread.started` (thread id → session id), `turn.started` (turns),
`item.started`/`item.completed` with `command_execution`, `file_change`, `mcp_tool_call`,
`web_search` (→ live line) and `agent_message` (→ final text), `turn.completed` (usage),
`turn.failed` and `error` (→ error; `Reconnecting... n/m` errors are Codex's own retries).
Their error messages become a `rules.platform` kind (bad key, usage limit with its reset,
high demand, dropped stream, …) that the judge waits for, backs off from or asks a person
about. On resume, Codex reports
the thread's cumulative usage, not the new turn's.

Options (constructor defaults, overridden by `ctx.options`): `model`; `sandbox` (default
`workspace-write`: edits inside the workdir, no network for commands); `permission_mode`
`bypassPermissions` → `--dangerously-bypass-approvals-and-sandbox` (for externally sandboxed
machines); `append_system_prompt` → Codex `developer_instructions`; `base_url` → a custom
Responses-API provider (`env_key` names its key variable, default `OPENAI_API_KEY`); `config`
→ more `-c key=value` overrides; `env` (None unsets); `cli_path`.

Every attempt offers the orchestrator's `ask_human` / `report_status` MCP tools (`agent_mcp`):
`-c mcp_servers.orchestrator.*` for this process only, its tools approved (`approval_policy`
is `never`, so an unapproved MCP call would fail) with a tool timeout long enough for a person.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from orchestrator.agents._cli import CLIAgent, child_env, json_object, short, unwrap_shell
from orchestrator.agents.base import AgentEvent, AgentOptions, AgentResult, AttemptContext
from orchestrator.agents.human_tool import HumanChannel, codex_config
from orchestrator.agents.process import run_process

PROVIDER = "orchestrator"
MAX_EVENTS = 500
MAX_TEXT = 256 * 1024


class CodexOptions(AgentOptions):
    """`[codex]` and per-task overrides; see the module docstring."""

    model: str | None = None
    sandbox: str = "workspace-write"
    permission_mode: str | None = None
    append_system_prompt: str | None = None
    base_url: str | None = None
    env_key: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str | None] = Field(default_factory=dict)
    cli_path: str | None = None


def flat(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested tables as dotted keys (`{"a": {"b": 1}}` → `{"a.b": 1}`): a `-c` override of a
    whole table would replace it (the settings loader nests the dotted keys of `[codex.config]`)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, Mapping) and value:
            out |= flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def toml_value(value: Any) -> str:
    """A `-c key=value` value: JSON strings, numbers, booleans and arrays are valid TOML."""
    return json.dumps(value)


def build_argv(cli: str, ctx: AttemptContext, opts: Mapping[str, Any]) -> list[str]:
    """`codex exec [resume ID] --json ... -`; the prompt goes to stdin (no argv size limit)."""
    config: dict[str, Any] = {"approval_policy": "never"}
    if opts.get("base_url"):
        prefix = f"model_providers.{PROVIDER}"
        config |= {
            "model_provider": PROVIDER,
            f"{prefix}.name": PROVIDER,
            f"{prefix}.base_url": str(opts["base_url"]),
            f"{prefix}.wire_api": "responses",
            f"{prefix}.env_key": str(opts.get("env_key") or "OPENAI_API_KEY"),
        }
    bypass = opts.get("permission_mode") == "bypassPermissions"
    if not bypass:
        config["sandbox_mode"] = str(opts.get("sandbox") or "workspace-write")
    if opts.get("append_system_prompt"):
        config["developer_instructions"] = str(opts["append_system_prompt"])
    config |= flat(dict(opts.get("config") or {}))

    argv = [cli, "exec"]
    if ctx.resume_session:
        argv += ["resume", ctx.resume_session]
    argv += ["--json", "--skip-git-repo-check"]
    if bypass:
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    if opts.get("model"):
        argv += ["--model", str(opts["model"])]
    for key, value in config.items():
        argv += ["-c", f"{key}={toml_value(value)}"]
    argv.append("-")
    return argv


@dataclass
class CodexEvents:
    """Folds the JSONL stream as it arrives, keeping only what the result needs."""

    ctx: AttemptContext
    thread_id: str | None = None
    final_text: str = ""
    turns: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    announced: set[str] = field(default_factory=set)

    def line(self, raw: str) -> None:
        ev = json_object(raw)
        if ev is not None:
            self.event(ev)

    def event(self, ev: dict[str, Any]) -> None:
        kind = ev.get("type")
        if kind == "thread.started":
            self.thread_id = str(ev.get("thread_id") or "") or self.thread_id
        elif kind == "turn.started":
            self.turns += 1
        elif kind in ("item.started", "item.completed", "item.updated"):
            item = ev.get("item")
            if isinstance(item, dict):
                self.item(item, done=kind == "item.completed")
        elif kind == "turn.completed":
            usage = ev.get("usage")
            if isinstance(usage, dict):
                self.usage = {k: int(v) for k, v in usage.items() if isinstance(v, int)}
            self.error = None  # errors before a completed turn were transient
        elif kind == "turn.failed":
            err = ev.get("error")
            message = err.get("message") if isinstance(err, dict) else err
            self.error = str(message or "turn failed")
        elif kind == "error":
            message = str(ev.get("message") or "")
            if not message.startswith("Reconnecting"):
                self.error = message or "error"

    def item(self, item: dict[str, Any], *, done: bool) -> None:
        kind = str(item.get("type") or "")
        item_id = str(item.get("id") or "")
        if kind == "agent_message":
            if done:
                self.final_text = str(item.get("text") or "")[-MAX_TEXT:]
            return
        if kind == "error":  # a warning from Codex itself, e.g. unknown model metadata
            if done:
                self.warnings.append(str(item.get("message") or ""))
            return
        summary = describe_item(kind, item)
        if summary is None:
            return
        if item_id not in self.announced:
            self.announced.add(item_id)
            self.ctx.on_event(AgentEvent(kind="tool", summary=summary, data={"item": kind}))
        if done and len(self.events) < MAX_EVENTS:
            record = {"type": kind, "summary": summary}
            for key in ("exit_code", "status"):
                if key in item:
                    record[key] = item[key]
            self.events.append(record)


def describe_item(kind: str, item: Mapping[str, Any]) -> str | None:
    """`Running: pytest -q`, `Editing hello.py`, ... for the items that are actions."""
    if kind == "command_execution":
        return f"Running: {short(unwrap_shell(str(item.get('command') or '')))}"
    if kind == "file_change":
        changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
        paths = ", ".join(str(c.get("path", "")) for c in changes[:3])
        return f"Editing {paths}" if paths else "Editing files"
    if kind == "mcp_tool_call":
        return f"Calling {item.get('server', '')}.{item.get('tool', '')}"
    if kind == "web_search":
        return f"Searching the web: {short(str(item.get('query') or ''))}"
    return None


class CodexAgent(CLIAgent):
    """Runs `codex exec --json` in the workdir; see the module docstring for options."""

    name = cli_name = "codex"
    options_model = CodexOptions
    program = "codex CLI"
    install = "npm install -g @openai/codex"
    label = "Codex"

    def attempt(self, ctx: AttemptContext, opts: dict[str, Any], cli: str) -> AgentResult:
        state = CodexEvents(ctx)
        with HumanChannel(ctx, self.name) as channel:  # the ask_human / report_status tools
            config = codex_config(channel) | dict(opts.get("config") or {})
            proc = run_process(
                build_argv(cli, ctx, {**opts, "config": config}),
                cwd=ctx.workdir,
                stdout_path=ctx.artifacts / "codex.events.jsonl",
                stderr_path=ctx.artifacts / "codex.stderr.log",
                timeout=ctx.timeout,
                env=child_env(opts.get("env")),
                stdin_data=ctx.prompt.encode(),
                on_line=state.line,
                paused=channel.waited,  # a person answering is not the agent's time
            )
        error, question = self.failure(proc, ctx.timeout, state.error)
        return AgentResult(
            output=state.final_text,
            exit_code=proc.exit_code,
            transcript_path=proc.stdout_path,
            session_id=state.thread_id,
            tokens_in=state.usage.get("input_tokens"),
            tokens_out=state.usage.get("output_tokens"),
            turns=state.turns or None,
            error=error,
            events=state.events,
            question=question or channel.question,
            reported_status=channel.status,
        )
