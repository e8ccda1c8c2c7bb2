"""Shared pieces of the hostile-input tests: hostile text for regexes, a bounded full match, the
CLI as a subprocess, and the example counts of the property tests.

Property tests run a handful of examples by default (CI); ``SGLANG_ERRORS_FUZZ=1`` (or the
project-wide ``HYPOTHESIS_PROFILE=long``) runs the long profile, as LibCST gates its hypothesmith
fuzzing behind an environment variable.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Protocol

from hypothesis import HealthCheck, settings

from extractor.datasets.match import analyse_pattern
from extractor.records import message_pattern

ROOT = Path(__file__).resolve().parent.parent
FUZZ = os.environ.get("SGLANG_ERRORS_FUZZ") == "1" or os.environ.get("HYPOTHESIS_PROFILE") == "long"

HOSTILE_LENGTH = 30_000
# A full match that runs this long has gone quadratic or worse: linear work on 30 kB takes about a
# millisecond. The bound only turns a hang into a failure; it is not a speed target.
MATCH_BUDGET_SECONDS = 1.0


def fuzz_settings(default: int, long: int) -> settings:
    """``default`` examples in CI, ``long`` with ``SGLANG_ERRORS_FUZZ=1``; never a deadline."""
    return settings(
        max_examples=long if FUZZ else default,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


# --------------------------------------------------------------------------- hostile regex input


def _run_of(piece: str, length: int = HOSTILE_LENGTH) -> str:
    return (piece * (length // max(len(piece), 1) + 1))[:length]


GENERIC_PIECES = ("a", " ", "{", "}", "{}", "1,", "1, ", ", ", "\n", "x ", ": ", "é", "'", "()", "\\", ".")


def generic_hostile() -> list[str]:
    """30,000-character strings of the shapes the issue names: runs of one character, of spaces,
    of braces, of ``1,``, and mixes of them (with a character at the end that breaks a match)."""
    half = HOSTILE_LENGTH // 2
    out = [_run_of(p) for p in GENERIC_PIECES]
    out += [
        _run_of("a", HOSTILE_LENGTH - 1) + "!",
        _run_of(" ", half) + _run_of("a", half),
        _run_of("{", half) + _run_of("}", half),
        _run_of("1,", HOSTILE_LENGTH - 1) + "x",
        _run_of("1, {} ", half) + _run_of(" ", half) + "\x00",
    ]
    return out


def pattern_hostile(pattern: str) -> list[str]:
    """Strings built from the pattern's own literal runs, the worst case for backtracking: each run
    repeated, after the pattern's first run, in pairs and in reverse order (literals present but
    never in the order a match needs)."""
    runs = [r for r in analyse_pattern(pattern, fast=False).runs if r][:6]
    if not runs:
        return []
    head = runs[0]
    half = HOSTILE_LENGTH // 2
    out: list[str] = []
    for run in runs:
        body = _run_of(run)
        out += [body, head + body, head + body + "\x00"]
    for a in runs[:4]:
        for b in runs[:4]:
            if a != b:
                out.append(head + _run_of(a, half) + _run_of(b, half))
    if len(runs) >= 2:
        share = HOSTILE_LENGTH // len(runs)
        out.append(head + "".join(_run_of(r, share) for r in reversed(runs)))
    return out


class _Overrun(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Overrun


class FullMatcher(Protocol):
    def fullmatch(self, text: str, /) -> object: ...


def bounded_fullmatch(rx: FullMatcher, text: str, seconds: float = MATCH_BUDGET_SECONDS) -> bool | None:
    """``rx.fullmatch(text)`` as a bool, or ``None`` if it ran longer than ``seconds``.

    ``rx`` is a compiled ``re`` pattern or the project's linear matcher; both let a signal in
    while they run, so a timer interrupts a runaway match (the test process must be the main
    thread, as pytest runs it).
    """
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return bool(rx.fullmatch(text))
    except _Overrun:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def overruns(pattern: str, extra: list[str] | None = None) -> Iterator[tuple[str, float]]:
    """``(hostile text, seconds)`` for every hostile text on which the project's matcher overruns
    the budget with ``pattern`` (the matcher ``match`` and ``validate`` use)."""
    rx = message_pattern.matcher_for(pattern)
    for text in [*generic_hostile(), *pattern_hostile(pattern), *(extra or [])]:
        start = time.perf_counter()
        if bounded_fullmatch(rx, text) is None:
            yield text, time.perf_counter() - start


# --------------------------------------------------------------------------- the CLI


def assert_clean_failure(proc: subprocess.CompletedProcess[str], *expected: str) -> None:
    """A non-zero exit, no Python traceback, and every ``expected`` text in stderr."""
    assert proc.returncode != 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    for text in expected:
        assert text in proc.stderr, f"{text!r} not in stderr:\n{proc.stderr}"
