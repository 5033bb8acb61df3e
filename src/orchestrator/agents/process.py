"""Running an agent CLI safely: an argument list (never a shell), its own process group, output
streamed to files so memory stays bounded however much it prints, killed as a group on timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

TAIL_BYTES = 64 * 1024


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
    poll: float = 0.2,
) -> ProcessResult:
    """Run `argv` to completion; `on_line` sees each complete stdout line as it is written."""
    stdout_path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdout=out,
            stderr=err,
            stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        if stdin_data is not None and proc.stdin is not None:
            try:
                proc.stdin.write(stdin_data)
                proc.stdin.close()
            except BrokenPipeError:
                pass
        timed_out = False
        offset, partial = 0, b""
        try:
            while True:
                code = proc.poll()
                if on_line is not None:
                    offset, partial = _feed_lines(stdout_path, offset, partial, on_line)
                if code is not None:
                    break
                if timeout is not None and time.monotonic() - start > timeout:
                    timed_out = True
                    kill_group(proc)
                    break
                time.sleep(poll)
        except BaseException:
            kill_group(proc)
            raise
        if on_line is not None:
            offset, partial = _feed_lines(stdout_path, offset, partial, on_line)
            if partial:
                on_line(partial.decode("utf-8", errors="replace"))
    code = proc.returncode if proc.returncode is not None else -9
    return ProcessResult(code, stdout_path, stderr_path, time.monotonic() - start, timed_out)


def _feed_lines(
    path: Path, offset: int, partial: bytes, on_line: Callable[[str], None], chunk: int = 1 << 20
) -> tuple[int, bytes]:
    with path.open("rb") as fh:
        fh.seek(offset)
        data = fh.read(chunk)
    if not data:
        return offset, partial
    offset += len(data)
    lines = (partial + data).split(b"\n")
    partial = lines.pop()
    if len(partial) > TAIL_BYTES:  # a single enormous line: keep memory bounded
        partial = partial[-TAIL_BYTES:]
    for raw in lines:
        on_line(raw.decode("utf-8", errors="replace"))
    return offset, partial
