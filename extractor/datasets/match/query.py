"""Pasted text (a message, a ``Class: message`` line, a traceback, a server log) -> the exceptions it shows."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from extractor.datasets.match.classes import ClassHierarchy, last_name
from extractor.datasets.match.logs import (
    ANSI_RE,
    CHAIN_MARKERS,
    MAX_LINE_CHARS,
    MAX_MESSAGE_LINES,
    TRACEBACK,
    focus,
    strip_prefixes,
)
from extractor.datasets.match.prefix import strip_ellipsis

MAX_INPUT_LINES = 2000
"""A longer input is read only around its tracebacks and at its end (see :func:`_focus`)."""
MAX_LOG_LINES = 30

CHAIN_EARLIER_WEIGHT = 0.6
EMBEDDED_WEIGHT = 0.85

PACKAGE_ROOTS = frozenset({"sglang", "sgl_kernel"})


def path_parts(path: str) -> list[str]:
    return [p for p in path.replace("\\", "/").split("/") if p and p != "."]


@dataclass(frozen=True)
class Frame:
    """One ``File "...", line N, in f`` line of a traceback."""

    path: str
    line: int
    function: str
    source: str = ""
    """The source line the traceback printed under it, stripped ("" when it printed none)."""


@dataclass
class QueryException:
    """One exception found in the input, with every reading of its message worth trying."""

    cls: str | None
    variants: list[tuple[str, float]]
    frames: list[tuple[Frame, float]] = field(default_factory=list)
    weight: float = 1.0
    group: int = 0
    """Which distinct error of the input this is: a chain, the exceptions quoted in it and its
    message share one group; each further traceback or exception line of a log starts its own."""


_DIGITS_RE = re.compile(r"\d+")
# Repeats of one error differ in their digits (times, ranks, ids): a shape has them all "0".
_CARETS = re.compile(r"[\^~\s]+")
_FRAME_RE = re.compile(r'\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?\s*$')
_EXC_LINE_RE = re.compile(r"(?P<cls>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::(?:\s(?P<msg>.*))?)?\s*$", re.DOTALL)
_REPR_RE = re.compile(r"(?P<cls>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\((?P<args>.*)\)\s*$", re.DOTALL)
_EMBEDDED_REPR_RE = re.compile(r"\b(?P<cls>[A-Z]\w*)\((?P<q>['\"])(?P<msg>.*?)(?<!\\)(?P=q)\)")
_EMBEDDED_LINE_RE = re.compile(r"(?:^|[\s:(\[])(?P<cls>[A-Z]\w*(?:Error|Exception)): (?P<msg>\S.*)")
_JSON_MESSAGE_RE = re.compile(
    r"""(?P<q>["'])message(?P=q)\s*:\s*(?P<val>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
)


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
        cut = strip_ellipsis(text)  # "…" where the user cut a long message short
        if cut is not None:
            add(cut, out[text])
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
    start: int = 0


def parse_query(text: str, hierarchy: ClassHierarchy) -> list[QueryException]:
    """Every exception the input shows, the one that ended each chain weighing most."""
    raw_lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(raw_lines) > MAX_INPUT_LINES:
        raw_lines = focus(raw_lines)
    lines: list[tuple[str, bool]] = []
    for raw in raw_lines:
        stripped, record_start = strip_prefixes(ANSI_RE.sub("", raw[:MAX_LINE_CHARS]))
        idx = stripped.find(TRACEBACK)
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
        if bare.startswith(TRACEBACK):
            if pending_chain and blocks:
                blocks[-1].chained_to_next = True
            pending_chain = False
            block = _Block(start=i)
            blocks.append(block)
            state = "frames"
            continue
        if bare in CHAIN_MARKERS:
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
            if after_frame and bare and line[:1].isspace() and block.frames and not block.frames[-1].source:
                block.frames[-1] = replace(block.frames[-1], source=bare)
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
                frames=[Frame(fm.group("path"), int(fm.group("line")), (fm.group("func") or "").strip())],
                start=i,
            )
            blocks.append(block)
            state, prev_frame = "frames", True
            continue
        if bare:
            loose.append((bare, i, record_start))

    found: list[QueryException] = []
    # A chain is one error: its tracebacks share the group of the one that ended it.
    group_of_block: dict[int, int] = {}
    pending: list[_Block] = []
    for blk in blocks:
        pending.append(blk)
        if not blk.chained_to_next:
            for member in pending:
                group_of_block[id(member)] = blk.start
            pending = []
    for member in pending:
        group_of_block[id(member)] = member.start
    for blk in blocks:
        if blk.cls is None and not blk.message_lines and not blk.frames:
            continue
        final = not blk.chained_to_next
        weight = 1.0 if final else CHAIN_EARLIER_WEIGHT
        message = "\n".join(blk.message_lines)
        group = group_of_block[id(blk)]
        if blk.cls is None and not blk.message_lines:
            # Frames cut off before their exception line: only the frames can say where.
            found.append(QueryException(None, [], _weighted_frames(blk.frames), weight, group))
            continue
        found.append(
            QueryException(
                blk.cls, message_variants(message, blk.cls), _weighted_frames(blk.frames), weight, group
            )
        )
        found.extend(_regroup(_embedded(message, hierarchy, weight * EMBEDDED_WEIGHT), group))

    log_found: list[QueryException] = []
    k = 0
    while k < len(loose):
        bare, where = loose[k][0], loose[k][1]
        embedded = _regroup(_embedded(bare, hierarchy, EMBEDDED_WEIGHT), where)
        log_found.extend(embedded)
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
            log_found.extend(_regroup(_embedded(loose[k][0], hierarchy, EMBEDDED_WEIGHT), where))
            k += 1
        log_found.append(
            QueryException(parsed[0], message_variants("\n".join(message_lines), parsed[0]), group=where)
        )
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


def _regroup(found: list[QueryException], group: int) -> list[QueryException]:
    for q in found:
        q.group = group
    return found


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
