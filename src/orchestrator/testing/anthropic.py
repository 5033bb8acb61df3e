"""The Anthropic Messages API, scripted: what Claude Code talks to in tests.

`POST /v1/messages` answers with the next script turn, streamed as Claude Code asks for it
(`message_start`, `ping`, `content_block_start/delta/stop` for text and `tool_use` with
`input_json_delta`, `message_delta` with stop_reason and usage, `message_stop`), or as one JSON
message when `stream` is false.

Auxiliary requests do not consume script turns. The rule: a `/v1/messages` request with no
`tools` is auxiliary (Claude Code's side calls — session titles, summaries, command-prefix
checks — never carry tools, while every agent turn carries its tool list); it gets `aux_text`.
`/v1/messages/count_tokens` answers an estimate; other paths get a 404 error body. With the
environment of `claude_code_env` (non-essential traffic off) the bundled Claude Code 2.1.x sends
only agent turns, one request per model turn, to `POST /v1/messages?beta=true`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from orchestrator.testing.script import RecordedRequest, Reply, Text, ToolCall, TurnLike
from orchestrator.testing.server import EventStream, Exchange, ScriptedServer

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def is_auxiliary(req: RecordedRequest) -> bool:
    """A Messages request that is not an agent turn: it carries no tools."""
    return not (isinstance(req.body, dict) and req.body.get("tools"))


class AnthropicServer(ScriptedServer):
    """A scripted Anthropic Messages API on 127.0.0.1.

    >>> with AnthropicServer([ToolCall("Write", {"file_path": "/tmp/x", "content": "1"}),
    ...                       "Done."]) as server:
    ...     env = server.claude_code_env(home)   # pass to ClaudeAgentOptions(env=...)
    """

    def __init__(
        self,
        script: Iterable[TurnLike] = (),
        *,
        when_exhausted: TurnLike = "(script exhausted)",
        aux_text: str = "Scripted session",
        auxiliary: Callable[[RecordedRequest], bool] = is_auxiliary,
    ) -> None:
        super().__init__(script, when_exhausted=when_exhausted)
        self.aux_text = aux_text
        self.auxiliary = auxiliary

    def claude_code_env(self, home: Path, api_key: str = "test-key") -> dict[str, str]:
        """Environment that runs Claude Code offline against this server, config under `home`.

        Secrets of the calling environment are not inherited by this dict, but the SDK merges
        it over `os.environ`, so a real key there is overridden by the fake one.
        """
        config = home / ".claude"
        config.mkdir(parents=True, exist_ok=True)
        return {
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": api_key,
            "ANTHROPIC_AUTH_TOKEN": "",
            "CLAUDE_CODE_OAUTH_TOKEN": "",
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(config),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            # anything not bound for this server hits a closed local port and fails at once
            **{
                k: "http://127.0.0.1:9"
                for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
            },
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }

    # -- routing ----------------------------------------------------------------------------
    def handle(self, req: RecordedRequest, ex: Exchange) -> None:
        path = req.path.split("?", 1)[0].rstrip("/")
        if req.method == "POST" and path == "/v1/messages/count_tokens":
            req.auxiliary = True
            ex.send_json(200, {"input_tokens": max(1, len(req.body_text) // 4)})
            return
        if req.method != "POST" or path != "/v1/messages":
            req.auxiliary = True
            ex.send_json(404, self.error_body(404, f"no route {req.method} {path}"))
            return
        body = req.body if isinstance(req.body, dict) else {}
        stream = bool(body.get("stream"))
        model = str(body.get("model") or "claude-scripted")
        self.serve_turn(
            req, ex, lambda r: self._reply(r, req, ex, stream, model), self.auxiliary, self.aux_text
        )

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def stall_prelude(self, stream: EventStream) -> None:
        stream.event("message_start", _message_start("msg_stalled", "claude-scripted", 1))

    # -- rendering --------------------------------------------------------------------------
    def content(self, turn: Reply, req: RecordedRequest) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        for i, b in enumerate(turn.blocks):
            if isinstance(b, Text):
                blocks.append({"type": "text", "text": b.text})
            elif isinstance(b, ToolCall):  # an McpCall is a ToolCall by now (`next_turn`)
                tid = self.tool_call_id(req.turn, i, b, prefix="toolu")
                blocks.append({"type": "tool_use", "id": tid, "name": b.name, "input": b.args})
        return blocks

    def _reply(
        self, turn: Reply, req: RecordedRequest, ex: Exchange, stream: bool, model: str
    ) -> None:
        mid = f"msg_{req.turn if req.turn is not None else 'aux'}_{len(self.requests)}"
        stop = turn.stop_reason or ("tool_use" if turn.calls_tool else "end_turn")
        content = self.content(turn, req)
        usage = {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens}
        if not stream:
            ex.send_json(
                200,
                {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        s = ex.open_stream({"request-id": f"req_{mid}"})
        s.event("message_start", _message_start(mid, model, turn.input_tokens))
        s.event("ping", {"type": "ping"})
        for i, block in enumerate(content):
            if block["type"] == "text":
                s.event("content_block_start", _block_start(i, {"type": "text", "text": ""}))
                s.event(
                    "content_block_delta", _delta(i, {"type": "text_delta", "text": block["text"]})
                )
            else:
                start = {**block, "input": {}}
                s.event("content_block_start", _block_start(i, start))
                partial = _json(block["input"])
                s.event(
                    "content_block_delta",
                    _delta(i, {"type": "input_json_delta", "partial_json": partial}),
                )
            s.event("content_block_stop", {"type": "content_block_stop", "index": i})
        s.event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": turn.output_tokens},
            },
        )
        s.event("message_stop", {"type": "message_stop"})


def _json(obj: Any) -> str:
    return json.dumps(obj)


def _message_start(mid: str, model: str, input_tokens: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        },
    }


def _block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def tool_results(req: RecordedRequest) -> list[dict[str, Any]]:
    """The `tool_result` blocks of the last user message of a Messages request."""
    body = req.body if isinstance(req.body, dict) else {}
    messages = body.get("messages") or []
    for msg in reversed(messages):
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, list):
            found = [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"]
            if found:
                return found
        return []
    return []


def tool_result_text(block: dict[str, Any]) -> str:
    """A tool_result block's content as plain text (string or list of text parts)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
