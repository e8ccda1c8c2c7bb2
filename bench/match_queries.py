"""Match queries rendered from a dataset's own records, and their latency and hit rates.

Benchmark-only: ``bench/bench.py`` and the tests use it; the product never does.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path

from extractor.datasets.match import Matcher, analyse_pattern, last_name
from extractor.datasets.match.ranking import MAX_REGEX_CHARS, MIN_SPECIFICITY
from extractor.records.model import ErrorRecord

_SAMPLE_VALUES = ("3", "'fp8'", "bfloat16", "None", "[1, 2]", "128", "True", "llama")
_PLACEHOLDER_RE = re.compile(r"\{[^{}]*\}")


def sample_queries(records: Sequence[ErrorRecord], n: int = 200, seed: int = 0) -> list[tuple[str, str]]:
    """Plausible runtime error texts rendered from records, each with the id it was made from.

    A record's message has its ``{...}`` placeholders filled with a sample value until its own
    ``messagePattern`` fully matches (records that never do are skipped), then it is written in
    one of the input forms: a bare message, ``Class: message``, a logger-prefixed line, a repr,
    or an sglang scheduler log with a traceback whose innermost frame is the site (always that
    form for a mostly-placeholder message, which names no site by itself).
    """
    import random

    rng = random.Random(seed)
    pool = [r for r in records if r.errorMessage.strip()]
    rng.shuffle(pool)
    out: list[tuple[str, str]] = []
    for record in pool:
        if len(out) >= n:
            break
        message = render_message(record)
        if message is None:
            continue
        cls = last_name(record.errorClass)
        installed = (
            record.filePath[record.filePath.find("sglang/") :]
            if "sglang/" in record.filePath
            else record.filePath
        )
        # A mostly-placeholder message names no site by itself: only its traceback can.
        generic = analyse_pattern(record.messagePattern).specificity < MIN_SPECIFICITY
        form = 4 if generic else len(out) % 5
        if form == 0:
            text = message
        elif form == 1:
            text = f"{cls}: {message}"
        elif form == 2:
            text = f"[2026-01-01 12:00:00 TP0] {cls}: {message}"
        elif form == 3:
            text = f"{cls}({message!r})"
        else:
            text = (
                "[2026-01-01 12:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
                '  File "/usr/local/lib/python3.11/dist-packages/sglang/srt/managers/scheduler.py", line 3000, in run\n'
                "    self.event_loop()\n"
                f'  File "/usr/local/lib/python3.11/dist-packages/{installed}", line {record.lineNumber}, in f\n'
                f"    raise {cls}(\n"
                f"{cls}: {message}\n\n"
                "[2026-01-01 12:00:01] Received sigquit from a child process. It usually means the child failed.\n"
            )
        out.append((text, record.id))
    return out


def render_message(record: ErrorRecord) -> str | None:
    try:
        rx = re.compile(record.messagePattern)
    except re.error:
        return None
    for value in _SAMPLE_VALUES:
        text = _PLACEHOLDER_RE.sub(value, record.errorMessage)  # the values hold no backslash
        if len(text) <= MAX_REGEX_CHARS and rx.fullmatch(text):
            return text
    return None


def bench_queries(
    dataset_path: Path,
    queries: Sequence[str | tuple[str, str]] | None = None,
    *,
    n: int = 200,
    seed: int = 0,
    top: int = 10,
) -> dict[str, float]:
    """Load a dataset once, run each query, and report timing and (when known) hit rates.

    ``queries`` are texts, or ``(text, expected record id)`` pairs; by default :func:`sample_queries`
    renders ``n`` of them from the dataset itself. Returns ``load_s``, ``records``, ``queries``,
    ``matched`` (queries with any match), ``hit1`` / ``hit5`` (expected record first, counting a
    record with the same pattern, and the same class when the query names one, as equivalent;
    or in the first five), and
    ``mean_ms`` / ``p50_ms`` / ``p95_ms`` / ``max_ms`` per query.
    """
    t0 = time.perf_counter()
    matcher = Matcher.from_path(dataset_path)
    load_s = time.perf_counter() - t0
    if queries is None:
        queries = sample_queries(matcher.records, n=n, seed=seed)
    by_id = {r.id: r for r in matcher.records}
    times: list[float] = []
    matched = hit1 = hit5 = 0
    for q in queries:
        text, expected = (q, None) if isinstance(q, str) else q
        t = time.perf_counter()
        found = matcher.match(text, top=top)
        times.append((time.perf_counter() - t) * 1000)
        matched += bool(found)
        want = by_id.get(expected) if expected else None
        if want is not None and found:
            first = found[0].record
            # Sites raising the same text are told apart only by what the query shows (its class).
            hit1 += first.id == want.id or (
                first.messagePattern == want.messagePattern
                and (first.errorClass == want.errorClass or last_name(want.errorClass) not in text)
            )
            hit5 += any(m.record.id == want.id for m in found[:5])
    ordered = sorted(times) or [0.0]

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * (len(ordered) - 1) + 0.5))]

    return {
        "load_s": round(load_s, 3),
        "records": float(len(matcher.records)),
        "queries": float(len(queries)),
        "matched": float(matched),
        "hit1": float(hit1),
        "hit5": float(hit5),
        "mean_ms": round(sum(times) / max(1, len(times)), 3),
        "p50_ms": round(pct(0.5), 3),
        "p95_ms": round(pct(0.95), 3),
        "max_ms": round(ordered[-1], 3),
    }
