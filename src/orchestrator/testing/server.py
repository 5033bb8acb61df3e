"""A scripted model server: the base every provider format builds on.

Real agent CLIs (Claude Code, Codex, Gemini CLI, Aider) are tested against a local HTTP server
that plays a script of model turns in the provider's wire format and records every request.
This module holds the provider-neutral part: the HTTP plumbing (stdlib, one thread per request,
127.0.0.1 on an ephemeral port), the script cursor, request recording, failures and stalls.

Adding a provider (say OpenAI chat completions for Aider) is one sibling module:

    class ChatCompletionsServer(ScriptedServer):
        def handle(self, req: RecordedRequest, ex: Exchange) -> None:
            if req.method == "POST" and req.path.startswith("/v1/chat/completions"):
                turn = self.next_turn(req)            # consumes one script turn (or not: aux)
                if self.answer_failure_or_stall(turn, ex):  # Fail / Stall done
                    return
                ...render `turn` (a Reply of Text/ToolCall blocks) as JSON or SSE via ex...
            else:
                ex.send_json(404, self.error_body(404, "not found"))

        def error_body(self, status: int, message: str) -> dict[str, Any]: ...
        def stall_prelude(self, stream: EventStream) -> None: ...   # first event of a stream

Turn types live in `orchestrator.testing.script` and are shared by every provider; use
`self.tool_call_id(turn_index, block_index, call)` for stable tool-call ids.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from orchestrator.testing.script import (
    Fail,
    McpCall,
    RecordedRequest,
    Reply,
    Stall,
    Text,
    ToolCall,
    Turn,
    TurnLike,
    redact_headers,
    to_turn,
)


class EventStream:
    """A server-sent-events response in progress (the connection closes when it ends)."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self._h = handler

    def event(self, name: str | None, data: Any) -> None:
        """Send one SSE event (`event:` line only when `name` is given), flushed at once."""
        head = f"event: {name}\n" if name else ""
        payload = data if isinstance(data, str) else json.dumps(data)
        self.write(f"{head}data: {payload}\n\n")

    def write(self, raw: str) -> None:
        self._h.wfile.write(raw.encode())
        self._h.wfile.flush()


class Exchange:
    """The response side of one request, so providers never touch `http.server` directly."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self._h = handler

    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(obj).encode()
        self._h.send_response(status)
        self._h.send_header("content-type", "application/json")
        self._h.send_header("content-length", str(len(raw)))
        for k, v in (headers or {}).items():
            self._h.send_header(k, v)
        self._h.end_headers()
        if self._h.command != "HEAD":
            self._h.wfile.write(raw)

    def open_stream(self, headers: dict[str, str] | None = None) -> EventStream:
        self._h.send_response(200)
        self._h.send_header("content-type", "text/event-stream")
        self._h.send_header("cache-control", "no-cache")
        self._h.send_header("connection", "close")
        for k, v in (headers or {}).items():
            self._h.send_header(k, v)
        self._h.end_headers()
        self._h.close_connection = True
        return EventStream(self._h)


class ScriptedServer:
    """Serve a script of model turns on 127.0.0.1 in a background thread; record every request.

    Use as a context manager; `url` is the base URL to hand to the agent. Subclasses implement
    `handle` (routing and the wire format), `error_body` and `stall_prelude`.
    """

    def __init__(
        self,
        script: Iterable[TurnLike] = (),
        *,
        when_exhausted: TurnLike = "(script exhausted)",
    ) -> None:
        self.script: list[TurnLike] = list(script)
        self.when_exhausted = when_exhausted
        self.requests: list[RecordedRequest] = []
        self._cursor = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle -------------------------------------------------------------------------
    def start(self) -> Self:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _serve(self) -> None:
                server._dispatch(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=type(self).__name__,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- script -----------------------------------------------------------------------------
    def add(self, *turns: TurnLike) -> None:
        """Append turns while the server runs (e.g. between two agent runs)."""
        with self._lock:
            self.script.extend(turns)

    @property
    def turns_used(self) -> int:
        return self._cursor

    @property
    def turns_left(self) -> int:
        return len(self.script) - self._cursor

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """Requests that consumed a script turn (not auxiliary), in arrival order."""
        return [r for r in self.requests if not r.auxiliary]

    def dump_requests(self, path: Path) -> None:
        """Write every recorded request as a JSON line: what an agent CLI really sends."""
        with path.open("w", encoding="utf-8") as out:
            for r in list(self.requests):
                out.write(json.dumps(dataclasses.asdict(r), ensure_ascii=False) + "\n")

    def next_turn(self, req: RecordedRequest) -> Turn:
        """Consume the next script turn for `req` (the exhausted turn once the script ran out)."""
        with self._lock:
            if self._cursor < len(self.script):
                item, req.turn = self.script[self._cursor], self._cursor
                self._cursor += 1
            else:
                item = self.when_exhausted
        turn = to_turn(item, req)
        if isinstance(turn, Reply) and any(isinstance(b, McpCall) for b in turn.blocks):
            blocks = tuple(
                self.mcp_tool_call(b) if isinstance(b, McpCall) else b for b in turn.blocks
            )
            turn = dataclasses.replace(turn, blocks=blocks)
        return turn

    def mcp_tool_call(self, call: McpCall) -> ToolCall:
        """How the provider's CLI names an MCP tool; Claude Code's `mcp__server__tool` here."""
        return ToolCall(f"mcp__{call.server}__{call.tool}", call.args, call.id)

    @staticmethod
    def tool_call_id(turn: int | None, block: int, call: ToolCall, prefix: str = "call") -> str:
        return call.id or f"{prefix}_{turn if turn is not None else 'x'}_{block}"

    # -- provider hooks ---------------------------------------------------------------------
    def handle(self, req: RecordedRequest, ex: Exchange) -> None:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": message}}

    def stall_prelude(self, stream: EventStream) -> None:
        """The first event of a stream that then stalls (providers send their usual opener)."""

    # -- shared answers ---------------------------------------------------------------------
    def serve_turn(
        self,
        req: RecordedRequest,
        ex: Exchange,
        reply: Callable[[Reply], None],
        auxiliary: Callable[[RecordedRequest], bool] | None,
        aux_text: str,
    ) -> None:
        """An auxiliary request gets `aux_text` and keeps the script where it is; any other gets
        the next turn: an injected failure, a stall, or a reply in the provider's format."""
        if auxiliary is not None and auxiliary(req):
            req.auxiliary = True
            reply(Reply((Text(aux_text),)))
            return
        turn = self.next_turn(req)
        if self.answer_failure_or_stall(turn, ex):
            return
        assert isinstance(turn, Reply)
        reply(turn)

    def answer_failure_or_stall(self, turn: Turn, ex: Exchange) -> bool:
        """Answer a `Fail` or `Stall` turn; False when `turn` is a `Reply` for the provider."""
        if isinstance(turn, Fail):
            headers = dict(turn.headers)
            if turn.retry_after is not None:
                headers.setdefault("retry-after", f"{turn.retry_after:g}")
            body: Any = turn.body
            if body is None:
                body = self.error_body(turn.status, turn.message or default_message(turn.status))
            ex.send_json(turn.status, body, headers)
            return True
        if isinstance(turn, Stall):
            stream = ex.open_stream()
            self.stall_prelude(stream)
            self._closing.wait(turn.seconds)
            return True
        return False

    # -- plumbing ---------------------------------------------------------------------------
    def _dispatch(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            text = raw.decode("utf-8", errors="replace")
            try:
                body = json.loads(text)
            except json.JSONDecodeError:
                body = text
        req = RecordedRequest(
            method=h.command, path=h.path, headers=redact_headers(dict(h.headers)), body=body
        )
        with self._lock:
            self.requests.append(req)
        try:
            self.handle(req, Exchange(h))
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True


def default_message(status: int) -> str:
    return {
        400: "invalid request",
        401: "invalid x-api-key",
        403: "permission denied",
        404: "not found",
        429: "rate limited",
        500: "internal server error",
        529: "overloaded",
    }.get(status, f"HTTP {status}")


__all__ = [
    "EventStream",
    "Exchange",
    "Fail",
    "McpCall",
    "Reply",
    "ScriptedServer",
    "Stall",
    "Text",
    "ToolCall",
]
