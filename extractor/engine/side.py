"""One computation in a forked child while this process does another.

The run's two whole-target steps, the reach of every site and the callers' handling of every
escaping raise, read the same per-file outcomes and nothing of each other, and each takes seconds
once the workers are done; on a second core they overlap. The child only computes and writes its
result as bytes to a pipe: it holds no lock of the run (descriptors registered with
:func:`~extractor.engine.lifeline.keep_from_workers` are closed in it at fork), dies with its
parent (parent-death signal), and ends with ``os._exit`` so that nothing of the parent's
(buffered output, ``atexit`` handlers) runs twice. Whatever goes wrong there, the caller gets
None and computes the result itself, so the output never depends on the child. A caller that
gives up (an error, Ctrl-C) cancels it: a child left with nobody to read its pipe would wait on
it for as long as the parent process lives.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable

from extractor.engine.lifeline import parent_death_signal

__all__ = ["Child", "in_child"]


class Child:
    """A forked computation: :meth:`result` waits for its bytes, :meth:`cancel` ends it unread."""

    def __init__(self, pid: int | None, read: int | None) -> None:
        self._pid = pid
        self._read = read

    def result(self) -> bytes | None:
        """The child's bytes (None when it could not run or failed)."""
        if self._pid is None or self._read is None:
            return None
        pid, read = self._pid, self._read
        self._pid = self._read = None
        try:
            with os.fdopen(read, "rb") as pipe:
                data = pipe.read()
        finally:
            _, status = os.waitpid(pid, 0)
        return data if os.waitstatus_to_exitcode(status) == 0 else None

    def cancel(self) -> None:
        """End the child without reading it (nothing when it is already read)."""
        if self._pid is None or self._read is None:
            return
        pid, read = self._pid, self._read
        self._pid = self._read = None
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        os.close(read)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def in_child(compute: Callable[[], bytes]) -> Child:
    """Start ``compute()`` in a forked child; read it, or cancel it, exactly once."""
    if not hasattr(os, "fork"):
        return Child(None, None)
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return Child(None, None)
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        code = 1
        try:
            os.close(read)
            parent_death_signal()
            view = memoryview(compute())
            while view:
                view = view[os.write(write, view) :]
            code = 0
        except BaseException:  # a failure only means that the parent computes it itself
            pass
        finally:
            os._exit(code)
    os.close(write)
    return Child(pid, read)
