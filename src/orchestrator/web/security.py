"""Who may use the page: a token on any address but loopback, the Host a loopback page answers
to (so a DNS-rebound site cannot reach it), and no cross-site POST (an answer moves a run)."""

from __future__ import annotations

import ipaddress
import json
import secrets
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "orchestrator_token"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
HEADERS = [
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
    ),
]
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(host: str) -> bool:
    """127.0.0.1, ::1 and `localhost`: only this machine can connect."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(host_header: str) -> str:
    """`127.0.0.1:8765` → `127.0.0.1`, `[::1]:8765` → `::1`."""
    host = host_header.lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def origin_host(origin: str) -> str | None:
    """`http://127.0.0.1:8765` → `127.0.0.1:8765`; None for `null` or garbage."""
    if "://" not in origin:
        return None
    return origin.split("://", 1)[1].split("/", 1)[0].lower() or None


class Guard:
    """ASGI middleware in front of everything the server serves (the page, the API, mounts)."""

    def __init__(self, app: ASGIApp, *, token: str | None, loopback: bool) -> None:
        self.app, self.token, self.loopback = app, token, loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if not self.loopback and self.token is None:  # `serve` always makes one; fail closed
            await _refuse(send, 403, "off loopback this server needs a token; none is set")
            return
        if self.loopback and self.token is None and host_name(host) not in LOOPBACK_NAMES:
            await _refuse(send, 421, f"this page answers to 127.0.0.1 or localhost, not {host!r}")
            return
        method = scope.get("method", "GET")
        if method not in SAFE_METHODS and _cross_site(headers):
            await _refuse(send, 403, "cross-site request refused; answer from the page itself")
            return
        if self.token is not None:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            given = query.get("token")
            if given is not None and method == "GET" and secrets.compare_digest(given, self.token):
                await _cookie_redirect(send, scope, query, self.token)
                return
            if not self._authorised(headers):
                await _refuse(
                    send,
                    401,
                    "this page needs its token: open the link `orchestrator serve` printed "
                    "(…/?token=…), or send `Authorization: Bearer TOKEN`",
                )
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _authorised(self, headers: dict[str, str]) -> bool:
        assert self.token is not None
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and secrets.compare_digest(
            auth[7:].strip(), self.token
        ):
            return True
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is no token
            return False
        morsel = cookie.get(COOKIE)
        return morsel is not None and secrets.compare_digest(morsel.value, self.token)


def _cross_site(headers: dict[str, str]) -> bool:
    """A browser says where a request comes from (`Origin`, `Sec-Fetch-Site`); a request from
    another site is refused. Tools (curl, a notification's button) send neither."""
    if headers.get("sec-fetch-site") == "cross-site":
        return True
    origin = headers.get("origin")
    if origin is None:
        return False
    return origin_host(origin) != headers.get("host", "").lower()


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _cookie_redirect(send: Send, scope: Scope, query: dict[str, Any], token: str) -> None:
    """`?token=` once (the printed link, a notification's link): a cookie, then the same page
    without the token in its address (so it stays out of history and screenshots)."""
    rest = urlencode({k: v for k, v in query.items() if k != "token"})
    location = quote(scope.get("root_path", "") + scope["path"]) + (f"?{rest}" if rest else "")
    cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax"
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", location.encode("latin-1")),
                (b"set-cookie", cookie.encode("latin-1")),
                (b"content-length", b"0"),
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})
