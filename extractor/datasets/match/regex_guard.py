"""Wall-clock bounds on candidate regex runs: each run, and all of one query's runs together."""

from __future__ import annotations

import re
import signal
import threading
import time
from typing import Any

REGEX_SECONDS = 0.02
"""Longest one candidate regex may run on one message before it counts as no match."""

QUERY_REGEX_SECONDS = 0.5
"""Longest all the regex runs of one query may take together: a dataset that is not ours can hold
thousands of catastrophic patterns, each of which would use its whole per-run bound. Past it, every
further candidate counts as no match."""


class RegexGuard:
    """Stops a regex that backtracks too long, where the platform allows it.

    ``re`` checks for signals while it matches, so a short ``SIGALRM`` interval ends a runaway
    match; a timed-out match counts as no match. It is armed only in the main thread and only
    when no other interval timer is running (the caller's own alarm is never disturbed);
    elsewhere the message-length cap alone bounds the work.
    """

    def __init__(self, seconds: float, query_seconds: float = QUERY_REGEX_SECONDS) -> None:
        self.seconds = seconds
        self.query_seconds = query_seconds
        self.armed = False
        self.timeouts = 0
        self.exhausted = False
        self._old_handler: Any = None
        self._spent = 0.0

    def __enter__(self) -> RegexGuard:
        self._spent = 0.0  # one budget per query
        self.exhausted = False
        self.armed = (
            hasattr(signal, "setitimer")
            and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        )
        if self.armed:
            self._old_handler = signal.signal(signal.SIGALRM, _raise_timeout)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._old_handler)
            self.armed = False

    def fullmatch(self, rx: re.Pattern[str], text: str) -> bool:
        left = self.query_seconds - self._spent
        if left <= 0:
            self.exhausted = True
            return False
        started = time.perf_counter()
        try:
            if not self.armed:
                return rx.fullmatch(text) is not None
            # The alarm may fire at any bytecode, disarming included: the outer handler catches it there.
            try:
                signal.setitimer(signal.ITIMER_REAL, max(min(self.seconds, left), 1e-4))
                try:
                    return rx.fullmatch(text) is not None
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except _RegexTimeout:
                self.timeouts += 1
                return False
        finally:
            self._spent += time.perf_counter() - started


class _RegexTimeout(Exception):
    pass


def _raise_timeout(_signum: int, _frame: object) -> None:
    raise _RegexTimeout()
