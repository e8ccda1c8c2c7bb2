"""Server logs: the prefixes loggers put on lines, and the parts of a long log worth reading."""

from __future__ import annotations

import re

MAX_MESSAGE_LINES = 40
"""Lines a multi-line message may span."""
MAX_LINE_CHARS = 200_000

FOCUS_LINES = 300
MAX_FOCUS_LINES = 20_000
"""Lines kept around the tracebacks and exception lines of a long log (its end comes on top)."""
MAX_SHAPE_CHARS = 2000
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

_LEVEL = r"(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL|EXCEPTION)"
_TS = r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
# Prefixes that start a new log record (a line carrying one ends the message before it).
_RECORD_PREFIXES = [
    re.compile(rf"\[{_TS}[^\]\n]*\][:\s]?\s*"),  # [2026-01-01 12:00:00 TP0] (sglang)
    re.compile(rf"{_TS}\s*(?:\|\s*|-\s+)?"),  # 2026-01-01 12:00:00,123 - ...
    re.compile(rf"{_LEVEL}\s+\d{{2}}-\d{{2}}\s+\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d+)?\s+[\w./<>-]+:\d+\]\s*"),
    re.compile(rf"(?:[\w.]+\s+-\s+)?{_LEVEL}\s+-\s+"),  # sglang - ERROR - msg
    re.compile(rf"{_LEVEL}:(?:[\w.]+:(?!\s))?\s*"),  # ERROR:root:msg, ERROR:    msg
    re.compile(rf"\[{_LEVEL}\]\s*"),
]
# Prefixes repeated on every line (ranks, workers, containers): they do not end a message.
_LINE_PREFIXES = [
    re.compile(r"\[(?:rank|RANK|Rank)\s*\d+\]:?\s?"),
    re.compile(r"\[(?:(?:TP|DP|PP|EP|CP|ATTN_TP|MOE_EP)\s*\d+\s*)+\]:?\s?"),
    re.compile(r"\((?:[\w.-]+\s+)?pid=\d+(?:,\s*ip=[\d.:a-fA-F]+)?\)\s?"),
    re.compile(r"[\w.-]+-\d+\s+\|\s"),  # docker compose: "sglang-1  | "
]

TRACEBACK = "Traceback (most recent call last):"
CHAIN_MARKERS = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_ZERO_DIGITS = bytes.maketrans(b"123456789", b"000000000")


def _shape(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass").translate(_ZERO_DIGITS)


_EXC_HINT_RE = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b[:(]")


def strip_prefixes(line: str) -> tuple[str, bool]:
    """Remove logger prefixes from the start of a line; say whether one began a new log record."""
    record_start = False
    for _ in range(6):
        for rx in _RECORD_PREFIXES:
            m = rx.match(line)
            if m and m.end() > 0:
                line = line[m.end() :]
                record_start = True
                break
        else:
            for rx in _LINE_PREFIXES:
                m = rx.match(line)
                if m and m.end() > 0:
                    line = line[m.end() :]
                    break
            else:
                return line, record_start
    return line, record_start


def focus(lines: list[str]) -> list[str]:
    """The parts of a long log worth reading: each distinct traceback or exception line with what
    follows it, and the end; linear in the log.

    A log repeats its errors (every rank, every retry): a traceback or exception line whose text
    differs from an earlier one's only in its digits is skipped, and at most
    :data:`MAX_FOCUS_LINES` lines are kept besides the end. Skipped stretches become one blank
    line, which ends any message before it.
    """
    keep = [False] * len(lines)
    for k in range(max(0, len(lines) - FOCUS_LINES), len(lines)):
        keep[k] = True
    seen: set[bytes] = set()
    budget = MAX_FOCUS_LINES
    until = -1  # lines before this index are kept
    for k, line in enumerate(lines):
        if k >= until and budget > 0:
            if TRACEBACK in line or CHAIN_MARKERS[0] in line or CHAIN_MARKERS[1] in line:
                end = _traceback_end(lines, k)
                shape = _shape("\n".join(x[:MAX_SHAPE_CHARS] for x in lines[k:end]))
                if shape not in seen:
                    seen.add(shape)
                    for j in range(max(0, k - 2, until), k):
                        keep[j] = True
                    until = k + FOCUS_LINES
                    budget -= FOCUS_LINES
            elif ("Error" in line or "Exception" in line) and _EXC_HINT_RE.search(line[:MAX_SHAPE_CHARS]):
                shape = _shape(line[:MAX_SHAPE_CHARS])
                if shape not in seen:
                    seen.add(shape)
                    until = k + MAX_MESSAGE_LINES
                    budget -= MAX_MESSAGE_LINES
        if k < until:
            keep[k] = True
    out: list[str] = []
    for k, line in enumerate(lines):
        if keep[k]:
            out.append(line)
        elif out and out[-1] != "":
            out.append("")
    return out


def _traceback_end(lines: list[str], start: int) -> int:
    """Index just after the exception line ending the traceback that starts at ``start``."""
    end = min(len(lines), start + FOCUS_LINES)
    for j in range(start + 1, end):
        line = lines[j]
        if (
            line
            and not line[:1].isspace()
            and not line.startswith(("File ", "\x1b"))
            and TRACEBACK not in line
        ):
            return j + 1
    return end
