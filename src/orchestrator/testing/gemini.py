"""The Gemini API (generativelanguage v1beta), scripted: what Gemini CLI talks to in tests.

`POST /v1beta/models/{model}:streamGenerateContent?alt=sse` answers with the next script turn as
SSE `data:` chunks (no event names) of `GenerateContentResponse`: one chunk with the candidate's
parts (`text`, `functionCall {name, args}`), `finishReason: STOP` and `usageMetadata`.
`:generateContent` answers the same as one JSON object. Gemini CLI 0.61 with an explicit model
sends one streaming request per model turn; tool results come back as `functionResponse` parts
(see `function_responses`).

Auxiliary requests do not consume script turns: `:countTokens`, any other path (404), and a
`generateContent` request carrying no `tools` (the CLI's side calls — model routing with
`--model auto`, next-speaker and loop checks, summaries — never carry the agent's tool list);
they get `aux_text`.

Gemini CLI's usual tools: `write_file {file_path, content}`, `replace {file_path, old_string,
new_string}`, `run_shell_command {command}`, `read_file {file_path}`, `list_directory`, ...
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from orchestrator.testing.offline import offline_env
from orchestrator.testing.script import McpCall, RecordedRequest, Reply, Text, ToolCall, TurnLike
from orchestrator.testing.server import EventStream, Exchange, ScriptedServer

STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def is_auxiliary(req: RecordedRequest) -> bool:
    """A content request that is not an agent turn: it carries no tools."""
    return not (isinstance(req.body, dict) and req.body.get("tools"))


class GeminiServer(ScriptedServer):
    """A scripted Gemini API on 127.0.0.1.

    >>> with GeminiServer([ToolCall("write_file", {"file_path": "x", "content": "1"}),
    ...                    "Done."]) as server:
    ...     agent = GeminiAgent({"base_url": server.url, "env": server.gemini_env(home)})
    """

    def __init__(
        self,
        script: Iterable[TurnLike] = (),
        *,
        when_exhausted: TurnLike = "(script exhausted)",
        aux_text: str = "Scripted side answer",
        auxiliary: Callable[[RecordedRequest], bool] = is_auxiliary,
    ) -> None:
        super().__init__(script, when_exhausted=when_exhausted)
        self.aux_text = aux_text
        self.auxiliary = auxiliary

    def gemini_env(self, home: Path, api_key: str = "test-key") -> dict[str, str | None]:
        """Environment for Gemini CLI offline: its own home with API-key auth and no telemetry.

        The settings pick `gemini-api-key` auth explicitly: with only `GOOGLE_GEMINI_BASE_URL`
        set, the CLI infers a `gateway` auth type that headless mode rejects (exit 41).
        """
        settings_dir = home / ".gemini"
        settings_dir.mkdir(parents=True, exist_ok=True)
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        (settings_dir / "settings.json").write_text(json.dumps(settings, indent=2))
        return {
            **offline_env(home),
            "GEMINI_CLI_HOME": str(home),
            "GEMINI_API_KEY": api_key,
            "GOOGLE_API_KEY": None,  # None unsets: it would win over ours
            "GOOGLE_GENAI_USE_VERTEXAI": None,
            "GOOGLE_GENAI_USE_GCA": None,
            "GOOGLE_CLOUD_PROJECT": None,
            "NO_COLOR": "1",
        }

    # -- routing ----------------------------------------------------------------------------
    def handle(self, req: RecordedRequest, ex: Exchange) -> None:
        path = req.path.split("?", 1)[0]
        method = path.rsplit(":", 1)[-1] if ":" in path else ""
        if req.method != "POST" or not path.startswith("/v1beta/models/"):
            req.auxiliary = True
            ex.send_json(404, self.error_body(404, f"no route {req.method} {path}"))
            return
        if method == "countTokens":
            req.auxiliary = True
            ex.send_json(200, {"totalTokens": max(1, len(req.body_text) // 4)})
            return
        if method not in ("generateContent", "streamGenerateContent"):
            req.auxiliary = True
            ex.send_json(404, self.error_body(404, f"no method {method!r}"))
            return
        stream = method == "streamGenerateContent"
        model = path.removeprefix("/v1beta/models/").rsplit(":", 1)[0]
        self.serve_turn(
            req, ex, lambda r: self._reply(r, req, ex, stream, model), self.auxiliary, self.aux_text
        )

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {
            "error": {
                "code": status,
                "message": message,
                "status": STATUS_NAMES.get(status, "UNKNOWN"),
            }
        }

    def stall_prelude(self, stream: EventStream) -> None:
        opener = {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}}]}
        stream.event(None, opener)

    def mcp_tool_call(self, call: McpCall) -> ToolCall:
        """Gemini CLI names an MCP tool `mcp_<server>_<tool>`."""
        return ToolCall(f"mcp_{call.server}_{call.tool}", call.args, call.id)

    # -- rendering --------------------------------------------------------------------------
    def parts(self, turn: Reply) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for b in turn.blocks:
            if isinstance(b, Text):
                out.append({"text": b.text})
            elif isinstance(b, ToolCall):
                call: dict[str, Any] = {"name": b.name, "args": b.args}
                if b.id:
                    call["id"] = b.id
                out.append({"functionCall": call})
        return out

    def _reply(
        self, turn: Reply, req: RecordedRequest, ex: Exchange, stream: bool, model: str
    ) -> None:
        chunk = {
            "candidates": [
                {
                    "content": {"role": "model", "parts": self.parts(turn)},
                    "finishReason": turn.stop_reason or "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": turn.input_tokens,
                "candidatesTokenCount": turn.output_tokens,
                "totalTokenCount": turn.input_tokens + turn.output_tokens,
            },
            "modelVersion": model,
            "responseId": f"resp_{req.turn if req.turn is not None else 'aux'}_{len(self.requests)}",
        }
        if not stream:
            ex.send_json(200, chunk)
            return
        s = ex.open_stream()
        s.event(None, chunk)


def user_texts(req: RecordedRequest) -> list[str]:
    """The text parts of the request's `user` contents, in order."""
    body = req.body if isinstance(req.body, dict) else {}
    out: list[str] = []
    for content in body.get("contents") or []:
        if isinstance(content, dict) and content.get("role") == "user":
            for part in content.get("parts") or []:
                if isinstance(part, dict) and "text" in part:
                    out.append(str(part["text"]))
    return out


def function_responses(req: RecordedRequest) -> list[dict[str, Any]]:
    """The `functionResponse` parts of the request's last `user` content."""
    body = req.body if isinstance(req.body, dict) else {}
    for content in reversed(body.get("contents") or []):
        if isinstance(content, dict) and content.get("role") == "user":
            return [
                p["functionResponse"]
                for p in content.get("parts") or []
                if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
            ]
    return []
