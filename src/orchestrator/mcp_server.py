"""The MCP server (seed 003): `orchestrator mcp` over stdio, and the same tools over streamable HTTP
from `serve` at `/mcp`, so a person's own Claude Code (or any MCP client) sees the runs, answers
the orchestrator's questions, resumes a paused task or rewinds to a task's checkpoint.

Every tool is a thin call into `orchestrator.api` on one store opened for the server's life; a
UserError becomes the tool's error (its one line), so the client's model reads what to do next.
An answer or a re-queue starts `orchestrator resume` in the background when no runner holds the
run (a runner that holds it picks the answer up by itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypedDict, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from orchestrator.models import UserError

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from orchestrator.store import Store

CHANNEL = "mcp"
INSTRUCTIONS = (
    "The orchestrator drives AI coding agents through plans and asks a human when needed. "
    "list_escalations shows the open questions; answer_escalation answers one (an option letter, "
    "free text, or retry/skip/abort) and the run resumes by itself."
)

P = ParamSpec("P")
R = TypeVar("R")


def _plain(value: Any) -> Any:
    """Store rows as JSON values (floats, ints, strings; anything else as its text)."""
    return json.loads(json.dumps(value, default=str))


def _user_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """A UserError's one line is the tool's error; anything else is the SDK's own error."""

    @wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except UserError as exc:
            raise ToolError(str(exc)) from None

    return call


class Tools:
    """The tools on one store; the store opens on first use, so a bad store is a tool error."""

    def __init__(self, db: str | None = None, config_file: Path | None = None) -> None:
        self.db, self.config_file = db, config_file
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            from orchestrator import api

            self._store = api.open_store(self.db, config_file=self.config_file)
        return self._store

    def resume(self, run_id: str, wanted: bool) -> dict[str, Any]:
        """Start `orchestrator resume RUN` in the background unless a runner holds the run."""
        if not wanted:
            return {"started": False, "log": None, "why": "not asked to resume"}
        from orchestrator.detached import start_resume

        log = start_resume(self.store, run_id, db_url=self.store.url)
        if log is None:
            return {"started": False, "log": None, "why": "a runner holds the run and goes on"}
        return {"started": True, "log": str(log), "why": "no runner held the run"}

    def list_runs(self) -> dict[str, Any]:
        """Every run in the store, newest first, with its task counts."""
        from orchestrator import api

        return {"runs": _plain(api.list_runs(store=self.store))}

    def run_status(self, run_id: str | None = None) -> dict[str, Any]:
        """One run (the latest without run_id): its tasks, attempts and open escalations."""
        from orchestrator import api

        data: dict[str, Any] = _plain(api.status(run_id, store=self.store))
        return data

    def list_escalations(self, run_id: str | None = None, all: bool = False) -> dict[str, Any]:
        """Open questions of every run (or of one run); all=True includes answered ones."""
        from orchestrator import api

        rows = api.list_escalations(run_id, open_only=not all, store=self.store)
        return {"escalations": _plain(rows)}

    def answer_escalation(
        self,
        escalation_id: int,
        option: str | None = None,
        text: str | None = None,
        action: Literal["retry", "skip", "abort", "recommended"] | None = None,
        resume: bool = True,
    ) -> dict[str, Any]:
        """Answer an open escalation once, with exactly one of: option (a letter such as "B"),
        text (free guidance), or action (retry, skip, abort, recommended). A second answer is
        refused. The paused run then resumes in the background."""
        from orchestrator import api

        row = api.answer(
            escalation_id,
            text,
            option=option,
            recommended=action == "recommended",
            retry=action == "retry",
            skip=action == "skip",
            abort=action == "abort",
            channel=CHANNEL,
            store=self.store,
        )
        return {"escalation": _plain(row), "resume": self.resume(row["run_id"], resume)}

    def resume_task(
        self, run_id: str, task_id: str, guidance: str | None = None, resume: bool = True
    ) -> dict[str, Any]:
        """Seed 003: reset a task's attempt counters and set it PENDING (atomically), with
        optional guidance for its next attempt, then resume the run. Refused while a runner
        holds the run, or when the task is COMPLETED (rewind_to_task redoes finished work)."""
        from orchestrator import api

        row = api.resume_task(run_id, task_id, guidance=guidance, channel=CHANNEL, store=self.store)
        return {"task": _plain(row), "resume": self.resume(run_id, resume)}

    def rewind_to_task(self, run_id: str, task_id: str, resume: bool = True) -> dict[str, Any]:
        """Revert the run's workdir to the checkpoint before this task and queue it and every
        later task again, then resume the run. Refused while a runner holds the run."""
        from orchestrator import api

        out = api.rewind_to_task(run_id, task_id, channel=CHANNEL, store=self.store)
        return out | {"resume": self.resume(run_id, resume)}


TOOL_NAMES = (
    "list_runs",
    "run_status",
    "list_escalations",
    "answer_escalation",
    "resume_task",
    "rewind_to_task",
)


def build_server(db: str | None = None, config_file: Path | None = None) -> MCPServer:
    from orchestrator import __version__

    server: MCPServer = MCPServer(
        "orchestrator", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    tools = Tools(db, config_file)
    for name in TOOL_NAMES:
        server.add_tool(_user_errors(getattr(tools, name)), name=name, structured_output=True)
    return server


def serve_stdio(db: str | None = None, config_file: Path | None = None) -> None:
    """`orchestrator mcp`: the server on stdin/stdout until the client closes it."""
    build_server(db, config_file).run("stdio")


def mcp_mount(
    db: str | None = None, config_file: Path | None = None
) -> tuple[ASGIApp, Callable[[], AbstractAsyncContextManager[None]]]:
    """The same tools as a streamable HTTP ASGI app serving at its own root, and the lifespan a
    mounting app must run (the SDK's session manager): `serve` mounts it at `/mcp`. Stateless (a
    request stands alone, so no session outlives a restart), JSON answers. The SDK's own Host
    check is off: `serve`'s guard in front of it applies the page's rule (loopback Host names,
    else the token)."""
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_server(db, config_file)
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path="/",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return app, server.session_manager.run


class Mounts(TypedDict):
    """`api.serve`'s keyword arguments that serve the MCP tools at `/mcp/`."""

    extra_mounts: list[tuple[str, ASGIApp]]
    lifespans: list[Callable[[], AbstractAsyncContextManager[None]]]


def mounted_at_mcp(db: str | None = None, config_file: Path | None = None) -> Mounts:
    app, lifespan = mcp_mount(db, config_file)
    return {"extra_mounts": [("/mcp", app)], "lifespans": [lifespan]}


def mcp_app(db: str | None = None, config_file: Path | None = None) -> ASGIApp:
    """The streamable HTTP app alone (its own lifespan runs the session manager when it is the
    top-level app); to mount it inside another app use `mcp_mount`."""
    return mcp_mount(db, config_file)[0]
