"""One computation in a forked child while this process does another.

The run's two whole-target steps, the reach of every site and the callers' handling of every
escaping raise, read the same per-file outcomes and nothing of each other, and each takes seconds
once the workers are done; on a second core they overlap. The child only computes and writes its
result as bytes to a pipe: it holds no lock of the run (descriptors registered with
:func:`~extractor.engine.lifeline.keep_from_workers` are closed in it at fork), dies with its
parent (parent-death signal), and ends with ``os._exit`` so that nothing of the parent's
(buffered output, ``atexit`` handlers) runs twice. Whatever goes wrong there, the caller gets
None and computes the result itself, so the output never depends on the child.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from extractor.engine.lifeline import parent_death_signal

__all__ = ["in_child"]


def in_child(compute: Callable[[], bytes]) -> Callable[[], bytes | None]:
    """Start ``compute()`` in a forked child; the returned call waits for it and gives its bytes
    (None when it could not run or failed). Call it exactly once."""
    if not hasattr(os, "fork"):
        return lambda: None
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return lambda: None
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

    def join() -> bytes | None:
        try:
            with os.fdopen(read, "rb") as pipe:
                data = pipe.read()
        finally:
            _, status = os.waitpid(pid, 0)
        return data if os.waitstatus_to_exitcode(status) == 0 else None

    return join
