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

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from orchestrator.agents import registry
from orchestrator.artifacts import LEGACY_STORE, home_dir, home_url, legacy_store, sqlite_url
from orchestrator.models import ConfigError
from orchestrator.redaction import REDACTED, redact_text, redact_url

AGENT_OPTION = "agent_options."
"""Prefix of an override meant for the chosen agent's own section, whichever agent that is:
`--model X` is `agent_options.model`, stored as `codex.model` when the agent is codex."""


class _Invalid(Exception):
    """An invalid setting at `loc`; `load_settings` adds where it came from."""

    def __init__(self, loc: str, msg: str) -> None:
        super().__init__(f"{loc}: {msg}")
        self.loc, self.msg = loc, msg


def check_options(agent: str, values: Any, where: str) -> dict[str, Any]:
    """`values` validated by `agent`'s options model: the options that are set, typed.
    `where` names them in errors (`codex`, `tasks.1.2`)."""
    model = registry.options_model(agent)
    if not isinstance(values, dict):
        raise _Invalid(where, f"must be a table of {agent} options")
    try:
        valid = model.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join([where, *(str(p) for p in err["loc"])])
        if err["type"] != "extra_forbidden" or len(err["loc"]) != 1:
            raise _Invalid(loc, err["msg"]) from None
        takes = ", ".join(model.model_fields) or "none"
        raise _Invalid(
            loc,
            f"{agent} has no option {err['loc'][0]!r} (its options: {takes}); "
            "remove it or choose an agent that takes it",
        ) from None
    return {k: v for k, v in valid.model_dump(exclude_unset=True).items() if v is not None}


class GatesConfig(BaseModel, extra="forbid"):
    commands: list[str] = Field(default_factory=list)
    """Run in the workdir after every attempt, besides the task's own verify commands."""
    timeout: float = Field(600.0, gt=0, strict=True)


class PolicyConfig(BaseModel, extra="forbid"):
    """Commands held for a human before they run (Claude Code's Bash tool)."""

    hold: list[str] = Field(default_factory=list)
    """Extra regular expressions to hold, on top of the built-in extreme-destructive rules."""
    allow: list[str] = Field(default_factory=list)
    """Regular expressions that are never held."""
    enabled: bool = True


NotifyEvent = Literal["escalation", "wait", "run_finished", "run_failed"]


class NotifyConfig(BaseModel, extra="forbid"):
    """Where to tell a person that a run needs them (`observers/notify.py`)."""

    urls: list[str] = Field(default_factory=list)
    """Apprise URLs (`ntfys://ntfy.sh/topic`, `tgram://…`, `json://host/path`, …): secrets, never
    shown or stored whole (`redaction.redact_url`)."""
    events: list[NotifyEvent] = Field(
        default_factory=lambda: list[NotifyEvent](["escalation", "wait"])
    )
    public_url: str | None = None
    """The web page's base URL (`orchestrator serve`) as a phone reaches it: the link and the
    ntfy buttons' target."""
    timeout: float = Field(10.0, gt=0, le=300, strict=True)
    """Longest a notification may hold the run up (all channels together)."""

    @field_validator("urls")
    @classmethod
    def _apprise_urls(cls, urls: list[str]) -> list[str]:
        for i, url in enumerate(urls):  # never echoed: a token may be all it holds
            if not re.match(r"^[a-zA-Z][\w+.-]*://\S", url):
                raise ValueError(
                    f"entry {i + 1} is not an apprise URL (scheme://…, as the apprise wiki lists)"
                )
        return urls

    @field_validator("public_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None and not re.match(r"^https?://[^\s/]+", url):
            raise ValueError("must be an http(s) URL, e.g. https://orchestrator.example.com")
        return url.rstrip("/") if url else url


class TelemetryConfig(BaseModel, extra="forbid"):
    """OpenTelemetry export (`telemetry/`): off unless an endpoint is set here or in the standard
    `OTEL_EXPORTER_OTLP_*` variables, which win over these keys."""

    otlp_endpoint: str | None = None
    """OTLP/HTTP base URL (`http://127.0.0.1:4318`); `/v1/traces` and `/v1/metrics` are added."""
    service_name: str | None = None
    """The `service.name` resource attribute (default `orchestrator`; `OTEL_SERVICE_NAME` wins)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every export (`authorization = "Bearer …"`): secrets, never stored or shown."""

    @field_validator("otlp_endpoint")
    @classmethod
    def _http_endpoint(cls, url: str | None) -> str | None:
        if url is not None and not re.match(r"^https?://[^\s/]+", url):
            raise ValueError("must be an http(s) URL, e.g. http://127.0.0.1:4318")
        return url or None


class Settings(BaseModel, extra="allow"):
    """Every setting; numbers are strict (`max_attempts = true` or `"3"` is an error, never 1 or
    3: TOML, JSON-read env values and flags all give real numbers). Besides the fields, one
    `[name]` section per registered agent
    (`agents/registry.py`), held as the options set there, validated by that agent's model;
    any other extra key is refused."""

    agent: str = "claude"
    agent_cmd: str | None = None
    scenario: str | None = None
    workdir: str = "."
    db: str | None = None
    max_attempts: int = Field(
        3, ge=1, strict=True, description="attempts per level before escalating (max_task_attempts)"
    )
    max_total_attempts: int = Field(
        6, ge=1, strict=True, description="hard cap of failed attempts since the last human resume"
    )
    max_e2e_fix_attempts: int = Field(
        5, ge=1, strict=True, description="fix attempts for the milestone verification"
    )
    verify_milestone: bool = Field(
        True, description="run the plan's E2E / Milestone Verification commands last"
    )
    similarity_threshold: float = Field(0.8, gt=0, le=1, strict=True)
    attempt_timeout: float = Field(3600.0, gt=0, strict=True)
    wait: Literal["auto", "wait", "no-wait"] = "auto"
    brain: Literal["rules", "claude", "openai", "auto"] = "rules"
    llm: bool = False
    llm_only: bool = False
    llm_backend: Literal["claude", "openai"] = "claude"
    consultant: bool = False
    allow_dirty: bool = False
    checkpoints: bool = True
    parallel: int = Field(
        1,
        ge=1,
        le=64,
        strict=True,
        description="tasks run at once, each in its own git worktree (1: one at a time, in the workdir)",
    )
    max_budget_usd: float | None = Field(
        None, gt=0, strict=True, description="total for the run, from recorded costs"
    )
    rate_limit_wait: float = Field(
        7 * 86400.0,
        ge=0,
        strict=True,
        description="longest wait for a usage/rate-limit reset before escalating (default a week: "
        "a limit that names its reset is waited out, overnight or over a weekend)",
    )
    gates: GatesConfig = Field(default_factory=GatesConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    notify: NotifyConfig = Field(default_factory=NotifyConfig)
    telemetry: TelemetryConfig = Field(default_factory=TelemetryConfig)
    tasks: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per-task overrides of the chosen agent's options (`[tasks."1.2"]`), validated by its model."""

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, name: str) -> str:
        if name not in registry.NAMES:
            raise ValueError(f"unknown agent {name!r}; choose one of: {', '.join(registry.NAMES)}")
        return name

    @model_validator(mode="after")
    def _agent_sections(self) -> Settings:
        extra = self.__pydantic_extra__ or {}
        try:
            for key, value in extra.items():
                if key not in registry.NAMES:
                    raise _Invalid(key, "unknown setting; check its spelling")
                extra[key] = check_options(key, value, key)
            for task_id, values in self.tasks.items():
                self.tasks[task_id] = check_options(self.agent, values, f"tasks.{task_id}")
        except _Invalid as exc:
            raise ValueError(str(exc)) from None
        return self

    def agent_section(self, agent: str) -> dict[str, Any]:
        """The options set in `[agent]` (none set: empty)."""
        return dict((self.__pydantic_extra__ or {}).get(agent) or {})

    def agent_options(self, task_id: str, agent: str | None = None) -> dict[str, Any]:
        """The agent's own section (default: the chosen agent's), then the task's overrides
        (`[tasks."1.2"]`), which must be options of that agent."""
        agent = agent or self.agent
        merged = self.agent_section(agent)
        if task_id in self.tasks:
            try:
                merged |= check_options(agent, self.tasks[task_id], f"tasks.{task_id}")
            except _Invalid as exc:
                raise ConfigError(f"setting {exc.loc!r}: {exc.msg}") from None
        return merged


def setting_names() -> frozenset[str]:
    """The top-level keys a stored settings dump may hold: the fields and one section per agent
    (what `api.resume_settings` keeps from a run's stored settings)."""
    return frozenset(Settings.model_fields) | frozenset(registry.NAMES)


Sources = dict[str, str]

_SECRET = re.compile(r"key|token|secret|password|auth", re.IGNORECASE)


def redact(data: Any) -> Any:
    """Settings as they may be stored or shown: values under secret-looking names are replaced,
    and credentials inside any text (`redaction.redact_text`: URL passwords, `--token=…`, `sk-…`);
    notification URLs (`notify.urls`) are all secret, so the list goes whole, and so do the
    values of the OTLP export's headers (`telemetry.headers`: their names stay).
    A resumed run takes those values from the config, environment and flags again, never from
    the store (`api.resume_settings`)."""
    if isinstance(data, dict):
        return {
            k: {name: REDACTED for name in v}
            if k == "headers" and isinstance(v, dict)
            else REDACTED
            if (_SECRET.search(str(k)) or k == "urls") and v not in (None, "", [])
            else redact(v)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [redact(v) for v in data]
    if isinstance(data, str):
        return redact_text(data)
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


def _layers(
    base: Path, env: dict[str, str], config_file: Path | None
) -> list[tuple[str, dict[str, Any]]]:
    """(source, values) of pyproject, orchestrator.toml (or --config) and the environment, lowest first."""
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
        if not key.startswith("ORCHESTRATOR_") or key.startswith("ORCHESTRATOR_TEST_"):
            continue  # ORCHESTRATOR_TEST_* is the test suite's own
        dotted = key[len("ORCHESTRATOR_") :].lower().replace("__", ".")
        if dotted in ("home", "serve_token", "run_mark") or (
            dotted.startswith("llm_") and dotted not in _LLM_SETTINGS
        ):  # the home directory (artifacts.home_dir), the web page's token (read by `serve` and
            continue  # the ntfy buttons, never stored), the mark of the run that started this
            # process (an agent's own `orchestrator …`), ORCHESTRATOR_LLM_BASE_URL etc.
        _set(
            env_layer,
            dotted,
            raw if dotted in ("db", "agent_cmd", "scenario", "workdir") else _env_value(raw),
            "the environment",
        )
    if env_layer:
        layers.append(("environment", env_layer))
    return layers


_LLM_SETTINGS = ("llm_only", "llm_backend")


def resolve_db(
    flag: str | None = None,
    config_file: Path | None = None,
    base: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[str, str]:
    """(URL, where it came from) of the store every command opens: `--db`, `ORCHESTRATOR_DB`,
    `db` in orchestrator.toml or pyproject, an older `./.orchestrator/state.db` here ("legacy"),
    else the home store ("home"). An empty value counts as unset."""
    if flag:
        return flag, "--db"
    base = base or Path.cwd()
    env = dict(os.environ) if env is None else env
    for source, layer in reversed(_layers(base, env, config_file)):
        value = layer.get("db")
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"setting 'db' from {source}: must be a database URL (a string)")
        if value:
            return value, source
    legacy = legacy_store(base)
    if legacy is not None:
        return sqlite_url(legacy), "legacy"
    return home_url(env), "home"


def legacy_notice(url: str) -> str:
    """One line for when an older per-directory store is used: how to keep it or move it."""
    return (
        f"notice: using {LEGACY_STORE} in this directory (older versions kept a store per "
        f"directory); use it from anywhere with --db {url} or ORCHESTRATOR_DB, or move it to "
        f"{home_dir() / 'state.db'} (the home store, if that has no runs yet)"
    )


def load_settings(
    base: Path | None = None,
    overrides: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    config_file: Path | None = None,
) -> tuple[Settings, Sources]:
    """Merge every source; raise ConfigError (one line, exit 2) on anything invalid."""
    layers = _layers(base or Path.cwd(), dict(os.environ) if env is None else env, config_file)
    merged: dict[str, Any] = {}
    sources: Sources = {}
    if overrides:
        agent = overrides.get("agent") or next(
            (
                layer["agent"]
                for _, layer in reversed(layers)
                if isinstance(layer.get("agent"), str)
            ),
            "claude",
        )
        flag_layer: dict[str, Any] = {}
        for dotted, value in overrides.items():
            if value is not None:
                if dotted.startswith(AGENT_OPTION):
                    dotted = f"{agent}.{dotted[len(AGENT_OPTION) :]}"
                _set(flag_layer, dotted, value)
        layers.append(("command line", flag_layer))

    for source, layer in layers:
        for dotted, value in flatten(layer).items():
            _set(merged, dotted, value, source)
            sources[dotted] = source

    def origin(where: str) -> str:
        """The most specific source: the key itself, a section containing it, or a key inside it."""
        related = [
            k
            for k in sources
            if k == where or where.startswith(k + ".") or k.startswith(where + ".")
        ]
        return sources[max(related, key=len)] if related else "defaults"

    try:  # agent sections and task overrides first: their errors name the agent's options
        agent = merged.get("agent", "claude")
        for key in [k for k in merged if k not in Settings.model_fields]:
            if key not in registry.NAMES:
                raise _Invalid(
                    key, "unknown setting; check its spelling (`orchestrator config show`)"
                )
            merged[key] = check_options(key, merged[key], key)
        tasks = merged.get("tasks")
        if agent in registry.NAMES and isinstance(tasks, dict):
            for task_id, values in tasks.items():
                tasks[task_id] = check_options(agent, values, f"tasks.{task_id}")
    except _Invalid as exc:
        raise ConfigError(f"setting {exc.loc!r} from {origin(exc.loc)}: {exc.msg}") from None
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"setting {where!r} from {origin(where)}: {err['msg']}") from None
    return settings, sources


def describe(settings: Settings, sources: Sources) -> list[tuple[str, Any, str]]:
    """(key, effective value, where it came from) for every setting."""
    data = settings.model_dump()
    # the chosen agent's options in full, defaults included
    model = registry.options_model(settings.agent)
    data[settings.agent] = model.model_validate(settings.agent_section(settings.agent)).model_dump()
    shown = redact(data)
    shown["notify"]["urls"] = [redact_url(u) for u in settings.notify.urls]  # which, not what
    rows = []
    for dotted, value in flatten(shown).items():
        rows.append((dotted, value, sources.get(dotted, "default")))
    return rows
