"""The OpenAI Responses API, scripted: what Codex CLI talks to in tests.

`POST /v1/responses` answers with the next script turn as Codex streams it (SSE with `event:`
names): `response.created`, then per output item `response.output_item.added`,
(`response.output_text.delta` for text), `response.output_item.done`, and `response.completed`
with usage. `Text` blocks become one assistant `message` item (`output_text`), each `ToolCall` a
`function_call` item (`call_id`, `name`, JSON `arguments`; an `McpCall` names the tool inside the
namespace `mcp__<server>`, as Codex offers MCP tools). With `"stream": false` the same
output comes back as one response object. Codex 0.169 sends one request per model turn; the
previous tool results arrive as `function_call_output` input items (see `function_outputs`).
Other paths (model discovery, compaction) are auxiliary and get a 404 error body.

Codex's usual tools: `exec_command` with `{"cmd": "..."}` (runs in the workdir) and, for known
models, `apply_patch`; an unknown model name gets `exec_command` only.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from orchestrator.testing.offline import offline_env
from orchestrator.testing.script import McpCall, RecordedRequest, Reply, Text, ToolCall
from orchestrator.testing.server import EventStream, Exchange, ScriptedServer

ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", None),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
    500: ("server_error", None),
}


class ResponsesServer(ScriptedServer):
    """A scripted OpenAI Responses API on 127.0.0.1.

    >>> with ResponsesServer([ToolCall("exec_command", {"cmd": "touch x"}), "Done."]) as server:
    ...     agent = CodexAgent({"base_url": server.base_url, "env": server.codex_env(home)})
    """

    @property
    def base_url(self) -> str:
        """What a client's `base_url` should be (the `/v1` prefix included)."""
        return f"{self.url}/v1"

    def codex_env(self, home: Path, api_key: str = "test-key") -> dict[str, str]:
        """Environment for Codex offline: its own `CODEX_HOME`, a fake key, no outside network."""
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        return {
            **offline_env(home),
            "CODEX_HOME": str(codex_home),
            "OPENAI_API_KEY": api_key,
        }

    # -- routing ----------------------------------------------------------------------------
    def handle(self, req: RecordedRequest, ex: Exchange) -> None:
        path = req.path.split("?", 1)[0].rstrip("/")
        if req.method != "POST" or path != "/v1/responses":
            req.auxiliary = True
            ex.send_json(404, self.error_body(404, f"no route {req.method} {path}"))
            return
        body = req.body if isinstance(req.body, dict) else {}
        turn = self.next_turn(req)
        if self.answer_failure_or_stall(turn, ex):
            return
        assert isinstance(turn, Reply)
        model = str(body.get("model") or "scripted")
        rid = f"resp_{req.turn if req.turn is not None else 'x'}_{len(self.requests)}"
        output = self.output_items(turn, req)
        if not body.get("stream"):
            ex.send_json(200, _response(rid, model, "completed", output, turn))
            return
        s = ex.open_stream()
        seq = iter(range(1_000_000))

        def send(name: str, data: dict[str, Any]) -> None:
            s.event(name, {"type": name, "sequence_number": next(seq), **data})

        send("response.created", {"response": _response(rid, model, "in_progress", [], None)})
        for i, item in enumerate(output):
            if item["type"] == "message":
                send(
                    "response.output_item.added",
                    {"output_index": i, "item": {**item, "content": []}},
                )
                text = item["content"][0]["text"]
                send(
                    "response.output_text.delta",
                    {"item_id": item["id"], "output_index": i, "content_index": 0, "delta": text},
                )
            else:
                send("response.output_item.added", {"output_index": i, "item": item})
            send("response.output_item.done", {"output_index": i, "item": item})
        send("response.completed", {"response": _response(rid, model, "completed", output, turn)})

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind, code = ERROR_TYPES.get(status, ("server_error", None))
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def stall_prelude(self, stream: EventStream) -> None:
        created = _response("resp_stalled", "scripted", "in_progress", [], None)
        stream.event(
            "response.created",
            {"type": "response.created", "sequence_number": 0, "response": created},
        )

    def mcp_tool_call(self, call: McpCall) -> ToolCall:
        """Codex offers an MCP server's tools as the namespace `mcp__<server>`."""
        return ToolCall(call.tool, call.args, call.id, namespace=f"mcp__{call.server}")

    # -- rendering --------------------------------------------------------------------------
    def output_items(self, turn: Reply, req: RecordedRequest) -> list[dict[str, Any]]:
        texts = [b.text for b in turn.blocks if isinstance(b, Text)]
        items: list[dict[str, Any]] = []
        if texts:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{req.turn}_{len(self.requests)}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": "\n".join(texts), "annotations": []}
                    ],
                }
            )
        for i, b in enumerate(turn.blocks):
            if isinstance(b, ToolCall):
                call_id = self.tool_call_id(req.turn, i, b)
                item = {
                    "type": "function_call",
                    "id": f"fc_{call_id}",
                    "status": "completed",
                    "call_id": call_id,
                    "name": b.name,
                    "arguments": json.dumps(b.args),
                }
                if b.namespace:
                    item["namespace"] = b.namespace
                items.append(item)
        return items


def _response(
    rid: str, model: str, status: str, output: list[dict[str, Any]], turn: Reply | None
) -> dict[str, Any]:
    usage = None
    if turn is not None:
        usage = {
            "input_tokens": turn.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": turn.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": turn.input_tokens + turn.output_tokens,
        }
    return {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "usage": usage,
    }


def input_texts(req: RecordedRequest, role: str = "user") -> list[str]:
    """The `input_text` parts of the request's messages of `role`, in order."""
    body = req.body if isinstance(req.body, dict) else {}
    out: list[str] = []
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == role:
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "input_text":
                    out.append(str(part.get("text", "")))
    return out


def function_outputs(req: RecordedRequest) -> dict[str, str]:
    """`call_id` → output text of the `function_call_output` items the request carries."""
    body = req.body if isinstance(req.body, dict) else {}
    out: dict[str, str] = {}
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            output = item.get("output")
            out[str(item.get("call_id"))] = (
                output if isinstance(output, str) else json.dumps(output)
            )
    return out
