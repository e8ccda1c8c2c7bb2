"""The nightly folder's lock (``DIR/.lock``, ``flock``) and the pauses tests stop a run at.

The kernel drops a ``flock`` when its holder dies, so a killed run never blocks the next one; the
file itself is never deleted, since unlinking a locked file would let two runs in.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from extractor.errors import ExtractorError

__all__ = ["LOCK_NAME", "PAUSE_AT_ENV", "PAUSE_DIR_ENV", "locked", "pause"]

LOCK_NAME = ".lock"

# Test hook: SGLANG_ERRORS_TEST_PAUSE_AT names a point (or several, comma-separated) and
# SGLANG_ERRORS_TEST_PAUSE_DIR a folder; on reaching the point the run creates
# "<dir>/<point>.reached" and waits for "<dir>/<point>.release", so a test can kill it (or start
# a rival run) at an exact moment instead of guessing with sleeps.
PAUSE_AT_ENV = "SGLANG_ERRORS_TEST_PAUSE_AT"
PAUSE_DIR_ENV = "SGLANG_ERRORS_TEST_PAUSE_DIR"
_PAUSE_LIMIT_SECONDS = 120.0


# -- the lock ---------------------------------------------------------------------------------


@contextlib.contextmanager
def locked(folder: Path, *, wait: bool, on_wait: Callable[[str], None] | None) -> Iterator[None]:
    path = folder / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ExtractorError(str(path), f"cannot open lock file ({exc.strerror or exc})") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _lock_holder(fd)
            if not wait:
                raise ExtractorError(
                    str(folder),
                    f"another nightly run{holder} is writing here (lock {path}); "
                    "try again later, or pass --wait to wait for it",
                    exit_code=3,
                ) from None
            if on_wait is not None:
                on_wait(f"waiting for the nightly run{holder} that holds {path}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        # The pid is informational (for the message above); the flock itself is the lock, and
        # the file is never deleted, since unlinking a locked file would let two runs in.
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def _lock_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (pid {text})" if text.isdigit() else ""


# -- test pauses ------------------------------------------------------------------------------


def pause(point: str) -> None:
    wanted = os.environ.get(PAUSE_AT_ENV, "")
    if not wanted or point not in wanted.split(","):
        return
    folder = Path(os.environ.get(PAUSE_DIR_ENV) or ".")
    (folder / f"{point}.reached").write_text(f"{os.getpid()}\n")
    release = folder / f"{point}.release"
    deadline = time.monotonic() + _PAUSE_LIMIT_SECONDS
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
