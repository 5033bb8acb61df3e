"""Running an agent CLI safely: an argument list (never a shell), its own process group, output
streamed to files so memory stays bounded however much it prints, killed as a group on timeout.

Nothing polls: the process's exit is a file descriptor (a pidfd on Linux, a waiter thread's pipe
elsewhere) waited on together with its stdout pipe, so a run ends the moment the process does and
every byte it wrote reaches the file and the line callback, the last line too.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

TAIL_BYTES = 64 * 1024
CHUNK = 1 << 16
EOF_GRACE = 2.0
"""After the process exits, how long a descendant still holding its stdout open may keep it."""


@dataclass
class ProcessResult:
    exit_code: int
    stdout_path: Path
    stderr_path: Path
    duration_s: float
    timed_out: bool = False

    def stdout_tail(self, limit: int = TAIL_BYTES) -> str:
        return tail(self.stdout_path, limit)

    def stderr_tail(self, limit: int = TAIL_BYTES) -> str:
        return tail(self.stderr_path, limit)


def tail(path: Path, limit: int = TAIL_BYTES) -> str:
    """The last `limit` bytes of a file, decoded leniently."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            return fh.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def kill_group(proc: subprocess.Popen[bytes], grace: float = 3.0) -> None:
    """SIGTERM the whole process group, then SIGKILL whatever is left after `grace` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    stdout_path: Path,
    stderr_path: Path,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    stdin_data: bytes | None = None,
    on_line: Callable[[str], None] | None = None,
) -> ProcessResult:
    """Run `argv` to completion; `on_line` sees each stdout line as it is written (a last line
    without a newline too). Without `on_line` stdout goes straight to its file."""
    stdout_path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    with stdout_path.open("wb", buffering=0) as out, stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdout=subprocess.PIPE if on_line is not None else out,
            stderr=err,
            stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        try:
            timed_out = _supervise(proc, out, deadline, stdin_data, _Lines(on_line))
        except BaseException:
            kill_group(proc)
            raise
        finally:
            for pipe in (proc.stdout, proc.stdin):
                if pipe is not None and not pipe.closed:
                    pipe.close()
    proc.wait()
    return ProcessResult(
        proc.returncode, stdout_path, stderr_path, time.monotonic() - start, timed_out
    )


class _Lines:
    """Bytes in, complete lines out; one enormous line keeps only its last TAIL_BYTES."""

    def __init__(self, on_line: Callable[[str], None] | None) -> None:
        self.on_line = on_line
        self.partial = b""

    def feed(self, data: bytes) -> None:
        assert self.on_line is not None
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        if len(self.partial) > TAIL_BYTES:
            self.partial = self.partial[-TAIL_BYTES:]
        for raw in lines:
            self.on_line(raw.decode("utf-8", errors="replace"))

    def close(self) -> None:
        if self.on_line is not None and self.partial:
            self.on_line(self.partial.decode("utf-8", errors="replace"))
        self.partial = b""


def _supervise(
    proc: subprocess.Popen[bytes],
    out: BinaryIO,
    deadline: float | None,
    stdin_data: bytes | None,
    lines: _Lines,
) -> bool:
    """Feed stdin, copy stdout to `out` line by line, until exit and EOF; True on timeout."""
    sel = selectors.DefaultSelector()
    with sel, _exit_fd(proc) as exit_fd:
        sel.register(exit_fd, selectors.EVENT_READ, "exit")
        if proc.stdout is not None:
            sel.register(proc.stdout, selectors.EVENT_READ, "out")
        pending = memoryview(stdin_data or b"")
        if proc.stdin is not None:
            os.set_blocking(proc.stdin.fileno(), False)
            sel.register(proc.stdin, selectors.EVENT_WRITE, "in")
        exited = timed_out = False
        while "out" in _purposes(sel) or not exited:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                if exited:
                    break  # a descendant holds stdout open past the grace: stop reading
                timed_out = True
                kill_group(proc)
                exited, deadline = True, time.monotonic() + EOF_GRACE
                _drop(sel, proc.stdin)
                continue
            for key, _ in sel.select(left):
                if key.data == "exit":
                    exited = True
                    sel.unregister(key.fileobj)
                    grace = time.monotonic() + EOF_GRACE
                    deadline = grace if deadline is None else min(deadline, grace)
                    _drop(sel, proc.stdin)
                elif key.data == "out":
                    data = os.read(key.fd, CHUNK)
                    if not data:
                        sel.unregister(key.fileobj)
                        continue
                    out.write(data)
                    lines.feed(data)
                else:
                    try:
                        pending = pending[os.write(key.fd, pending[:CHUNK]) :]
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        _drop(sel, proc.stdin)
        if exited and proc.stdout is not None and "out" in _purposes(sel):
            _drain(proc.stdout.fileno(), out, lines)  # whatever is buffered right now
        lines.close()
        return timed_out


def _purposes(sel: selectors.BaseSelector) -> set[str]:
    return {key.data for key in sel.get_map().values()}


def _drop(sel: selectors.BaseSelector, pipe: IO[bytes] | None) -> None:
    """Stop feeding stdin: the process is gone or has all it gets."""
    if pipe is None or pipe.closed:
        return
    with contextlib.suppress(KeyError, ValueError):
        sel.unregister(pipe)
    with contextlib.suppress(OSError):
        pipe.close()


def _drain(fd: int, out: BinaryIO, lines: _Lines) -> None:
    os.set_blocking(fd, False)
    while True:
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        if not data:
            return
        out.write(data)
        lines.feed(data)


@contextlib.contextmanager
def _exit_fd(proc: subprocess.Popen[bytes]) -> Iterator[int]:
    """A descriptor that becomes readable when the process exits (it is not reaped here)."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        fd = -1
    if fd >= 0:
        try:
            yield fd
        finally:
            os.close(fd)
        return
    read_end, write_end = os.pipe()

    def wait() -> None:
        proc.wait()
        os.close(write_end)

    threading.Thread(target=wait, name=f"wait-{proc.pid}", daemon=True).start()
    try:
        yield read_end
    finally:
        os.close(read_end)
