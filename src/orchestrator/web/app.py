"""The web page's routes: the inbox, the runs, a run's page and its files, and the JSON API the
page itself uses. Every read and every answer goes through `orchestrator.api` on one open store,
so an answer here means exactly what `orchestrator answer` means (channel `web`)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from orchestrator import api
from orchestrator.console import fmt_cost, fmt_duration
from orchestrator.models import UserError
from orchestrator.store import AlreadyAnswered, Store
from orchestrator.web import views
from orchestrator.web.security import Guard

ACTIONS = ("retry", "skip", "abort", "recommended")
"""`{"action": …}` in an answer: the flags of `orchestrator answer`."""
CHANNEL = re.compile(r"^[a-z][a-z0-9_-]{0,19}$")
"""A channel another sender may name (`ntfy` for a notification's button); default `web`."""
Lifespan = Callable[[], AbstractAsyncContextManager[Any]]


def _templates() -> Environment:
    env = Environment(
        loader=PackageLoader("orchestrator.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    env.filters["duration"] = fmt_duration
    env.filters["cost"] = fmt_cost
    env.filters["when"] = lambda ts: (
        datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S") if ts else "-"
    )
    return env


class Web:
    """The routes over one store; `resume`: start a paused run no runner holds after an answer."""

    def __init__(self, store: Store, *, resume: bool = True) -> None:
        self.store, self.resume = store, resume
        self.env = _templates()

    def page(self, name: str, **context: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(resume=self.resume, **context)
        return HTMLResponse(html)

    # -- pages ------------------------------------------------------------------------------------
    async def inbox_page(self, request: Request) -> Response:
        items = await run_in_threadpool(views.inbox, self.store)
        return self.page("inbox.html", items=items, active="inbox")

    async def runs_page(self, request: Request) -> Response:
        rows = await run_in_threadpool(views.runs, self.store)
        return self.page("runs.html", runs=rows, active="runs")

    async def run_page(self, request: Request) -> Response:
        data = await run_in_threadpool(views.run_detail, self.store, request.path_params["run_id"])
        return self.page("run.html", active="runs", **data)

    async def file_page(self, request: Request) -> Response:
        run_id, rel = request.path_params["run_id"], request.path_params["path"]
        _, text = await run_in_threadpool(views.run_file, self.store, run_id, rel)
        return PlainTextResponse(text, headers={"content-security-policy": "sandbox"})

    # -- the JSON API -----------------------------------------------------------------------------
    async def api_runs(self, request: Request) -> Response:
        return _json({"runs": await run_in_threadpool(views.runs, self.store)})

    async def api_run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        return _json(await run_in_threadpool(views.run_detail, self.store, run_id))

    async def api_escalations(self, request: Request) -> Response:
        return _json({"escalations": await run_in_threadpool(views.inbox, self.store)})

    async def api_answer(self, request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return _error(415, 'send JSON (Content-Type: application/json), e.g. {"option": "B"}')
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(400, 'the body is not JSON; send {"option": "B"}, {"text": "…"} or …')
        esc_id = request.path_params["esc_id"]
        return await run_in_threadpool(self.answer, esc_id, body)

    async def metrics(self, request: Request) -> Response:
        """The store's metrics in Prometheus's text format, read afresh on every scrape (the SQL
        runs in a worker thread). prometheus-client is imported on the first scrape only."""
        from orchestrator.prometheus import CONTENT_TYPE, exposition

        body = await run_in_threadpool(exposition, self.store)
        return Response(body, media_type=CONTENT_TYPE)

    def answer(self, esc_id: int, body: Any) -> Response:
        """Validate, record (first answer wins), then resume the run if nobody holds it."""
        if not isinstance(body, dict):
            return _error(400, 'send an object: {"option": "B"}, {"text": "…"} or {"action": …}')
        given = [k for k in ("option", "text", "action") if body.get(k) not in (None, "")]
        if len(given) != 1:
            return _error(400, 'give exactly one of "option", "text" or "action"')
        key = given[0]
        value = body[key]
        if not isinstance(value, str):
            return _error(400, f'"{key}" must be a string')
        if key == "action" and value not in ACTIONS:
            return _error(400, f'"action" must be one of: {", ".join(ACTIONS)}')
        channel = body.get("channel") or "web"
        if not isinstance(channel, str) or not CHANNEL.match(channel):
            return _error(400, '"channel" must be a short lowercase name, e.g. "web"')
        responder = body.get("responder")
        if responder is not None and (not isinstance(responder, str) or len(responder) > 100):
            return _error(400, '"responder" must be a string of at most 100 characters')
        if self.store.escalation(esc_id) is None:
            return _error(404, f"no escalation {esc_id}; GET /api/escalations lists the open ones")
        try:
            row = api.answer(
                esc_id,
                value if key == "text" else None,
                option=value if key == "option" else None,
                recommended=key == "action" and value == "recommended",
                retry=key == "action" and value == "retry",
                skip=key == "action" and value == "skip",
                abort=key == "action" and value == "abort",
                responder=responder,
                channel=channel,
                store=self.store,
            )
        except AlreadyAnswered as exc:
            return _error(409, str(exc), escalation=self.store.escalation(esc_id))
        except UserError as exc:
            return _error(400, str(exc))
        return _json({"escalation": row, "resume": self.resume_after(row["run_id"])})

    def resume_after(self, run_id: str) -> dict[str, Any]:
        """A runner that holds the run (`--wait`, a terminal) picks the answer up by itself;
        otherwise `orchestrator resume RUN` starts in the background (unless `--no-resume`)."""
        from orchestrator.detached import held, start_resume

        if not self.resume:
            cmd = f"orchestrator resume {run_id}"
            return {"started": False, "held": held(self.store, run_id), "command": cmd}
        log = start_resume(self.store, run_id, db_url=self.store.url)
        return {"started": log is not None, "held": log is None, "log": str(log) if log else None}

    def routes(self) -> list[BaseRoute]:
        static = Path(__file__).parent / "static"
        return [
            Route("/", self.inbox_page),
            Route("/runs", self.runs_page),
            Route("/runs/{run_id}", self.run_page),
            Route("/runs/{run_id}/files/{path:path}", self.file_page),
            Route("/api/runs", self.api_runs),
            Route("/api/runs/{run_id}", self.api_run),
            Route("/api/escalations", self.api_escalations),
            Route("/api/escalations/{esc_id:int}/answer", self.api_answer, methods=["POST"]),
            Route("/metrics", self.metrics),
            Mount("/static", StaticFiles(directory=static), name="static"),
        ]


def _json(data: Any, status: int = 200) -> Response:
    return Response(
        json.dumps(data, default=str), status_code=status, media_type="application/json"
    )


def _error(status: int, message: str, **extra: Any) -> Response:
    return _json({"error": message, **extra}, status)


async def _user_error(request: Request, exc: Exception) -> Response:
    status = 404 if isinstance(exc, views.NotFound) else 400
    if request.url.path.startswith("/api/"):
        return _error(status, str(exc))
    return PlainTextResponse(str(exc), status_code=status)


def create_app(
    store: Store,
    *,
    token: str | None = None,
    loopback: bool = True,
    resume: bool = True,
    extra_mounts: Sequence[tuple[str, ASGIApp]] = (),
    lifespans: Sequence[Lifespan] = (),
) -> ASGIApp:
    """The whole server as one ASGI app, behind the token / Host / cross-site guard.

    `extra_mounts`: more apps served under a path, behind the same guard — `orchestrator mcp`'s
    streamable HTTP app at `/mcp`. `lifespans`: what those apps need running while the server
    runs (the MCP session manager's `run()`), entered in order at start-up."""
    web = Web(store, resume=resume)
    routes = [*web.routes(), *(Mount(path, app=app) for path, app in extra_mounts)]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for enter in lifespans:
                await stack.enter_async_context(enter())
            yield

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={UserError: _user_error},
    )
    return Guard(app, token=token, loopback=loopback)
