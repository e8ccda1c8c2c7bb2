"""Pasted text (a message, a ``Class: message`` line, a traceback, a server log) -> the exceptions it shows."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from extractor.datasets.match.classes import ClassHierarchy, last_name

MAX_MESSAGE_LINES = 40
MAX_INPUT_LINES = 2000
"""A longer input is read only around its tracebacks and at its end (see :func:`_focus`)."""
FOCUS_LINES = 300
MAX_LINE_CHARS = 200_000
MAX_LOG_LINES = 30

CHAIN_EARLIER_WEIGHT = 0.6
EMBEDDED_WEIGHT = 0.85

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

PACKAGE_ROOTS = frozenset({"sglang", "sgl_kernel"})


def path_parts(path: str) -> list[str]:
    return [p for p in path.replace("\\", "/").split("/") if p and p != "."]


@dataclass(frozen=True)
class Frame:
    """One ``File "...", line N, in f`` line of a traceback."""

    path: str
    line: int
    function: str


@dataclass
class QueryException:
    """One exception found in the input, with every reading of its message worth trying."""

    cls: str | None
    variants: list[tuple[str, float]]
    frames: list[tuple[Frame, float]] = field(default_factory=list)
    weight: float = 1.0


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

_TRACEBACK = "Traceback (most recent call last):"
_CHAIN_MARKERS = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_DIGITS_RE = re.compile(r"\d+")
_CARETS = re.compile(r"[\^~\s]+")
_FRAME_RE = re.compile(r'\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?\s*$')
_EXC_LINE_RE = re.compile(r"(?P<cls>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::(?:\s(?P<msg>.*))?)?\s*$", re.DOTALL)
_REPR_RE = re.compile(r"(?P<cls>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\((?P<args>.*)\)\s*$", re.DOTALL)
_EMBEDDED_REPR_RE = re.compile(r"\b(?P<cls>[A-Z]\w*)\((?P<q>['\"])(?P<msg>.*?)(?<!\\)(?P=q)\)")
_EMBEDDED_LINE_RE = re.compile(r"(?:^|[\s:(\[])(?P<cls>[A-Z]\w*(?:Error|Exception)): (?P<msg>\S.*)")
_JSON_MESSAGE_RE = re.compile(
    r"""(?P<q>["'])message(?P=q)\s*:\s*(?P<val>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
)


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


def _unquote(text: str) -> str | None:
    s = text.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        return value if isinstance(value, str) else None
    return None


def _unescape(text: str) -> str:
    return (
        text.replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\'", "'")
        .replace('\\"', '"')
        .replace("\\\\", "\\")
    )


def message_variants(message: str, cls: str | None = None) -> list[tuple[str, float]]:
    """Readings of one message: as printed, unwrapped, unquoted, unescaped; each with a weight."""
    out: dict[str, float] = {}

    def add(text: str, weight: float) -> None:
        if weight > out.get(text, -1.0):
            out[text] = weight

    base = message.strip("\r\n")
    add(base, 1.0)
    add(base.strip(), 1.0)
    lines = [ln.strip() for ln in base.split("\n")]
    if len(lines) > 1:
        add(" ".join(x for x in lines if x), 0.95)  # a terminal or logger wrapped one long line
        add("".join(lines), 0.95)
        add(lines[0], 0.85)  # trailing lines may be notes or unrelated output
    for text in list(out):
        unq = _unquote(text)  # KeyError and repr() quote their message
        if unq is not None:
            add(unq, out[text])
        if "\\n" in text or "\\t" in text or "\\'" in text or '\\"' in text:
            add(_unescape(text), out[text] * 0.95)
    if cls is not None and last_name(cls) == "HTTPException":
        for text in list(out):
            m = re.match(r"\d{3}: ", text)  # str(HTTPException) is "status: detail"
            if m:
                add(text[m.end() :], out[text])
    return [(t, w) for t, w in out.items()]


def _repr_exception(text: str, hierarchy: ClassHierarchy) -> tuple[str, str] | None:
    """``ValueError('msg')`` -> (``ValueError``, ``msg``)."""
    m = _REPR_RE.match(text.strip())
    if not m or not hierarchy.looks_like_class(m.group("cls")):
        return None
    try:
        args: tuple[Any, ...] = (
            ast.literal_eval("(" + m.group("args") + ",)") if m.group("args").strip() else ()
        )
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if len(args) == 0:
        return m.group("cls"), ""
    if len(args) == 1:
        return m.group("cls"), str(args[0])
    return m.group("cls"), str(tuple(args))


def _exception_from_line(
    text: str, hierarchy: ClassHierarchy, *, trusted: bool
) -> tuple[str | None, str] | None:
    """Split ``Class: message`` (or a repr) when the class is plausible; None when it is not one."""
    rep = _repr_exception(text, hierarchy)
    if rep is not None:
        return rep
    m = _EXC_LINE_RE.match(text)
    if m and (trusted or hierarchy.looks_like_class(m.group("cls"))):
        return m.group("cls"), m.group("msg") or ""
    return None


@dataclass
class _Block:
    frames: list[Frame] = field(default_factory=list)
    cls: str | None = None
    message_lines: list[str] = field(default_factory=list)
    chained_to_next: bool = False


def parse_query(text: str, hierarchy: ClassHierarchy) -> list[QueryException]:
    """Every exception the input shows, the one that ended each chain weighing most."""
    raw_lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(raw_lines) > MAX_INPUT_LINES:
        raw_lines = _focus(raw_lines)
    lines: list[tuple[str, bool]] = []
    for raw in raw_lines:
        stripped, record_start = strip_prefixes(_ANSI_RE.sub("", raw[:MAX_LINE_CHARS]))
        idx = stripped.find(_TRACEBACK)
        if idx > 0:
            # "Scheduler hit an exception: Traceback (...)" - the log text, then the traceback.
            lines.append((stripped[:idx], record_start))
            lines.append((stripped[idx:], False))
        else:
            lines.append((stripped, record_start))

    blocks: list[_Block] = []
    loose: list[tuple[str, int, bool]] = []  # lines outside any traceback: text, index, record start
    state = "outside"
    pending_chain = False
    block: _Block | None = None
    prev_frame = False
    for i, (line, record_start) in enumerate(lines):
        bare = line.strip()
        if bare.startswith(_TRACEBACK):
            if pending_chain and blocks:
                blocks[-1].chained_to_next = True
            pending_chain = False
            block = _Block()
            blocks.append(block)
            state = "frames"
            continue
        if bare in _CHAIN_MARKERS:
            pending_chain = True
            state = "outside"
            continue
        fm = _FRAME_RE.match(line)
        if state == "frames" and block is not None:
            after_frame, prev_frame = prev_frame, False
            if fm:
                block.frames.append(
                    Frame(fm.group("path"), int(fm.group("line")), (fm.group("func") or "").strip())
                )
                prev_frame = True
                continue
            if (
                not bare
                or line[:1].isspace()
                or bare.startswith("[Previous line repeated")
                or _CARETS.fullmatch(bare)
            ):
                continue  # source lines, carets, blank lines between frames
            if after_frame and _exception_from_line(bare, hierarchy, trusted=False) is None:
                continue  # a source line that lost its indentation when it was pasted
            parsed = _exception_from_line(bare, hierarchy, trusted=True)
            block.cls, first = parsed if parsed is not None else (None, bare)
            block.message_lines = [first]
            state = "message"
            continue
        if state == "message" and block is not None:
            if not bare or record_start or len(block.message_lines) >= MAX_MESSAGE_LINES:
                state = "outside"
            else:
                block.message_lines.append(line)
                continue
        if fm:
            # Frames pasted without their "Traceback (most recent call last):" header.
            if pending_chain and blocks:
                blocks[-1].chained_to_next = True
            pending_chain = False
            block = _Block(
                frames=[Frame(fm.group("path"), int(fm.group("line")), (fm.group("func") or "").strip())]
            )
            blocks.append(block)
            state, prev_frame = "frames", True
            continue
        if bare:
            loose.append((bare, i, record_start))

    found: list[QueryException] = []
    for blk in blocks:
        if blk.cls is None and not blk.message_lines:
            continue
        final = not blk.chained_to_next
        weight = 1.0 if final else CHAIN_EARLIER_WEIGHT
        message = "\n".join(blk.message_lines)
        found.append(
            QueryException(blk.cls, message_variants(message, blk.cls), _weighted_frames(blk.frames), weight)
        )
        found.extend(_embedded(message, hierarchy, weight * EMBEDDED_WEIGHT))

    log_found: list[QueryException] = []
    k = 0
    while k < len(loose):
        bare = loose[k][0]
        log_found.extend(_embedded(bare, hierarchy, EMBEDDED_WEIGHT))
        parsed = _exception_from_line(bare, hierarchy, trusted=False)
        k += 1
        if parsed is None or parsed[0] is None:
            continue
        # A multi-line message goes on over the next adjacent lines that start no new record.
        message_lines = [parsed[1]]
        while (
            k < len(loose)
            and loose[k][1] == loose[k - 1][1] + 1
            and not loose[k][2]
            and len(message_lines) < MAX_MESSAGE_LINES
            and _exception_from_line(loose[k][0], hierarchy, trusted=False) is None
        ):
            message_lines.append(loose[k][0])
            log_found.extend(_embedded(loose[k][0], hierarchy, EMBEDDED_WEIGHT))
            k += 1
        log_found.append(QueryException(parsed[0], message_variants("\n".join(message_lines), parsed[0])))
    found.extend(log_found)
    if not found and loose:
        # Only a message, or a log with no exception line: each recent line may be the message.
        tail = loose[-MAX_LOG_LINES:]
        if len(tail) > 1:
            whole = "\n".join(b for b, _, _ in tail)
            found.append(QueryException(None, message_variants(whole)))
        weight = 1.0 if len(tail) == 1 else 0.9
        seen: set[str] = set()
        for bare, _, _ in reversed(tail):
            # Progress lines repeat with new numbers: try one of each shape, the latest.
            shape = _DIGITS_RE.sub("0", bare)
            if shape not in seen:
                seen.add(shape)
                found.append(QueryException(None, message_variants(bare), weight=weight))
    return found


def _focus(lines: list[str]) -> list[str]:
    """The parts of a long log worth reading: each traceback with what follows it, and the end.

    Skipped stretches become one blank line, which ends any message before it.
    """
    keep = [False] * len(lines)
    for k in range(max(0, len(lines) - FOCUS_LINES), len(lines)):
        keep[k] = True
    for k, line in enumerate(lines):
        if _TRACEBACK in line or _CHAIN_MARKERS[0] in line or _CHAIN_MARKERS[1] in line:
            for j in range(max(0, k - 2), min(len(lines), k + FOCUS_LINES)):
                keep[j] = True
    out: list[str] = []
    for k, line in enumerate(lines):
        if keep[k]:
            out.append(line)
        elif out and out[-1] != "":
            out.append("")
    return out


def _weighted_frames(frames: Sequence[Frame]) -> list[tuple[Frame, float]]:
    """The innermost frame raised; the innermost sglang frame is next best; callers count less."""
    if not frames:
        return []
    innermost_sglang = next(
        (k for k in range(len(frames) - 1, -1, -1) if PACKAGE_ROOTS & set(path_parts(frames[k].path))), None
    )
    out = []
    for k, fr in enumerate(frames):
        w = 1.0 if k == len(frames) - 1 else 0.8 if k == innermost_sglang else 0.4
        out.append((fr, w))
    return out


def _embedded(message: str, hierarchy: ClassHierarchy, weight: float) -> list[QueryException]:
    """Exceptions quoted inside a message: ``...: ValueError('x')`` or ``...: KeyError: msg``."""
    out = []
    for m in _EMBEDDED_REPR_RE.finditer(message):
        if m.start() == 0 or not hierarchy.looks_like_class(m.group("cls")):
            continue
        inner = _unquote(m.group("q") + m.group("msg") + m.group("q"))
        out.append(
            QueryException(
                m.group("cls"), message_variants(inner or m.group("msg"), m.group("cls")), [], weight
            )
        )
    for line in message.split("\n"):
        for m in _EMBEDDED_LINE_RE.finditer(line):
            if hierarchy.looks_like_class(m.group("cls")):
                out.append(
                    QueryException(
                        m.group("cls"), message_variants(m.group("msg"), m.group("cls")), [], weight
                    )
                )
    out.extend(_json_messages(message))
    return out


def _json_messages(text: str) -> list[QueryException]:
    """An HTTP error body ``{"object": "error", "message": "..."}`` (JSON or a Python dict repr)."""
    out = []
    for m in _JSON_MESSAGE_RE.finditer(text):
        value = _unquote(m.group("val"))
        if value:
            out.append(QueryException(None, message_variants(value), [], EMBEDDED_WEIGHT))
    return out
