"""Where the store and a run's files live on disk, and how they are written (complete or not at all).

One home store by default, outside every workdir (an agent's `git clean -fdx` or `rm -rf
.orchestrator` must never reach it): `$ORCHESTRATOR_HOME/state.db`, else the platform's user data
directory. A run's files go beside a SQLite store (`<dir>/runs/<run>/`), and to the home's `runs/`
for any other database; each run records that folder (`state_dir`), so old runs keep finding theirs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

LEGACY_STORE = Path(".orchestrator") / "state.db"
"""Where older versions kept the store: in the current directory, usually the agent's workdir."""


def home_dir(env: dict[str, str] | None = None) -> Path:
    """`ORCHESTRATOR_HOME`, else the user data directory for "orchestrator" (platformdirs)."""
    value = (os.environ if env is None else env).get("ORCHESTRATOR_HOME")
    if value:
        return Path(value).expanduser().resolve()
    import platformdirs

    return Path(platformdirs.user_data_dir("orchestrator", appauthor=False)).resolve()


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path.resolve().as_posix()}"


def home_url(env: dict[str, str] | None = None) -> str:
    return sqlite_url(home_dir(env) / "state.db")


def legacy_store(base: Path | None = None) -> Path | None:
    """An older `./.orchestrator/state.db` in BASE (default: the current directory), if any."""
    path = (base or Path.cwd()) / LEGACY_STORE
    return path.resolve() if path.is_file() else None


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (`sqlite:///rel`, `sqlite:////abs`); None for memory or others."""
    if not url.startswith("sqlite") or "///" not in url:
        return None
    path = url.split("///", 1)[1].split("?", 1)[0]
    return Path(path).resolve() if path and path != ":memory:" else None


def state_dir_for(url: str) -> Path:
    """Where a new run's files go: beside a SQLite store file, else in the home directory."""
    db_file = sqlite_file(url)
    return db_file.parent if db_file is not None else home_dir()


def run_folder(settings_json: dict[str, Any], run_id: str) -> Path:
    """The run's own folder, from the `state_dir` it recorded when it started."""
    return Path(settings_json.get("state_dir") or home_dir()) / "runs" / run_id


_writer: ThreadPoolExecutor | None = None


def beside(write: Callable[..., None], *args: Any, **kwargs: Any) -> Future[None]:
    """Run a file write on the one writer thread, in order, while the caller waits on something
    else (a durable commit); `.result()` before anything needs the file. Creating a file or a
    folder is a metadata write: alone ~40 µs, but ~1 ms while other processes' fsyncs hold the
    file system's journal, as long as the commit it can overlap."""
    global _writer
    if _writer is None:
        _writer = ThreadPoolExecutor(1, thread_name_prefix="orchestrator-files")
    return _writer.submit(write, *args, **kwargs)


def write_text(path: Path, text: str) -> None:
    """A new file, its folder created when missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
