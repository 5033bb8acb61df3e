"""The `orchestrator` command: a thin shell over `orchestrator.api` (every command has a function there)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from orchestrator import __version__
from orchestrator.cli_fleet import register as register_fleet

if TYPE_CHECKING:
    from orchestrator import api
    from orchestrator.models import UserError
else:

    class _LazyAPI:
        """`orchestrator.api` (the store, SQLAlchemy, the runner…) imported on first use, so
        `--version`, `--help` and a usage error start in a fraction of the time."""

        def __getattr__(self, name: str) -> Any:
            from orchestrator import api as module

            return getattr(module, name)

    api = _LazyAPI()

app = typer.Typer(
    help="Drive AI coding agents through a plan: judge every attempt, retry with guidance, "
    "stop loops, ask a human when needed, resume after anything.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
plan_app = typer.Typer(help="Inspect plan files.", no_args_is_help=True)
config_app = typer.Typer(help="Show the effective configuration.", no_args_is_help=True)
app.add_typer(plan_app, name="plan")
app.add_typer(config_app, name="config")
register_fleet(app)  # `submit` and `worker` (cli_fleet.py)
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def _version(value: bool) -> None:
    if value:
        print(f"orchestrator {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    pass


# Options shared by `run` and `resume` (resume takes the same flags as run).
Agent = Annotated[
    str | None, typer.Option("--agent", help="claude | codex | gemini | aider | command | replay")
]
MaxAttempts = Annotated[
    int | None,
    typer.Option("--max-attempts", help="Attempts per level before escalating (default: 3)."),
]
Workdir = Annotated[
    Path | None,
    typer.Option("--workdir", help="Where the agent works (default: current directory)."),
]
Scenario = Annotated[
    Path | None, typer.Option("--scenario", help="Replay scenario (default: PLAN.replay.yaml).")
]
AgentCmd = Annotated[
    str | None, typer.Option("--agent-cmd", help="Command template for --agent command.")
]
Db = Annotated[
    str | None,
    typer.Option(
        "--db", help="SQLAlchemy URL (default: the home store, $ORCHESTRATOR_HOME/state.db)."
    ),
]
Wait = Annotated[
    bool | None, typer.Option("--wait/--no-wait", help="Block for answers / pause and exit 3.")
]
Brain = Annotated[
    str | None, typer.Option("--brain", help="rules | claude | openai | auto (default: rules).")
]
Llm = Annotated[
    bool | None,
    typer.Option("--llm", help="Consult the LLM interpreter when the rules are unsure."),
]
LlmOnly = Annotated[
    bool | None, typer.Option("--llm-only", help="Use only the LLM interpreter, skip the rules.")
]
Consultant = Annotated[
    bool | None, typer.Option("--consultant/--no-consultant", help="Level-1 consultant.")
]
AllowDirty = Annotated[
    bool | None, typer.Option("--allow-dirty", help="Start even with uncommitted changes.")
]
Checkpoints = Annotated[
    bool | None, typer.Option("--checkpoints/--no-checkpoints", help="Git checkpoint per task.")
]
Parallel = Annotated[
    int | None,
    typer.Option(
        "--parallel",
        help="Run up to N ready tasks at once, each in its own git worktree (default: 1).",
    ),
]
Budget = Annotated[
    float | None, typer.Option("--max-budget-usd", help="Spending cap for the run, in USD.")
]
Model = Annotated[str | None, typer.Option("--model", help="Model for the agent.")]
FallbackModel = Annotated[
    str | None, typer.Option("--fallback-model", help="Claude Code's fallback model.")
]
PermissionMode = Annotated[
    str | None, typer.Option("--permission-mode", help="Claude Code permission mode.")
]
MaxTurns = Annotated[int | None, typer.Option("--max-turns", help="Agent turns per attempt.")]
TaskBudget = Annotated[
    float | None, typer.Option("--task-budget-usd", help="Spending cap per task, in USD.")
]
ConfigFile = Annotated[
    Path | None, typer.Option("--config", help="Config file (default: orchestrator.toml).")
]


def _overrides(**kw: Any) -> dict[str, Any]:
    # options of whichever agent is chosen (config.AGENT_OPTION); one it does not take is an error
    mapping = {
        "model": "agent_options.model",
        "fallback_model": "agent_options.fallback_model",
        "permission_mode": "agent_options.permission_mode",
        "max_turns": "agent_options.max_turns",
        "task_budget_usd": "agent_options.max_budget_usd",
    }
    out_: dict[str, Any] = {}
    for key, value in kw.items():
        if value is None:
            continue
        if key == "wait":
            value = "wait" if value else "no-wait"
        if isinstance(value, Path):
            value = str(value)
        out_[mapping.get(key, key)] = value
    return out_


@app.command()
def run(
    plan: Annotated[Path, typer.Argument(help="Plan file (milestone markdown or GSD PLAN.md).")],
    agent: Agent = None,
    max_attempts: MaxAttempts = None,
    workdir: Workdir = None,
    scenario: Scenario = None,
    agent_cmd: AgentCmd = None,
    db: Db = None,
    wait: Wait = None,
    brain: Brain = None,
    llm: Llm = None,
    llm_only: LlmOnly = None,
    consultant: Consultant = None,
    allow_dirty: AllowDirty = None,
    checkpoints: Checkpoints = None,
    parallel: Parallel = None,
    max_budget_usd: Budget = None,
    model: Model = None,
    fallback_model: FallbackModel = None,
    permission_mode: PermissionMode = None,
    max_turns: MaxTurns = None,
    task_budget_usd: TaskBudget = None,
    config: ConfigFile = None,
) -> None:
    """Run a plan from the start. Exit 0 all completed, 1 a task failed, 3 waiting for a human, 130 interrupted."""
    outcome = api.run(
        plan,
        config_file=config,
        **_overrides(
            agent=agent,
            max_attempts=max_attempts,
            workdir=workdir,
            scenario=scenario,
            agent_cmd=agent_cmd,
            db=db,
            wait=wait,
            brain=brain,
            llm=llm,
            llm_only=llm_only,
            consultant=consultant,
            allow_dirty=allow_dirty,
            checkpoints=checkpoints,
            parallel=parallel,
            max_budget_usd=max_budget_usd,
            model=model,
            fallback_model=fallback_model,
            permission_mode=permission_mode,
            max_turns=max_turns,
            task_budget_usd=task_budget_usd,
        ),
    )
    raise typer.Exit(outcome.exit_code)


@app.command()
def resume(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    agent: Agent = None,
    max_attempts: MaxAttempts = None,
    workdir: Workdir = None,
    scenario: Scenario = None,
    agent_cmd: AgentCmd = None,
    db: Db = None,
    wait: Wait = None,
    brain: Brain = None,
    llm: Llm = None,
    llm_only: LlmOnly = None,
    consultant: Consultant = None,
    allow_dirty: AllowDirty = None,
    checkpoints: Checkpoints = None,
    parallel: Parallel = None,
    max_budget_usd: Budget = None,
    model: Model = None,
    fallback_model: FallbackModel = None,
    permission_mode: PermissionMode = None,
    max_turns: MaxTurns = None,
    task_budget_usd: TaskBudget = None,
    config: ConfigFile = None,
) -> None:
    """Continue a run after Ctrl-C, a crash, kill -9 or an answer. Completed tasks are not run again."""
    outcome = api.resume(
        run_id,
        db=db,
        config_file=config,
        **_overrides(
            agent=agent,
            max_attempts=max_attempts,
            workdir=workdir,
            scenario=scenario,
            agent_cmd=agent_cmd,
            wait=wait,
            brain=brain,
            llm=llm,
            llm_only=llm_only,
            consultant=consultant,
            allow_dirty=allow_dirty,
            checkpoints=checkpoints,
            parallel=parallel,
            max_budget_usd=max_budget_usd,
            model=model,
            fallback_model=fallback_model,
            permission_mode=permission_mode,
            max_turns=max_turns,
            task_budget_usd=task_budget_usd,
        ),
    )
    raise typer.Exit(outcome.exit_code)


def _ts(value: float | None) -> str:
    return datetime.fromtimestamp(value).strftime("%Y-%m-%d %H:%M:%S") if value else "-"


def _json(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str))


@app.command("runs")
def runs_cmd(
    db: Db = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    config: ConfigFile = None,
) -> None:
    """List runs, newest first."""
    rows = api.list_runs(db, config_file=config)
    if as_json:
        _json(rows)
        return
    table = Table("Run", "Plan", "Agent", "Status", "Tasks", "Started")
    for r in rows:
        table.add_row(
            r["id"],
            escape(r["plan_path"]),
            r["agent"],
            r["status"],
            f"{r['completed']}/{r['tasks']}",
            _ts(r["created_at"]),
        )
    out.print(table)


@app.command()
def status(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    db: Db = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    config: ConfigFile = None,
) -> None:
    """One run's tasks, attempts and open escalations."""
    from orchestrator.console import fmt_cost, fmt_duration

    data = api.status(run_id, db, config_file=config)
    if as_json:
        _json(data)
        return
    run = data["run"]
    out.print(
        f"[bold]Run {run['id']}[/bold]  {escape(run['plan_path'])}  agent={run['agent']}  status={run['status']}"
    )
    table = Table("Task", "Title", "Status", "Attempts", "Last verdict", "Duration", "Cost")
    table.columns[2].no_wrap = True
    for t in data["tasks"]:
        att = [a for a in data["attempts"] if a["task_id"] == t["task_id"]]
        costs = [a["cost_usd"] for a in att if a["cost_usd"] is not None]
        table.add_row(
            t["task_id"],
            escape(t["title"][:40]),
            t["status"],
            str(len(att)),
            att[-1]["verdict"] or f"running {att[-1]['worker'] or ''}".strip() if att else "-",
            fmt_duration(sum(a["duration_s"] or 0 for a in att)),
            fmt_cost(sum(costs) if costs else None),
        )
    out.print(table)
    _print_escalations(data["escalations"])


def _print_escalations(rows: Sequence[Mapping[str, Any]]) -> None:
    if not rows:
        return
    out.print("[bold yellow]Open escalations[/bold yellow]")
    for e in rows:
        out.print(
            f"  [bold]#{e['id']}[/bold] run {e['run_id']} task {e['task_id']} "
            f"(level {e['level']}{', ' + e['category'] if e['category'] else ''}{', worker ' + escape(e['worker']) if e.get('worker') else ''})"
        )
        out.print("     " + escape(e["question"].splitlines()[0][:200]))
        for i, o in enumerate(e["options"]):
            out.print(f"       {chr(65 + i)}) {escape(o)}")
        if e["recommendation"]:
            out.print(f"     Recommendation: {escape(e['recommendation'])}")
        out.print(
            f"     Answer: orchestrator answer {e['id']} (TEXT | --option X | --recommended | --retry | --skip | --abort)"
        )


@app.command()
def escalations(
    run_id: Annotated[str | None, typer.Option("--run", help="Only this run.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Answered ones too.")] = False,
    db: Db = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    config: ConfigFile = None,
) -> None:
    """Questions waiting for a human (of every run in the store: the inbox), with the ids `answer` takes."""
    rows = api.list_escalations(run_id, db, open_only=not all_, config_file=config)
    if as_json:
        _json(rows)
        return
    if not rows:
        out.print("No open escalations.")
        return
    _print_escalations(rows)


@app.command()
def answer(
    escalation_id: Annotated[
        int, typer.Argument(help="Escalation id (see `orchestrator escalations`).")
    ],
    text: Annotated[
        str | None, typer.Argument(help="Free-text guidance, or an option letter.")
    ] = None,
    option: Annotated[str | None, typer.Option("--option", help="Pick option A, B, C…")] = None,
    recommended: Annotated[
        bool, typer.Option("--recommended", help="Take the recommendation.")
    ] = False,
    retry: Annotated[bool, typer.Option("--retry", help="Retry as is (counters reset).")] = False,
    skip: Annotated[bool, typer.Option("--skip", help="Skip the task.")] = False,
    abort: Annotated[bool, typer.Option("--abort", help="Abort the run.")] = False,
    db: Db = None,
    config: ConfigFile = None,
) -> None:
    """Answer an escalation once; then `orchestrator resume RUN` (a --wait runner continues by itself)."""
    row = api.answer(
        escalation_id,
        text,
        option=option,
        recommended=recommended,
        retry=retry,
        skip=skip,
        abort=abort,
        db=db,
        config_file=config,
    )
    out.print(
        f"Answered escalation {row['id']} ({row['response_kind']}): {escape(row['response'] or '')}"
    )
    out.print(f"Continue with: orchestrator resume {row['run_id']}")


@app.command()
def serve(
    host: Annotated[
        str, typer.Option(help="Address; any but loopback needs a token.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: any free one).")] = 8765,
    no_resume: Annotated[bool, typer.Option("--no-resume", help="Never resume a run.")] = False,
    db: Db = None,
    config: ConfigFile = None,
) -> None:
    """The web page: every run's open questions (answer them: channel `web`), runs, their logs;
    the MCP server's tools at /mcp/ (streamable HTTP, behind the same token rule)."""
    from orchestrator.mcp_server import mounted_at_mcp

    api.serve(
        host, port, db=db, resume=not no_resume, config_file=config, **mounted_at_mcp(db, config)
    )


@app.command()
def mcp(db: Db = None, config: ConfigFile = None) -> None:
    """MCP server on stdio (seed 003): list runs and escalations, answer, resume a task, rewind."""
    from orchestrator.mcp_server import serve_stdio

    serve_stdio(db, config)


@app.command()
def interpret(
    file: Annotated[str, typer.Argument(help="A file of agent output, or - for stdin.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    llm: Llm = None,
    llm_only: LlmOnly = None,
) -> None:
    """Judge one agent output: completed, needs_human or failed, with question, options and why."""
    from orchestrator.interpret import interpret as run_interpret
    from orchestrator.models import UserError

    if file == "-":
        text = sys.stdin.read()
    else:
        try:
            if not Path(file).is_file() and Path(file).exists():  # /dev/zero, a FIFO: endless
                raise UserError("not a regular file; pass a file of agent output, or -", path=file)
            text = Path(file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UserError(f"cannot read: {exc.strerror}; check the path", path=file) from None
    backend = None
    if llm or llm_only:
        from orchestrator.llm import get_backend

        settings, _ = api.settings_for()
        backend = get_backend(settings.llm_backend)
    result = run_interpret(text, llm=backend, llm_only=bool(llm_only))
    data = result.to_dict()
    if as_json:
        _json(data)
        return
    colour = {"completed": "green", "needs_human": "yellow", "failed": "red"}[data["verdict"]]
    out.print(f"verdict: [{colour}]{data['verdict']}[/{colour}]  (decided by {data['source']})")
    for key in ("category", "question", "recommendation", "why"):
        if data.get(key):
            out.print(f"{key}: {escape(str(data[key]))}")
    for i, o in enumerate(data.get("options") or []):
        out.print(f"  {chr(65 + i)}) {escape(o)}")


@plan_app.command("show")
def plan_show(
    plan: Annotated[Path, typer.Argument(help="Plan file.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Print a plan's tasks (or the parsed model as JSON)."""
    from orchestrator.plans import load_plan

    model = load_plan(plan)
    if as_json:
        print(model.model_dump_json(indent=2))
        return
    table = Table(
        "Task",
        "Title",
        "Type",
        "Files",
        "Depends on",
        "Gates",
        "Line",
        title=f"{plan} ({model.format})",
    )
    for t in model.tasks:
        table.add_row(
            t.id,
            escape(t.title),
            t.type + (" (checkpoint)" if t.checkpoint else ""),
            escape(", ".join(t.files)[:40]),
            ", ".join(t.depends_on) or "-",
            str(len(t.verify)),
            str(t.line),
        )
    out.print(table)
    if model.verification:
        out.print(f"Milestone verification: {len(model.verification)} command(s)")


@config_app.command("show")
def config_show(
    config: ConfigFile = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Every setting's effective value and where it came from; and the command policy."""
    from orchestrator.config import describe

    settings, sources = api.settings_for(config_file=config)
    rows = describe(settings, sources)
    policy = _policy(settings)
    if as_json:
        _json({"settings": {k: {"value": v, "source": s} for k, v, s in rows}, "policy": policy})
        return
    table = Table("Setting", "Value", "Source")
    for key, value, source in rows:
        table.add_row(key, escape(json.dumps(value, default=str)), escape(source))
    out.print(table)
    if policy:
        out.print("[bold]Command policy[/bold] (held for a human before they run):")
        out.print(escape(json.dumps(policy, indent=2)))


def _policy(settings: Any) -> dict[str, Any]:
    try:
        from orchestrator.policy import CommandPolicy
    except ImportError:
        return {}
    return CommandPolicy.from_config(settings.policy).describe()


def _user_error() -> type[UserError]:
    """UserError, imported only once an exception is on its way (models loads pydantic)."""
    from orchestrator.models import UserError

    return UserError


def main() -> None:
    try:
        code = app(standalone_mode=False)  # click returns a typer.Exit's code instead of raising it
    except _user_error() as exc:
        # soft_wrap: one line whatever the width, so logs and `2>&1 | grep` see it whole
        from orchestrator.redaction import redact_text  # a URL's password never reaches a log

        err.print(f"[red]error:[/red] {escape(redact_text(str(exc)))}", soft_wrap=True)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:
        import click

        if isinstance(exc, click.exceptions.Abort):
            sys.exit(130)
        line = _usage_error(exc)
        if line is None:
            raise
        err.print(f"[red]error:[/red] {escape(line)}", soft_wrap=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


def _usage_error(exc: Exception) -> str | None:
    """One line for a bad command line (unknown command or option, missing or invalid value),
    None for any other exception. Typer vendors its own Click (`typer._click`), whose exceptions
    are not `click`'s: both are recognised, by the base class each shares."""
    import click
    from typer.exceptions import TyperException

    if not isinstance(exc, click.exceptions.ClickException | TyperException):
        return None
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        print(ctx.get_help(), file=sys.stderr)  # a bare group (`orchestrator plan`): its help
        sys.exit(2)
    format_message = getattr(exc, "format_message", None)
    message = format_message() if callable(format_message) else str(exc)
    line = " ".join(str(message).split()).rstrip(".") or type(exc).__name__
    path = getattr(ctx, "command_path", None) or "orchestrator"
    return f"{line}; see `{path} --help`"
