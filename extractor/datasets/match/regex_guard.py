"""A wall-clock bound on one candidate regex run, where the platform allows it."""

from __future__ import annotations

import re
import signal
import threading
from typing import Any

REGEX_SECONDS = 0.02
"""Longest one candidate regex may run on one message before it counts as no match."""


class RegexGuard:
    """Stops a regex that backtracks too long, where the platform allows it.

    ``re`` checks for signals while it matches, so a short ``SIGALRM`` interval ends a runaway
    match; a timed-out match counts as no match. It is armed only in the main thread and only
    when no other interval timer is running (the caller's own alarm is never disturbed);
    elsewhere the message-length cap alone bounds the work.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.armed = False
        self.timeouts = 0
        self._old_handler: Any = None

    def __enter__(self) -> RegexGuard:
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
        if not self.armed:
            return rx.fullmatch(text) is not None
        # The alarm may fire at any bytecode, disarming included: the outer handler catches it there.
        try:
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            try:
                return rx.fullmatch(text) is not None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _RegexTimeout:
            self.timeouts += 1
            return False


class _RegexTimeout(Exception):
    pass


def _raise_timeout(_signum: int, _frame: object) -> None:
    raise _RegexTimeout()
