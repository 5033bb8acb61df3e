"""Settings from defaults < pyproject `[tool.orchestrator]` < `orchestrator.toml` < `ORCHESTRATOR_*` < flags.

Each value remembers where it came from, so `orchestrator config show` can say why it is what it is.
Nested keys use dots in TOML tables (`[gates] commands = [...]`) and `__` in the environment
(`ORCHESTRATOR_GATES__TIMEOUT=120`).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from orchestrator.models import ConfigError


class GatesConfig(BaseModel, extra="forbid"):
    commands: list[str] = Field(default_factory=list)
    """Run in the workdir after every attempt, besides the task's own verify commands."""
    timeout: float = Field(600.0, gt=0)


class AgentOptions(BaseModel, extra="forbid"):
    """Options for the coding agent; per task too, under `[tasks."1.1"]`."""

    model: str | None = None
    fallback_model: str | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    max_turns: int | None = Field(None, ge=1)
    append_system_prompt: str | None = None
    max_budget_usd: float | None = Field(None, gt=0)


class PolicyConfig(BaseModel, extra="forbid"):
    """Commands held for a human before they run (Claude Code's Bash tool)."""

    hold: list[str] = Field(default_factory=list)
    """Extra regular expressions to hold, on top of the built-in extreme-destructive rules."""
    allow: list[str] = Field(default_factory=list)
    """Regular expressions that are never held."""
    enabled: bool = True


class Settings(BaseModel, extra="forbid"):
    agent: str = "claude"
    agent_cmd: str | None = None
    scenario: str | None = None
    workdir: str = "."
    db: str | None = None
    max_attempts: int = Field(
        3, ge=1, description="attempts per level before escalating (max_task_attempts)"
    )
    max_total_attempts: int = Field(
        6, ge=1, description="hard cap of failed attempts since the last human resume"
    )
    max_e2e_fix_attempts: int = Field(
        5, ge=1, description="fix attempts for the milestone verification"
    )
    verify_milestone: bool = Field(
        True, description="run the plan's E2E / Milestone Verification commands last"
    )
    similarity_threshold: float = Field(0.8, gt=0, le=1)
    attempt_timeout: float = Field(3600.0, gt=0)
    wait: Literal["auto", "wait", "no-wait"] = "auto"
    brain: Literal["rules", "claude", "openai", "auto"] = "rules"
    llm: bool = False
    llm_only: bool = False
    llm_backend: Literal["claude", "openai"] = "claude"
    consultant: bool = False
    allow_dirty: bool = False
    checkpoints: bool = True
    max_budget_usd: float | None = Field(
        None, gt=0, description="total for the run, from recorded costs"
    )
    rate_limit_wait: float = Field(
        900.0, ge=0, description="longest wait for a rate-limit reset before escalating"
    )
    gates: GatesConfig = Field(default_factory=GatesConfig)
    claude: AgentOptions = Field(default_factory=AgentOptions)
    codex: dict[str, Any] = Field(default_factory=dict)
    """Options for the codex adapter (model, base_url, sandbox, …; see its module docstring)."""
    gemini: dict[str, Any] = Field(default_factory=dict)
    aider: dict[str, Any] = Field(default_factory=dict)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    tasks: dict[str, AgentOptions] = Field(default_factory=dict)

    def agent_options(self, task_id: str, agent: str = "claude") -> dict[str, Any]:
        """The agent's own section, then the task's overrides (`[tasks."1.2"]`)."""
        section = getattr(self, agent, None) if agent in ("codex", "gemini", "aider") else None
        merged = (
            dict(section)
            if isinstance(section, dict)
            else self.claude.model_dump(exclude_none=True)
        )
        if task_id in self.tasks:
            merged.update(self.tasks[task_id].model_dump(exclude_none=True))
        return merged


Sources = dict[str, str]

REDACTED = "<redacted>"
_SECRET = re.compile(r"key|token|secret|password|auth", re.IGNORECASE)


def redact(data: Any) -> Any:
    """Settings as they may be stored or shown: values under secret-looking names are replaced.
    A resumed run takes those values from the config and environment again, never from the store."""
    if isinstance(data, dict):
        return {
            k: REDACTED if _SECRET.search(str(k)) and v not in (None, "") else redact(v)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [redact(v) for v in data]
    return data


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and key != "tasks":  # task ids hold dots ("1.1"): kept whole
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _set(data: dict[str, Any], dotted: str, value: Any, source: str | None = None) -> None:
    parts = dotted.split(".")
    for i, p in enumerate(parts[:-1]):
        data = data.setdefault(p, {})
        if not isinstance(data, dict):
            prefix = ".".join(parts[: i + 1])
            origin = f" from {source}" if source else ""
            raise ConfigError(
                f"setting {dotted!r}{origin}: {prefix!r} is a value, not a table; set one or the other"
            )
    data[parts[-1]] = value


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}; fix the file", path=str(path)) from None
    except RecursionError:
        raise ConfigError("invalid TOML: nested too deeply; fix the file", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", path=str(path)) from None


def _env_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def load_settings(
    base: Path | None = None,
    overrides: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    config_file: Path | None = None,
) -> tuple[Settings, Sources]:
    """Merge every source; raise ConfigError (one line, exit 2) on anything invalid."""
    base = base or Path.cwd()
    env = dict(os.environ) if env is None else env
    merged: dict[str, Any] = {}
    sources: Sources = {}

    layers: list[tuple[str, dict[str, Any]]] = []
    pyproject = base / "pyproject.toml"
    if pyproject.is_file():
        tool = _read_toml(pyproject).get("tool", {}).get("orchestrator")
        if isinstance(tool, dict):
            layers.append((f"{pyproject}", tool))
    toml_path = config_file or base / "orchestrator.toml"
    if config_file is not None and not toml_path.is_file():
        raise ConfigError("config file not found; check --config", path=str(toml_path))
    if toml_path.is_file():
        layers.append((str(toml_path), _read_toml(toml_path)))
    env_layer: dict[str, Any] = {}
    for key, raw in env.items():
        if key.startswith("ORCHESTRATOR_") and not key.startswith(
            "ORCHESTRATOR_TEST_"
        ):  # test suite's own
            dotted = key[len("ORCHESTRATOR_") :].lower().replace("__", ".")
            if dotted.startswith("llm_") and dotted not in ("llm_only", "llm_backend"):
                continue  # ORCHESTRATOR_LLM_BASE_URL etc. belong to the LLM backend
            _set(
                env_layer,
                dotted,
                raw if dotted in ("db", "agent_cmd", "scenario", "workdir") else _env_value(raw),
                "the environment",
            )
    if env_layer:
        layers.append(("environment", env_layer))
    if overrides:
        flag_layer: dict[str, Any] = {}
        for dotted, value in overrides.items():
            if value is not None:
                _set(flag_layer, dotted, value)
        layers.append(("command line", flag_layer))

    for source, layer in layers:
        for dotted, value in flatten(layer).items():
            _set(merged, dotted, value, source)
            sources[dotted] = source
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        # the most specific source: the key itself, a section containing it, or a key inside it
        related = [
            k
            for k in sources
            if k == where or where.startswith(k + ".") or k.startswith(where + ".")
        ]
        origin = sources[max(related, key=len)] if related else "defaults"
        raise ConfigError(f"setting {where!r} from {origin}: {err['msg']}") from None
    return settings, sources


def describe(settings: Settings, sources: Sources) -> list[tuple[str, Any, str]]:
    """(key, effective value, where it came from) for every setting."""
    rows = []
    for dotted, value in flatten(redact(settings.model_dump())).items():
        rows.append((dotted, value, sources.get(dotted, "default")))
    return rows
