"""Aider (`aider --message-file … --yes-always`): one attempt is one aider chat, judged by its
exit code and our gates — aider has no JSON output.

What aider prints is read line by line for the live line and the result: `Applied edit to X`,
`Creating empty file X`, `Running CMD`, `Tokens: 1.2k sent, 40 received.` (tokens as aider
reports them: the API's usage when it gives one, else aider's own estimate — always with
streaming — rounded above 1000), `Cost: $0.01 message, …` (only for models with known prices) and `litellm.<Kind>Error: …`
(aider exits 0 after an API error, so that line is the only sign; its kind — rate limit, bad
key, credit, overloaded, connection — is a `rules.platform` kind the judge acts on).

Resume: aider has no session ids; its chat history file is the session. The session id is the
path of this attempt's `aider.chat.md`; resuming copies it into the new attempt's folder and
restarts aider with `--restore-chat-history`.

Defaults chosen for an unattended run inside the orchestrator: `--no-git` (the orchestrator
commits and checkpoints itself; aider's git mode would also write `.aider*` files and repo-map
caches into the repo — `git: true` turns it on, still without aider commits or `.gitignore`
edits); no shell commands suggested by the model are run (`shell_commands: true` allows them —
they bypass the dangerous-command policy); no auto lint/test (the gates do that); no update
checks, analytics, URL scraping or release notes; history files go to the attempt folder.

Options (constructor defaults, overridden by `ctx.options`): `model`; `base_url` → an
OpenAI-compatible endpoint (`OPENAI_API_BASE`; a bare model name gets litellm's `openai/`
prefix, and a local model-metadata file is written so aider neither fetches nor warns);
`edit_format`; `model_metadata` (dict) or `model_metadata_file`; `stream` (default true);
`git`; `shell_commands`; `extra_args`; `env` (None unsets); `cli_path`. Files to edit come
from `ctx.task.files`.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from orchestrator.agents._cli import CLIAgent, child_env, short
from orchestrator.agents.base import AgentEvent, AgentOptions, AgentResult, AttemptContext
from orchestrator.agents.process import run_process

MAX_EVENTS = 500
CHAT_FILE = "aider.chat.md"

FIXED_FLAGS = (
    "--yes-always",
    "--no-auto-commits",
    "--no-dirty-commits",
    "--no-gitignore",
    "--no-check-update",
    "--no-show-release-notes",
    "--no-analytics",
    "--no-pretty",
    "--no-fancy-input",
    "--no-detect-urls",
    "--no-auto-lint",
    "--no-auto-test",
    "--no-notifications",
    "--no-watch-files",
    "--no-show-model-warnings",
    "--encoding",
    "utf-8",
)

DEFAULT_METADATA = {
    "max_input_tokens": 128000,
    "max_output_tokens": 8192,
    "max_tokens": 8192,
    "input_cost_per_token": 0.0,
    "output_cost_per_token": 0.0,
    "litellm_provider": "openai",
    "mode": "chat",
}
"""For a model behind a custom `base_url` that aider does not know (a local or scripted one)."""

_TOKENS = re.compile(r"^Tokens: (?P<sent>[\d.]+k?) sent, .*?(?P<received>[\d.]+k?) received\.")
_COST = re.compile(r"\bCost: \$(?P<message>[\d.]+) message")
_API_ERROR = re.compile(r"^litellm\.(?P<kind>\w+Error): ?(?P<message>.*)")
_APPLIED = re.compile(r"^Applied edit to (?P<path>.+)$")
_CREATED = re.compile(r"^Creating empty file (?P<path>.+)$")
_RUNNING = re.compile(r"^Running (?P<cmd>.+)$")


class AiderOptions(AgentOptions):
    """`[aider]` and per-task overrides; see the module docstring."""

    model: str | None = None
    base_url: str | None = None
    edit_format: str | None = None
    model_metadata: dict[str, Any] | None = None
    model_metadata_file: str | None = None
    stream: bool = True
    git: bool = False
    shell_commands: bool = False
    extra_args: list[str] = Field(default_factory=list)
    env: dict[str, str | None] = Field(default_factory=dict)
    cli_path: str | None = None
    max_budget_usd: float | None = Field(None, gt=0)
    """The orchestrator's per-task cap from the costs aider reports (models with known prices)."""


def model_name(opts: Mapping[str, Any]) -> str | None:
    model = opts.get("model")
    if not model:
        return None
    model = str(model)
    if opts.get("base_url") and "/" not in model:
        return f"openai/{model}"
    return model


def build_argv(
    cli: str, ctx: AttemptContext, opts: Mapping[str, Any], *, chat_file: Path, restore: bool
) -> list[str]:
    argv = [cli, "--message-file", str(ctx.prompt_file), *FIXED_FLAGS]
    argv += ["--chat-history-file", str(chat_file)]
    argv += ["--input-history-file", str(ctx.artifacts / "aider.input.history")]
    argv += ["--llm-history-file", str(ctx.artifacts / "aider.llm.history")]
    argv.append("--restore-chat-history" if restore else "--no-restore-chat-history")
    argv.append("--git" if opts.get("git") else "--no-git")
    if not opts.get("shell_commands"):
        argv.append("--no-suggest-shell-commands")
    argv.append("--stream" if opts.get("stream", True) else "--no-stream")
    model = model_name(opts)
    if model:
        argv += ["--model", model]
    if opts.get("edit_format"):
        argv += ["--edit-format", str(opts["edit_format"])]
    metadata = metadata_file(ctx, opts, model)
    if metadata:
        argv += ["--model-metadata-file", str(metadata)]
    argv += [str(a) for a in opts.get("extra_args") or []]
    argv += [str(f) for f in ctx.task.files]
    return argv


def metadata_file(ctx: AttemptContext, opts: Mapping[str, Any], model: str | None) -> Path | None:
    """The model-metadata file to pass: the user's, one written from `model_metadata`, or a
    default for an unknown model behind `base_url` (so aider does not fetch litellm's list)."""
    if opts.get("model_metadata_file"):
        return Path(str(opts["model_metadata_file"]))
    data = opts.get("model_metadata")
    if not data and model and opts.get("base_url"):
        data = {model: DEFAULT_METADATA}
    if not data:
        return None
    path = ctx.artifacts / "aider.model-metadata.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def parse_count(text: str) -> int:
    """Aider's token counts: `950`, `1.2k`, `12k`."""
    if text.endswith("k"):
        return round(float(text[:-1]) * 1000)
    return int(float(text))


@dataclass
class AiderOutput:
    """Reads aider's plain output as it arrives."""

    ctx: AttemptContext
    tokens_in: int = 0
    tokens_out: int = 0
    turns: int = 0
    cost: float | None = None
    error: str | None = None
    error_lines: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)

    def line(self, raw: str) -> None:
        text = raw.rstrip()
        if self.error_lines and text:  # aider wraps long error messages over several lines
            self.error = f"{self.error} {text.strip()}"
            self.error_lines -= 1
            return
        self.error_lines = 0
        if m := _COST.search(text):  # after the token counts, on their line or the next
            self.cost = (self.cost or 0.0) + float(m["message"])
        if m := _TOKENS.match(text):
            self.turns += 1
            self.tokens_in += parse_count(m["sent"])
            self.tokens_out += parse_count(m["received"])
        elif m := _API_ERROR.match(text):
            self.error = f"litellm.{m['kind']}: {m['message'].strip()}"
            self.error_lines = 3
        elif m := _APPLIED.match(text):
            self.action("Editing", m["path"])
        elif m := _CREATED.match(text):
            self.action("Creating", m["path"])
        elif m := _RUNNING.match(text):
            self.action("Running:", short(m["cmd"]))

    def action(self, verb: str, what: str) -> None:
        summary = f"{verb} {self._rel(what)}"
        self.ctx.on_event(AgentEvent(kind="tool", summary=summary))
        if len(self.events) < MAX_EVENTS:
            self.events.append({"type": "tool", "summary": summary})

    def _rel(self, path: str) -> str:
        try:
            return str(Path(path).resolve().relative_to(self.ctx.workdir.resolve()))
        except (ValueError, OSError):
            return path


class AiderAgent(CLIAgent):
    """Runs aider once per attempt in the workdir; see the module docstring for options."""

    name = cli_name = "aider"
    options_model = AiderOptions
    program = "aider"
    install = "uv tool install aider-chat"
    label = "Aider"

    def attempt(self, ctx: AttemptContext, opts: dict[str, Any], cli: str) -> AgentResult:
        chat_file = ctx.artifacts / CHAT_FILE
        restore = False
        if ctx.resume_session:
            previous = Path(ctx.resume_session)
            if previous.is_file():
                if previous.resolve() != chat_file.resolve():
                    shutil.copyfile(previous, chat_file)
                restore = True
        env: dict[str, Any] = {
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm's bundled prices, no fetch at import
            "COLUMNS": "4096",  # one message per line: no wrapping of paths and errors
            **(opts.get("env") or {}),
        }
        if opts.get("base_url"):
            env["OPENAI_API_BASE"] = str(opts["base_url"])
        state = AiderOutput(ctx)
        proc = run_process(
            build_argv(cli, ctx, opts, chat_file=chat_file, restore=restore),
            cwd=ctx.workdir,
            stdout_path=ctx.artifacts / "aider.stdout.log",
            stderr_path=ctx.artifacts / "aider.stderr.log",
            timeout=ctx.timeout,
            env=child_env(env),
            on_line=state.line,
        )
        error, question = self.failure(proc, ctx.timeout, state.error)
        return AgentResult(
            output=proc.stdout_tail(),
            exit_code=proc.exit_code,
            transcript_path=chat_file if chat_file.is_file() else proc.stdout_path,
            session_id=str(chat_file) if chat_file.is_file() else None,
            cost_usd=state.cost,
            tokens_in=state.tokens_in if state.turns else None,
            tokens_out=state.tokens_out if state.turns else None,
            turns=state.turns or None,
            error=error,
            events=state.events,
            question=question,
        )
