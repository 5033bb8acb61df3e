"""An environment that keeps a real agent CLI off the network while it talks to a local server.

Proxies pointing at a closed local port make every request outside 127.0.0.1 fail at once
(no DNS lookup, no hang), while `NO_PROXY` lets the scripted server through. Codex (reqwest),
Aider (httpx/requests) honour these; Gemini CLI's telemetry is switched off in its settings.
"""

from __future__ import annotations

from pathlib import Path

CLOSED_PROXY = "http://127.0.0.1:9"


def offline_env(home: Path) -> dict[str, str]:
    """HOME and TMPDIR under `home` (created; CLIs leave crash reports and sockets in TMPDIR),
    and proxies that make non-local requests fail fast."""
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "HTTP_PROXY": CLOSED_PROXY,
        "HTTPS_PROXY": CLOSED_PROXY,
        "ALL_PROXY": CLOSED_PROXY,
        "http_proxy": CLOSED_PROXY,
        "https_proxy": CLOSED_PROXY,
        "all_proxy": CLOSED_PROXY,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
