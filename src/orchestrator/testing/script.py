"""Provider-neutral model turns and recorded requests for the scripted model servers.

A script is a list of turns; each model request (one that is not auxiliary, see the provider
module) consumes the next turn. A turn is one of:

- `Reply(...)` of blocks (`Text`, `ToolCall`, `McpCall`) — or the shorthands: a `str`, a single
  block, or a list/tuple of blocks;
- `Fail(status, ...)` — an HTTP error instead of a reply;
- `Stall(seconds)` — a stream that opens and then goes silent, then the connection drops;
- a callable `(RecordedRequest) -> turn` — decided when the request arrives (e.g. echo a path).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias


@dataclass(frozen=True)
class Text:
    """Plain assistant text."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """The model calls a tool; `id` is generated when not given."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    namespace: str | None = None
    """A tool namespace, for providers that have them (the Responses API's MCP servers)."""


@dataclass(frozen=True)
class McpCall:
    """The model calls `tool` of the MCP server `server`; each provider's server names it the way
    its CLI does (`ScriptedServer.mcp_tool_call`), so one script drives every agent."""

    server: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


Block: TypeAlias = Text | ToolCall | McpCall


@dataclass(frozen=True)
class Reply:
    """One assistant message made of several blocks (text, then tool calls, ...)."""

    blocks: tuple[Block, ...]
    input_tokens: int = 10
    output_tokens: int = 5
    stop_reason: str | None = None
    """None: `tool_use` when a block calls a tool, else `end_turn`."""

    @property
    def calls_tool(self) -> bool:
        return any(isinstance(b, ToolCall | McpCall) for b in self.blocks)


@dataclass(frozen=True)
class Fail:
    """Answer the request with an HTTP error (401, 403, 429 + retry-after, 500, 529, ...)."""

    status: int
    retry_after: float | None = None
    body: dict[str, Any] | str | None = None
    """None: the provider's usual error body for that status."""
    headers: dict[str, str] = field(default_factory=dict)
    message: str | None = None


@dataclass(frozen=True)
class Stall:
    """Open the stream (status 200 and the first event), stay silent, then drop the connection."""

    seconds: float


Turn: TypeAlias = Reply | Fail | Stall
TurnLike: TypeAlias = (
    "Turn | Block | str | list[Block] | tuple[Block, ...] | Callable[[RecordedRequest], TurnLike]"
)


def to_turn(item: TurnLike, request: RecordedRequest) -> Turn:
    """Normalise a script item (shorthands, callables) to a `Turn`."""
    if isinstance(item, Reply | Fail | Stall):
        return item
    if isinstance(item, str):
        return Reply((Text(item),))
    if isinstance(item, Text | ToolCall | McpCall):
        return Reply((item,))
    if isinstance(item, list | tuple):
        return Reply(tuple(item))
    if callable(item):
        return to_turn(item(request), request)
    raise TypeError(f"not a script turn: {item!r}")


SECRET_HEADERS = frozenset(
    {"x-api-key", "authorization", "proxy-authorization", "cookie", "x-goog-api-key"}
)


@dataclass
class RecordedRequest:
    """One HTTP request the server received (secret header values replaced by `<redacted>`)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """Parsed JSON, or the raw text when the body is not JSON, or None when empty."""
    auxiliary: bool = False
    """True when the request did not consume a script turn (title generation, token counting...)."""
    turn: int | None = None
    """Index of the script turn that answered it (None: auxiliary or script exhausted)."""

    @property
    def body_text(self) -> str:
        """The body as one JSON string, handy for `"In-memory" in req.body_text`."""
        if isinstance(self.body, str):
            return self.body
        return json.dumps(self.body, ensure_ascii=False)

    def contains(self, needle: str) -> bool:
        return needle in self.body_text


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: ("<redacted>" if k.lower() in SECRET_HEADERS else v) for k, v in headers.items()}
