"""Running the page: listen (127.0.0.1 by default), decide the token, print the address, serve
with uvicorn until Ctrl-C."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable, Sequence

from starlette.types import ASGIApp

from orchestrator.models import UserError
from orchestrator.store import Store
from orchestrator.web.app import Lifespan, create_app
from orchestrator.web.security import is_loopback

TOKEN_ENV = "ORCHESTRATOR_SERVE_TOKEN"  # noqa: S105 (the variable's name, not a secret)


def listen(host: str, port: int) -> socket.socket:
    """The socket, bound before anything is printed: a busy port is one line, exit 2."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UserError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another --port or --host"
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(
    store: Store,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    resume: bool = True,
    token: str | None = None,
    extra_mounts: Sequence[tuple[str, ASGIApp]] = (),
    lifespans: Sequence[Lifespan] = (),
    say: Callable[[str], None] = print,
) -> None:
    """Serve until interrupted. On loopback no token is needed (unless one is set); any other
    address needs one: `ORCHESTRATOR_SERVE_TOKEN`, else a new one, printed in the link."""
    import uvicorn

    loopback = is_loopback(host)
    token = token or os.environ.get(TOKEN_ENV) or None
    generated = token is None and not loopback
    if generated:
        token = secrets.token_urlsafe(24)
    sock = listen(host, port)
    app = create_app(
        store,
        token=token,
        loopback=loopback,
        resume=resume,
        extra_mounts=extra_mounts,
        lifespans=lifespans,
    )
    shown = host if ":" not in host.strip("[]") else f"[{host.strip('[]')}]"
    url = f"http://{shown}:{sock.getsockname()[1]}/"
    say(f"orchestrator serve: {url}{f'?token={token}' if generated else ''}")
    if token and not generated:
        say(f"  the token is ${TOKEN_ENV}'s (open {url}?token=… once, or send Authorization)")
    if not resume:
        say(
            "  --no-resume: an answer to a paused run is recorded; `orchestrator resume` acts on it"
        )
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
