"""`orchestrator submit` and `orchestrator worker`: the fleet's commands (issue 12, part 2), a thin
shell over `api.submit` and `api.work`, registered on the main app by `cli.py`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

Db = Annotated[
    str | None,
    typer.Option("--db", help="The shared PostgreSQL store: postgresql://USER@HOST/DB."),
]
ConfigFile = Annotated[
    Path | None, typer.Option("--config", help="Config file (default: orchestrator.toml).")
]


def submit(
    plan: Annotated[Path, typer.Argument(help="Plan file (milestone markdown or GSD PLAN.md).")],
    db: Db = None,
    workdir: Annotated[
        Path | None,
        typer.Option("--workdir", help="The git repository (or a folder in it) the run works on."),
    ] = None,
    origin: Annotated[
        str | None,
        typer.Option(
            "--origin",
            help="Repository the workers clone and push to (default: its origin remote).",
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option("--agent", help="claude | codex | gemini | aider | command | replay"),
    ] = None,
    agent_cmd: Annotated[
        str | None, typer.Option("--agent-cmd", help="Command template for --agent command.")
    ] = None,
    max_attempts: Annotated[
        int | None, typer.Option("--max-attempts", help="Attempts per level before escalating.")
    ] = None,
    allow_dirty: Annotated[
        bool | None, typer.Option("--allow-dirty", help="Start even with uncommitted changes.")
    ] = None,
    wait: Annotated[
        bool,
        typer.Option("--wait/--no-wait", help="Follow the run until it rests / return at once."),
    ] = True,
    config: ConfigFile = None,
) -> None:
    """Queue a plan for the fleet of `orchestrator worker` processes (exit as `run`).

    Its run branch goes to the origin the workers clone. With --wait (the
    default) it follows the run, then brings the workdir to the result.
    Exit 0 all completed, 1 a task failed, 3 waiting for a human."""
    from orchestrator import api

    given: dict[str, Any] = {
        "db": db,
        "workdir": str(workdir) if workdir else None,
        "agent": agent,
        "agent_cmd": agent_cmd,
        "max_attempts": max_attempts,
        "allow_dirty": allow_dirty,
    }
    outcome = api.submit(
        plan,
        wait=wait,
        origin=origin,
        config_file=config,
        **{k: v for k, v in given.items() if v is not None},
    )
    raise typer.Exit(outcome.exit_code)


def worker(
    db: Db = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="How status and escalations show it (default: host:pid)."),
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Tasks at once.")] = 1,
    stall_timeout: Annotated[
        float,
        typer.Option(
            "--stall-timeout",
            help="Seconds without a heartbeat before a worker's tasks go to another.",
        ),
    ] = 30.0,
    heartbeat: Annotated[
        float, typer.Option("--heartbeat", help="Seconds between this worker's heartbeats.")
    ] = 10.0,
    folder: Annotated[
        Path | None,
        typer.Option("--folder", help="Its clones and run files (default: the user cache folder)."),
    ] = None,
    config: ConfigFile = None,
) -> None:
    """Run the ready tasks of every fleet run in the shared store, until Ctrl-C or SIGTERM.

    Running tasks finish first; a worker killed outright has its tasks taken
    over by another after --stall-timeout."""
    from orchestrator import api

    api.work(
        db,
        config_file=config,
        name=name,
        concurrency=concurrency,
        stall_timeout=stall_timeout,
        heartbeat=heartbeat,
        folder=folder,
    )


def register(app: typer.Typer) -> None:
    app.command(rich_help_panel="Fleet")(submit)
    app.command(rich_help_panel="Fleet")(worker)
