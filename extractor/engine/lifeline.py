"""Worker processes live no longer than the run that forked them, and hold nothing of it.

A run can end without any cleanup code running (SIGKILL from the OOM killer, ``timeout``'s SIGTERM,
a CI cancel's SIGHUP). Its workers must then go too: left behind they keep the run's stdout and
stderr open (so ``extract | tee`` never ends) and, under ``nightly``, a copy of the folder's lock.
Two independent means, since either alone has a gap:

* Linux's parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``): the kernel kills the worker
  the moment its parent dies, even while the worker is busy in C code holding the GIL.
* A lifeline pipe whose write end only the parent holds: a thread in each worker waits on the read
  end and ends the worker when it sees end-of-file, on any POSIX system.

A descriptor the workers must not share (the nightly lock: ``flock`` is held as long as any copy of
its descriptor is open) is registered with :func:`keep_from_workers` and closed in every forked
child; ``O_CLOEXEC`` alone does not help, because a forked worker never calls ``exec``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading

__all__ = ["Lifeline", "keep_from_workers", "parent_death_signal", "release_from_workers"]

_PR_SET_PDEATHSIG = 1
_kept: set[int] = set()


def keep_from_workers(fd: int) -> None:
    """Close ``fd`` in every process forked from now on (until :func:`release_from_workers`)."""
    _kept.add(fd)


def release_from_workers(fd: int) -> None:
    _kept.discard(fd)


def _close_kept_in_child() -> None:
    for fd in list(_kept):
        with contextlib.suppress(OSError):
            os.close(fd)
    _kept.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_kept_in_child)


def parent_death_signal() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


class Lifeline:
    """Made in the parent before it forks workers; :meth:`hold` is called in each worker."""

    def __init__(self) -> None:
        self.parent = os.getpid()
        self._read, self._write = os.pipe()
        # The workers' copies of the write end would keep the pipe open after the parent died.
        keep_from_workers(self._write)

    def hold(self) -> None:
        """In a worker: die with the parent, whichever way it ends."""
        parent_death_signal()
        # The parent may have died before the signal was armed: then nobody would send it.
        if os.getppid() != self.parent:
            os._exit(1)
        read = self._read

        def watch() -> None:
            while True:
                try:
                    if not os.read(read, 1):
                        break
                except InterruptedError:
                    continue
                except OSError:
                    break
            os._exit(1)

        threading.Thread(target=watch, name="lifeline", daemon=True).start()

    def close(self) -> None:
        """In the parent, once the workers are gone."""
        release_from_workers(self._write)
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)
