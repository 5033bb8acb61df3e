"""Small LLM backends for second opinions (the output interpreter, the retry brain).

Both backends turn one prompt into one text answer and wrap every failure in `LLMError`, so
callers can fall back to their rules with a single `except`. Nothing here retries or streams:
a second opinion that is slow or broken is simply skipped.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import httpx

from orchestrator.models import ConfigError

DEFAULT_CLAUDE_MODEL = "claude-haiku-4-5"


class LLMError(Exception):
    """The backend could not produce a usable answer (unreachable, timeout, error, bad JSON)."""


@runtime_checkable
class LLMBackend(Protocol):
    """The one LLM interface (interpreter, brain, consultant): one prompt in, one text out;
    every failure raised (an `LLMError` from the backends here), so callers fall back to rules."""

    @property
    def name(self) -> str: ...

    def complete(self, prompt: str, *, timeout: float = 60) -> str: ...


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)


def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in a model answer, tolerating fences and prose around it.

    >>> extract_json('Sure! ```json\\n{"a": 1}\\n``` hope that helps')
    {'a': 1}
    """
    if not text or not text.strip():
        raise LLMError("empty answer")
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    decoder = json.JSONDecoder()
    for cand in candidates:
        try:
            value = json.loads(cand)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    # scan for the first '{' that starts a decodable object (prose before or after it)
    for m in re.finditer(r"\{", text):
        try:
            value, _end = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise LLMError(f"no JSON object in answer: {text[:120]!r}")


class OpenAIBackend:
    """Any OpenAI-compatible chat completions endpoint (a local model server, a proxy, ...).

    `base_url` is the API root that holds `/chat/completions`, e.g. `http://127.0.0.1:8080/v1`.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        temperature: float = 0.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise LLMError("openai backend needs a base URL (ORCHESTRATOR_LLM_BASE_URL)")
        if not model:
            raise LLMError("openai backend needs a model name (ORCHESTRATOR_LLM_MODEL)")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = api_key
        self.temperature = temperature
        self._transport = transport

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r})"

    def complete(self, prompt: str, *, timeout: float = 60) -> str:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self.temperature,
            "stream": False,
        }
        url = f"{self.base_url}/chat/completions"
        try:
            with httpx.Client(timeout=timeout, transport=self._transport) as client:
                resp = client.post(url, json=body, headers=headers)
        except httpx.TimeoutException as e:
            raise LLMError(f"openai backend timed out after {timeout:g}s") from e
        except httpx.HTTPError as e:
            raise LLMError(f"openai backend unreachable: {type(e).__name__}: {e}") from e
        if resp.status_code != 200:
            raise LLMError(f"openai backend answered HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            data = resp.json()
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise LLMError(f"openai backend sent an unexpected body: {resp.text[:200]}") from e
        if not isinstance(content, str) or not content.strip():
            raise LLMError("openai backend returned no text")
        return content


class ClaudeBackend:
    """A small Claude model through the bundled Claude Code: no tools, one turn, no session.

    `env` is merged over the process environment for the Claude Code subprocess (tests point
    `ANTHROPIC_BASE_URL` at a scripted server this way).
    """

    name = "claude"

    def __init__(
        self,
        model: str = DEFAULT_CLAUDE_MODEL,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        cli_path: str | Path | None = None,
        system_prompt: str = "You answer with one JSON object and nothing else.",
    ) -> None:
        self.model = model
        self.env = dict(env or {})
        self.cwd = cwd
        self.cli_path = cli_path
        self.system_prompt = system_prompt

    def __repr__(self) -> str:
        return f"ClaudeBackend(model={self.model!r})"

    def _options(self) -> Any:
        from claude_agent_sdk import ClaudeAgentOptions

        return ClaudeAgentOptions(
            model=self.model,
            tools=[],
            allowed_tools=[],
            max_turns=1,
            system_prompt=self.system_prompt,
            setting_sources=[],
            env=self.env,
            cwd=self.cwd,
            cli_path=self.cli_path,
            extra_args={"no-session-persistence": None},
        )

    async def _ask(self, prompt: str, timeout: float) -> str:
        import anyio
        from claude_agent_sdk import AssistantMessage, ResultMessage, TextBlock, query

        texts: list[str] = []
        result: Any = None
        with anyio.fail_after(timeout):
            async for message in query(prompt=prompt, options=self._options()):
                if isinstance(message, AssistantMessage):
                    texts.extend(b.text for b in message.content if isinstance(b, TextBlock))
                elif isinstance(message, ResultMessage):
                    result = message
        if result is not None and result.is_error:
            raise LLMError(f"claude backend error: {result.subtype} {result.result or ''}".strip())
        answer = (result.result if result is not None and result.result else "") or "".join(texts)
        if not answer.strip():
            raise LLMError("claude backend returned no text")
        return answer

    def complete(self, prompt: str, *, timeout: float = 60) -> str:
        """Runs the SDK's event loop in a worker thread so callers may already be inside one."""
        box: dict[str, Any] = {}

        def work() -> None:
            import anyio

            try:
                box["answer"] = anyio.run(self._ask, prompt, timeout)
            except BaseException as e:
                box["error"] = e

        worker = threading.Thread(target=work, name="claude-backend", daemon=True)
        worker.start()
        worker.join(timeout + 30)
        if worker.is_alive():
            raise LLMError(f"claude backend did not stop within {timeout + 30:g}s")
        err = box.get("error")
        if isinstance(err, LLMError):
            raise err
        if isinstance(err, TimeoutError):
            raise LLMError(f"claude backend timed out after {timeout:g}s") from err
        if err is not None:
            raise LLMError(f"claude backend failed: {type(err).__name__}: {err}") from err
        return str(box["answer"])


def get_backend(name: str, **opts: Any) -> LLMBackend:
    """A backend by name: `claude` or `openai` (settings from opts, then the environment).

    >>> get_backend("openai", base_url="http://127.0.0.1:8080/v1", model="qwen2.5").name
    'openai'
    """
    key = name.strip().lower()
    if key == "claude":
        model = opts.pop("model", None) or os.environ.get("ORCHESTRATOR_LLM_MODEL")
        return ClaudeBackend(model or DEFAULT_CLAUDE_MODEL, **opts)
    if key == "openai":
        base_url = opts.pop("base_url", None) or os.environ.get("ORCHESTRATOR_LLM_BASE_URL", "")
        model = opts.pop("model", None) or os.environ.get("ORCHESTRATOR_LLM_MODEL", "")
        api_key = (
            opts.pop("api_key", None)
            or os.environ.get("ORCHESTRATOR_LLM_API_KEY")
            or os.environ.get("OPENAI_API_KEY")
        )
        if not base_url or not model:
            raise ConfigError(
                "the openai LLM backend needs ORCHESTRATOR_LLM_BASE_URL (e.g. "
                "http://127.0.0.1:8080/v1) and ORCHESTRATOR_LLM_MODEL"
            )
        return OpenAIBackend(base_url, model, api_key, **opts)
    raise ConfigError(f"unknown LLM backend {name!r}: use 'claude' or 'openai'")
