"""OpenAI chat completions, scripted: what Aider (through litellm) talks to in tests.

`POST /v1/chat/completions` answers with the next script turn: with `"stream": true` as SSE
`data:` lines of `chat.completion.chunk` (the role and content, tool-call deltas with
`index`/`id`/`function.name`/`function.arguments`, a last chunk with `finish_reason` and `usage`,
then `data: [DONE]`), otherwise as one `chat.completion`. `GET /v1/models` lists the model
names seen so far (auxiliary). Other paths get a 404 error body (auxiliary).

Aider edits files from the reply's text, not through tools: a `whole` edit-format reply is the
file name on its own line followed by a fenced block with the whole new content — see
`whole_file_edit`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from orchestrator.testing.offline import offline_env
from orchestrator.testing.script import RecordedRequest, Reply, Text, ToolCall, TurnLike
from orchestrator.testing.server import EventStream, Exchange, ScriptedServer

ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("insufficient_quota", "insufficient_quota"),
    500: ("server_error", None),
}


def whole_file_edit(path: str, content: str, lang: str = "") -> str:
    """An aider `whole` edit-format reply that replaces (or creates) `path` with `content`."""
    body = content if content.endswith("\n") else content + "\n"
    return f"{path}\n```{lang}\n{body}```\n"


def search_replace_edit(path: str, search: str, replace: str) -> str:
    """An aider `diff` (SEARCH/REPLACE) edit-format reply; an empty `search` creates the file."""

    def lines(text: str) -> str:
        return text if not text or text.endswith("\n") else text + "\n"

    return (
        f"{path}\n```\n<<<<<<< SEARCH\n{lines(search)}=======\n{lines(replace)}"
        ">>>>>>> REPLACE\n```\n"
    )


class ChatCompletionsServer(ScriptedServer):
    """A scripted OpenAI chat-completions API on 127.0.0.1.

    >>> with ChatCompletionsServer([whole_file_edit("hello.py", 'print("hello")')]) as server:
    ...     agent = AiderAgent({"base_url": server.base_url, "model": "scripted",
    ...                         "env": server.aider_env(home)})
    """

    def __init__(
        self,
        script: Iterable[TurnLike] = (),
        *,
        when_exhausted: TurnLike = "(script exhausted)",
        auxiliary: Callable[[RecordedRequest], bool] | None = None,
        aux_text: str = "Scripted side answer",
    ) -> None:
        super().__init__(script, when_exhausted=when_exhausted)
        self.auxiliary = auxiliary
        self.aux_text = aux_text
        self.models: set[str] = set()

    @property
    def base_url(self) -> str:
        """What a client's `base_url` / `OPENAI_API_BASE` should be (the `/v1` prefix included)."""
        return f"{self.url}/v1"

    def aider_env(self, home: Path, api_key: str = "test-key") -> dict[str, str | None]:
        """Environment for aider offline: its own HOME, a fake key, no outside network."""
        return {
            **offline_env(home),
            "OPENAI_API_KEY": api_key,
            "OPENAI_BASE_URL": None,  # None unsets: a real one would compete with ours
            "AIDER_MODEL": None,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "NO_COLOR": "1",
            "TERM": "dumb",
        }

    # -- routing ----------------------------------------------------------------------------
    def handle(self, req: RecordedRequest, ex: Exchange) -> None:
        path = req.path.split("?", 1)[0].rstrip("/")
        if req.method == "GET" and path == "/v1/models":
            req.auxiliary = True
            data = [
                {"id": m, "object": "model", "owned_by": "scripted"} for m in sorted(self.models)
            ]
            ex.send_json(200, {"object": "list", "data": data})
            return
        if req.method != "POST" or path != "/v1/chat/completions":
            req.auxiliary = True
            ex.send_json(404, self.error_body(404, f"no route {req.method} {path}"))
            return
        body = req.body if isinstance(req.body, dict) else {}
        model = str(body.get("model") or "scripted")
        self.models.add(model)
        stream = bool(body.get("stream"))
        self.serve_turn(
            req, ex, lambda r: self._reply(r, req, ex, stream, model), self.auxiliary, self.aux_text
        )

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind, code = ERROR_TYPES.get(status, ("server_error", None))
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def stall_prelude(self, stream: EventStream) -> None:
        stream.event(None, _chunk("chatcmpl-stalled", "scripted", {"role": "assistant"}, None))

    # -- rendering --------------------------------------------------------------------------
    def _tool_calls(self, turn: Reply, req: RecordedRequest) -> list[dict[str, Any]]:
        return [
            {
                "id": self.tool_call_id(req.turn, i, b),
                "type": "function",
                "function": {"name": b.name, "arguments": json.dumps(b.args)},
            }
            for i, b in enumerate(turn.blocks)
            if isinstance(b, ToolCall)
        ]

    def _reply(
        self, turn: Reply, req: RecordedRequest, ex: Exchange, stream: bool, model: str
    ) -> None:
        cid = f"chatcmpl-{req.turn if req.turn is not None else 'aux'}-{len(self.requests)}"
        text = "".join(b.text for b in turn.blocks if isinstance(b, Text))
        calls = self._tool_calls(turn, req)
        finish = turn.stop_reason or ("tool_calls" if calls else "stop")
        usage = {
            "prompt_tokens": turn.input_tokens,
            "completion_tokens": turn.output_tokens,
            "total_tokens": turn.input_tokens + turn.output_tokens,
        }
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            ex.send_json(
                200,
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                },
            )
            return
        s = ex.open_stream()
        s.event(None, _chunk(cid, model, {"role": "assistant", "content": ""}, None))
        if text:
            s.event(None, _chunk(cid, model, {"content": text}, None))
        for i, call in enumerate(calls):
            s.event(None, _chunk(cid, model, {"tool_calls": [{"index": i, **call}]}, None))
        s.event(None, {**_chunk(cid, model, {}, finish), "usage": usage})
        s.write("data: [DONE]\n\n")


def _chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def user_messages(req: RecordedRequest) -> list[str]:
    """The text of the request's `user` messages, in order."""
    body = req.body if isinstance(req.body, dict) else {}
    out: list[str] = []
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append("".join(str(p.get("text", "")) for p in content if isinstance(p, dict)))
    return out
