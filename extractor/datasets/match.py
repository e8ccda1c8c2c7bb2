"""Runtime error text -> the dataset records of the sites that can have raised it.

A user holds a message, an ``ErrorClass: message`` line, or a whole traceback or server log.
:func:`parse_query` turns that text into *exceptions* (class, message variants, traceback frames,
and a weight: the last exception of a chained traceback weighs most); :class:`Matcher` indexes a
dataset once and ranks its records against them.

Evidence and score (0..100, the sum of three parts, best over the exceptions of the input;
the last exception of a chain counts fully, the ones before it 0.6, and an exception quoted
inside another's message 0.85):

* message (55 points): a full match of ``messagePattern`` scores 0.15 + 0.85 x specificity,
  where specificity grows with the literal text the pattern pins down against its placeholders
  (a bare ``(?s:.*)`` scores almost nothing and, like a pattern below :data:`MIN_SPECIFICITY`,
  names no site without a frame or an sglang class to back it); the pattern's literal runs found
  in order inside the message (whitespace-tolerant: wrapped or joined lines) score 0.7 of that,
  less when they explain little of the message; failing both, idf-weighted word overlap (a
  message from a nearby sglang version) scores at most 0.45.
* class (15 points): same class 1, related through the known class hierarchy 0.5 (0.2 through
  ``Exception``), known and unrelated -0.5, unknowable 0. The hierarchy is Python's built-in
  exceptions plus every ``class X(Base):`` line found in the records' ``sourceCode`` windows;
  an sglang exception class defined away from every raise site is known by name only (it
  matches exactly, never as a subclass). ``pkg.mod.Name`` compares as ``Name``, but a class
  qualified by another package (``openai.BadRequestError``) is not sglang's class of that name.
  An sglang-specific class alone (``KVTransferError``) names its sites; a builtin one does not.
* frames (30 points): a traceback frame whose path, from its ``sglang/`` or ``sgl_kernel/``
  folder on, ends the record's ``filePath`` scores by the nearness of its line to ``lineNumber``
  (frames outside those packages are ignored); the innermost frame counts fully, the innermost
  sglang frame 0.8, callers 0.4. A frame within a few lines names its site by itself (a bare
  ``AssertionError``), unless the site's class contradicts the input's and its text does too.

Speed: patterns are analysed once (literal runs, specificity, word anchors); a query only tries
records whose rarest safe literal word occurs in the message (a word that any full match must
contain), plus records sharing a traceback file, plus the few records with no such word. The
necessary-condition check "all literal runs appear in order" runs before any regex; regexes run
only on messages up to :data:`MAX_REGEX_CHARS` characters and, in the main thread, under a
:data:`REGEX_SECONDS` alarm. Inputs over :data:`MAX_INPUT_LINES` lines are read around their
tracebacks and at their end.
"""

from __future__ import annotations

import ast
import builtins
import gc
import importlib
import math
import re
import signal
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extractor.errors import ExtractorError
from extractor.records import message_pattern
from extractor.records.jsonl import load_records
from extractor.records.model import ErrorRecord

# ``re._parser`` is the stdlib's own regex parser (``sre_parse`` before 3.11); importing it through
# importlib avoids the deprecation warning of the old name and keeps the exact parse Python uses.
_sre: Any = importlib.import_module("re._parser")

REGEX_SECONDS = 0.02
"""Longest one candidate regex may run on one message before it counts as no match."""
MAX_REGEX_CHARS = 2000
"""Longest message a candidate regex is run on; longer text is judged by literal runs and words."""
MAX_MESSAGE_LINES = 40
MAX_INPUT_LINES = 2000
"""A longer input is read only around its tracebacks and at its end (see :func:`_focus`)."""
FOCUS_LINES = 300
MAX_LINE_CHARS = 200_000
MAX_LOG_LINES = 30
"""A log with no exception line: only its last this-many lines are tried as messages."""

W_MESSAGE, W_CLASS, W_FRAME = 0.55, 0.15, 0.30
CHAIN_EARLIER_WEIGHT = 0.6
EMBEDDED_WEIGHT = 0.85
MIN_SPECIFICITY = 0.2
"""Below this a pattern (``{a}: {b}``) is too generic to name a site from its message alone."""
FUZZY_MIN_RECALL = 0.6
"""Share of a record's (idf-weighted) literal words the message must hold for a loose match."""

_WORD_RE = re.compile(r"\w+")
_WS_RE = re.compile(r"\s+")
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# -- patterns ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PatternInfo:
    """What a ``messagePattern`` pins down: its mandatory literal runs and how specific it is."""

    runs: tuple[str, ...]
    literal_chars: int
    placeholders: int
    safe_words: frozenset[str]
    ignore_case: bool
    starts_with_run: bool = False  # the first run begins every full match
    ends_with_run: bool = False  # the last run ends every full match

    @property
    def specificity(self) -> float:
        """0 for a pure placeholder, near 1 for a long fully literal pattern."""
        if self.literal_chars == 0:
            return 0.0
        ratio = self.literal_chars / (self.literal_chars + 4 * self.placeholders)
        # Short literals ("failed", " != ") are raised from many sites: discount them.
        return ratio * min(1.0, (self.literal_chars + 4) / 24)


def analyse_pattern(pattern: str, *, fast: bool = True) -> PatternInfo:
    """Split a regex into the literal runs every full match must contain, in order.

    Patterns made only of escaped literals, ``(?s:.*)``-like wildcards, lookaheads and anchors
    (nearly all of an extracted dataset) are read by a small scanner; anything else goes through
    the stdlib's own regex parser, which gives the same answer several times slower.
    """
    walker = _Walker()
    ignore_case = False
    if not (fast and _scan_simple(pattern, walker)):
        try:
            parsed = _sre.parse(pattern)
        except Exception:  # a pattern re.compile accepted but the parser rejects: treat as opaque
            return PatternInfo((), 0, 1, frozenset(), False)
        walker = _Walker()
        walker.walk(parsed.data)
        ignore_case = bool(parsed.state.flags & re.IGNORECASE) or walker.ignore_case
    walker.flush(at_end=True)
    words: set[str] = set()
    for text, at_start, at_end in walker.runs:
        for m in _WORD_RE.finditer(text):
            # A word touching a placeholder may continue into it at runtime ("batch" + "_size"),
            # so only words bounded by literal text or by the pattern's ends are safe anchors.
            if (m.start() > 0 or at_start) and (m.end() < len(text) or at_end) and len(m.group()) >= 2:
                words.add(m.group().lower())
    return PatternInfo(
        runs=tuple(r[0] for r in walker.runs),
        literal_chars=walker.literal_chars,
        placeholders=walker.placeholders,
        safe_words=frozenset(words),
        ignore_case=ignore_case,
        starts_with_run=bool(walker.runs) and walker.runs[0][1],
        ends_with_run=bool(walker.runs) and walker.runs[-1][2],
    )


class _Walker:
    """Collects mandatory literal runs of a parsed regex; anything optional breaks a run."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, bool, bool]] = []
        self.current: list[str] = []
        self.literal_chars = 0
        self.placeholders = 0
        self.ignore_case = False
        self._seen_any = False  # something (literal or not) came before the current run
        self._run_at_start = True

    def flush(self, *, at_end: bool = False) -> None:
        if self.current:
            self.runs.append(("".join(self.current), self._run_at_start, at_end))
            self.current = []

    def _break(self, placeholder: bool) -> None:
        self.flush()
        if placeholder:
            self.placeholders += 1
        self._seen_any = True

    def _literal(self, ch: str) -> None:
        self._literals(ch)

    def _literals(self, text: str) -> None:
        if not self.current:
            self._run_at_start = not self._seen_any
        self.current.append(text)
        self.literal_chars += len(text)
        self._seen_any = True

    def walk(self, items: Iterable[tuple[Any, Any]]) -> None:
        for op, av in items:
            name = str(op)
            if name == "LITERAL":
                self._literal(chr(av))
            elif name == "SUBPATTERN":
                _group, add_flags, _del_flags, sub = av
                if add_flags & re.IGNORECASE:
                    self.ignore_case = True
                self.walk(sub.data if hasattr(sub, "data") else sub)
            elif name == "ATOMIC_GROUP":
                self.walk(av.data if hasattr(av, "data") else av)
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                lo, hi, sub = av
                if lo == hi == 1:
                    self.walk(sub.data if hasattr(sub, "data") else sub)
                else:
                    self._break(placeholder=True)
            elif name == "IN" and len(av) == 1 and str(av[0][0]) == "LITERAL":
                self._literal(chr(av[0][1]))  # "[.]" is a literal dot
            elif name in ("AT", "ASSERT", "ASSERT_NOT"):
                # ^, $, \b and lookarounds consume nothing: literal text on both sides is adjacent
                # in every match (extractors put fail-fast lookaheads in front of patterns).
                continue
            else:  # ANY, IN, NOT_LITERAL, BRANCH, GROUPREF, CATEGORY, ...
                self._break(placeholder=True)


_ESCAPED_CONTROL = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_SIMPLE_TOKEN = re.compile(
    r"""
    (?P<wild>\(\?s:\.[*+]\??\)|\[\\s\\S\][*+]\??|\.[*+]\??)  # (?s:.*) [\s\S]*? .* and kin
    | (?P<lit>[^.^$*+?{}\[\]\\|()]+)                               # plain text
    | \\(?P<esc>.)                                                  # one escaped character
    | (?P<look>\(\?[=!])                                            # a lookahead
    | (?P<zero>[\^$])
    """,
    re.VERBOSE | re.DOTALL,
)


def _scan_simple(pattern: str, walker: _Walker) -> bool:
    """Feed ``walker`` from a pattern of the common simple shapes; False for anything else."""
    i, n = 0, len(pattern)
    while i < n:
        m = _SIMPLE_TOKEN.match(pattern, i)
        if m is None:
            return False  # groups, alternation, classes, counted repeats: the real parser's job
        i = m.end()
        quantified = i < n and pattern[i] in "*+?{"
        kind = m.lastgroup
        if kind == "wild":
            if quantified:
                return False
            walker._break(placeholder=True)
        elif kind == "lit":
            text = m.group("lit")
            if quantified:
                return False  # the last character is optional or repeated
            walker._literals(text)
        elif kind == "esc":
            d = m.group("esc")
            if d in "AZbB":
                continue
            if d in "dDsSwW":
                while i < n and pattern[i] in "*+?":
                    i += 1
                if i < n and pattern[i] == "{":
                    return False
                walker._break(placeholder=True)
                continue
            if d.isalnum() or d == "_":
                if d not in _ESCAPED_CONTROL:
                    return False  # \1, \x41, \u00e9, \N{...}
                d = _ESCAPED_CONTROL[d]
            if quantified:
                return False
            walker._literals(d)
        elif kind == "look":
            end = _group_end(pattern, m.start())
            if end < 0 or (end < n and pattern[end] in "*+?{"):
                return False
            i = end  # a lookahead consumes nothing
        # "zero": ^ and $ consume nothing
    return True


def _group_end(pattern: str, start: int) -> int:
    """Index just after the ``)`` closing the group opened at ``start``; -1 if unbalanced."""
    depth, i, n = 0, start, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def _runs_in_order(runs: Sequence[str], text_lower: str) -> bool:
    """Every run occurs in ``text_lower`` in order without overlap (a full match requires it)."""
    pos = 0
    for run in runs:
        found = text_lower.find(run, pos)
        if found < 0:
            return False
        pos = found + len(run)
    return True


class _RegexGuard:
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

    def __enter__(self) -> _RegexGuard:
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
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        try:
            return rx.fullmatch(text) is not None
        except _RegexTimeout:
            self.timeouts += 1
            return False
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


class _RegexTimeout(Exception):
    pass


def _raise_timeout(_signum: int, _frame: object) -> None:
    raise _RegexTimeout()


# -- class hierarchy -----------------------------------------------------------------------------


def _builtin_parents() -> dict[str, set[str]]:
    parents: dict[str, set[str]] = {}
    for name in dir(builtins):
        obj = getattr(builtins, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            parents[name] = {b.__name__ for b in obj.__bases__ if issubclass(b, BaseException)}
    return parents


_BUILTIN_PARENTS = _builtin_parents()
_CLASS_DEF_RE = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)[ \t]*:", re.MULTILINE)
_EXC_NAME_RE = re.compile(
    r"[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault|Timeout|Expired)|[A-Z]\w*Error\w*"
)


def last_name(dotted: str) -> str:
    """``sglang.srt.x.MyError`` -> ``MyError``."""
    return dotted.rsplit(".", 1)[-1]


class ClassHierarchy:
    """Exception classes known by name, with the parents that could be learned."""

    def __init__(self, records: Sequence[ErrorRecord]) -> None:
        self.parents: dict[str, set[str]] = {k: set(v) for k, v in _BUILTIN_PARENTS.items()}
        self.known: set[str] = set(self.parents)
        for record in records:
            self.known.add(last_name(record.errorClass))
            if "class" not in record.sourceCode:
                continue
            for m in _CLASS_DEF_RE.finditer(record.sourceCode):
                bases = {last_name(b.split("[")[0].strip()) for b in m.group(2).split(",")}
                bases = {b for b in bases if b and "=" not in b and b.isidentifier()}
                if bases:
                    self.parents.setdefault(m.group(1), set()).update(bases)
        self._ancestors: dict[str, frozenset[str]] = {}

    def ancestors(self, name: str) -> frozenset[str]:
        """Every known ancestor of ``name`` (not ``name`` itself)."""
        cached = self._ancestors.get(name)
        if cached is not None:
            return cached
        seen: set[str] = set()
        stack = list(self.parents.get(name, ()))
        while stack:
            cur = stack.pop()
            if cur in seen or cur == name:
                continue
            seen.add(cur)
            stack.extend(self.parents.get(cur, ()))
        result = frozenset(seen)
        self._ancestors[name] = result
        return result

    def relation(self, query: str, record: str) -> float:
        """1 same class, 0.5 one derives from the other, -0.5 unrelated, 0 when unknowable."""
        if query == record:
            return 1.0
        if record in self.ancestors(query) or query in self.ancestors(record):
            # A generic base (Exception) says little; only a specific shared line counts fully.
            return 0.2 if {query, record} & {"Exception", "BaseException"} else 0.5
        if query not in self.parents or record not in self.parents:
            return 0.0  # one's ancestry is unknown (a helper's name, a class defined elsewhere)
        return -0.5

    def looks_like_class(self, dotted: str) -> bool:
        """Whether a name seen outside a traceback is an exception class worth trusting."""
        name = last_name(dotted)
        return name in self.known or bool(_EXC_NAME_RE.fullmatch(name))


# -- query parsing -------------------------------------------------------------------------------


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
        (k for k in range(len(frames) - 1, -1, -1) if _PACKAGE_ROOTS & set(_path_parts(frames[k].path))), None
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


# -- matching ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    """One ranked record and why it ranked there."""

    score: float
    record: ErrorRecord
    why: tuple[str, ...]


@dataclass
class _Evidence:
    message: float = 0.0
    message_why: str = ""
    message_kind: str = ""  # "full", "contain" or "fuzzy"
    cls: float = 0.0
    frame: float = 0.0
    frame_why: str = ""
    frame_close: bool = False  # a frame within a few lines of the site

    def total(self, weight: float) -> float:
        return weight * max(0.0, W_MESSAGE * self.message + W_CLASS * self.cls + W_FRAME * self.frame)


_WHY = {
    "full": "pattern fully matches",
    "weak": "pattern fully matches (mostly placeholders)",
    "contain": "its literal text occurs in the message",
    "fuzzy": "most of its words occur in the message",
}


def _qualifies(e: _Evidence, custom_class: bool) -> bool:
    """Whether the evidence names this site at all (the score then says how well)."""
    if e.frame_close and (e.cls >= 0 or e.message > 0):
        # Near the frame's line, unless its class contradicts the input's and its text does too
        # (a bare AssertionError from an assert that has no record is not the raise next to it).
        return True
    if custom_class and e.cls == 1.0:
        return True  # an sglang-specific class is evidence on its own; ValueError is not
    if e.message_kind in ("full", "contain"):
        return True
    # Word overlap is loose: not against a conflicting class. A pattern that is mostly
    # placeholders matches almost any text: only a frame or an sglang class backs it up.
    return e.message_kind == "fuzzy" and e.cls >= 0


_PACKAGE_ROOTS = frozenset({"sglang", "sgl_kernel"})


def _path_parts(path: str) -> list[str]:
    return [p for p in path.replace("\\", "/").split("/") if p and p != "."]


class Matcher:
    """A dataset indexed once for many queries."""

    def __init__(self, records: Sequence[ErrorRecord]) -> None:
        self.records = list(records)
        self.hierarchy = ClassHierarchy(self.records)
        self.infos = [analyse_pattern(r.messagePattern) for r in self.records]
        self._lower_runs = [tuple(run.lower() for run in info.runs) for info in self.infos]
        self._norm_runs = [
            tuple(n for n in (_WS_RE.sub(" ", run).strip() for run in runs) if n) for runs in self._lower_runs
        ]
        self._compiled: dict[int, message_pattern.Matcher | None] = {}
        # A bare wildcard or a handful of letters matches nearly anything: such a match is weak.
        self._says_nothing = [message_pattern.identifies_nothing(r.messagePattern) for r in self.records]
        self.classes = [last_name(r.errorClass) for r in self.records]
        df: dict[str, int] = defaultdict(int)
        for info in self.infos:
            for w in info.safe_words:
                df[w] += 1
        n = max(1, len(self.records))
        self.idf = {w: math.log(1 + n / c) for w, c in df.items()}
        self.by_anchor: dict[str, list[int]] = defaultdict(list)
        self.by_word: dict[str, list[int]] = defaultdict(list)
        self.unanchored: list[int] = []  # literal text but no safe word: checked on every query
        self.by_basename: dict[str, list[int]] = defaultdict(list)
        self.by_class: dict[str, list[int]] = defaultdict(list)
        for i, (record, info) in enumerate(zip(self.records, self.infos, strict=True)):
            if info.safe_words:
                anchor = min(info.safe_words, key=lambda w: (df[w], -len(w), w))
                self.by_anchor[anchor].append(i)
                if len(info.safe_words) >= 2:  # the loose word match needs two words at least
                    for w in info.safe_words:
                        self.by_word[w].append(i)
            elif info.literal_chars > 0:
                self.unanchored.append(i)
            parts = _path_parts(record.filePath)
            if parts:
                self.by_basename[parts[-1]].append(i)
            self.by_class[self.classes[i]].append(i)
        self._word_weight = [sum(self.idf[w] for w in info.safe_words) for info in self.infos]
        # Words in more than 1 record in 20 say little and cost most: the loose match's prefilter
        # looks at the rarer words only, each record needing most of its own rarer words' weight.
        self._fuzzy_cap = max(50, n // 20)
        self._rare_weight = [
            sum(self.idf[w] for w in info.safe_words if df[w] <= self._fuzzy_cap) for info in self.infos
        ]

    @classmethod
    def from_path(cls, path: Path) -> Matcher:
        """Load and index a dataset; a bad line raises :class:`ExtractorError` naming ``file:line``."""
        matcher = cls(load_records(path))
        # Loading leaves millions of long-lived objects; the collector's next full pass over them
        # would stall one query for ~300 ms. Freezing moves them out of its way (refcounting
        # still frees them when the matcher goes).
        gc.collect()
        gc.freeze()
        return matcher

    def _regex(self, i: int) -> message_pattern.Matcher | None:
        if i not in self._compiled:
            try:
                self._compiled[i] = message_pattern.matcher_for(self.records[i].messagePattern)
            except message_pattern.PatternError:
                self._compiled[i] = None
        return self._compiled[i]

    # -- evidence ----------------------------------------------------------------------------

    def _message_candidates(self, words: set[str]) -> set[int]:
        cands: set[int] = set(self.unanchored)
        for w in words:
            hit = self.by_anchor.get(w)
            if hit:
                cands.update(hit)
        return cands

    def _fuzzy_candidates(self, words: set[str]) -> list[int]:
        """Records whose rarer words mostly occur among ``words`` (worth an exact overlap check)."""
        acc: dict[int, float] = defaultdict(float)
        for w in sorted(words):
            posting = self.by_word.get(w)
            if posting and len(posting) <= self._fuzzy_cap:
                weight = self.idf[w]
                for i in posting:
                    acc[i] += weight
        need = self._rare_weight
        return sorted(i for i, shared in acc.items() if shared >= FUZZY_MIN_RECALL * need[i])

    def _message_level(self, i: int, text: str, lower: str, norm: str) -> tuple[float, str]:
        """How well the site's pattern explains ``text``: a level in 0..1 and its kind.

        ``lower`` is the text lower-cased, ``norm`` that with every whitespace run made one space.
        """
        info = self.infos[i]
        if info.literal_chars == 0:
            if len(text) <= MAX_REGEX_CHARS:
                rx = self._regex(i)
                if rx is not None and rx.fullmatch(text):
                    return (0.1 if not text else 0.05), "weak"
            return 0.0, ""
        full = 0.15 + 0.85 * info.specificity
        weak = info.specificity < MIN_SPECIFICITY or self._says_nothing[i]
        runs = self._lower_runs[i]
        in_order = _runs_in_order(runs, lower)
        # Cheap necessary conditions first: most failing full matches never reach the regex.
        if (
            in_order
            and (not info.starts_with_run or lower.startswith(runs[0]))
            and (not info.ends_with_run or lower.endswith(runs[-1]))
            and len(text) <= MAX_REGEX_CHARS
        ):
            rx = self._regex(i)
            if rx is not None and rx.fullmatch(text):
                return full, "weak" if weak else "full"
        if info.literal_chars < 6 or weak:
            return 0.0, ""
        # Line breaks and spacing differ between how a site builds its text and how a user
        # pastes it (wrapped, joined, a "\n" lost in an issue title): compare it loosely.
        norm_runs = self._norm_runs[i]
        if in_order or (norm_runs and _runs_in_order(norm_runs, norm)):
            # The site's text is only part of the message (a wrapper added its own words): the
            # less of the message the pattern's literals explain, the weaker the evidence.
            covered = min(1.0, info.literal_chars / max(1, len(text.strip())))
            return 0.7 * full * (0.4 + 0.6 * covered), "contain"
        return 0.0, ""

    def _fuzzy_level(self, i: int, words: set[str], query_weight: float) -> float:
        info = self.infos[i]
        if len(info.safe_words) < 2 or self._word_weight[i] <= 0 or query_weight <= 0:
            return 0.0
        shared = sum(self.idf[w] for w in info.safe_words & words)
        recall = shared / self._word_weight[i]
        precision = shared / query_weight
        if recall < FUZZY_MIN_RECALL or shared <= 0:
            return 0.0
        f2 = 5 * precision * recall / (4 * precision + recall)
        return 0.45 * f2 if f2 >= 0.5 else 0.0

    def _frame_evidence(self, frames: Sequence[tuple[Frame, float]], ev: dict[int, _Evidence]) -> None:
        for fr, weight in frames:
            parts = _path_parts(fr.path)
            if not parts:
                continue
            # Only a frame inside an sglang package says where sglang raised; its path from the
            # package folder on must end the record's path (site-packages and checkouts alike).
            roots = [k for k, part in enumerate(parts) if part in _PACKAGE_ROOTS]
            if not roots:
                continue
            need = parts[roots[-1] :]
            for i in self.by_basename.get(parts[-1], ()):
                rparts = _path_parts(self.records[i].filePath)
                if len(rparts) < len(need) or rparts[-len(need) :] != need:
                    continue
                d = abs(fr.line - self.records[i].lineNumber)
                score = weight * (0.35 + 0.65 * math.exp(-d / 15))
                e = ev.setdefault(i, _Evidence())
                if score > e.frame:
                    e.frame = score
                    e.frame_why = f"traceback frame {'/'.join(need)}:{fr.line} ({d} lines away)"
                if d <= 2 or (d <= 5 and weight >= 0.8):
                    e.frame_close = True

    def _evidence(self, q: QueryException) -> dict[int, _Evidence]:
        ev: dict[int, _Evidence] = {}
        qcls = last_name(q.cls) if q.cls else None

        def note(i: int, level: float, kind: str) -> None:
            e = ev.setdefault(i, _Evidence())
            if level > e.message:
                e.message, e.message_kind, e.message_why = level, kind, _WHY[kind]

        for text, vweight in q.variants:
            lower = text.lower()
            norm = _WS_RE.sub(" ", lower)
            words = set(_WORD_RE.findall(lower))
            for i in self._message_candidates(words):
                level, kind = self._message_level(i, text, lower, norm)
                if level > 0:
                    note(i, level * vweight, kind)
            known = {w for w in words if w in self.idf}
            qweight = sum(self.idf[w] for w in known)
            for i in self._fuzzy_candidates(known):
                level = self._fuzzy_level(i, known, qweight)
                if level > 0:
                    note(i, level * vweight, "fuzzy")
        self._frame_evidence(q.frames, ev)
        custom_class = False
        if q.cls is not None and qcls is not None:
            # "openai.BadRequestError" is the client's class, not sglang's class of that name.
            root = q.cls.split(".")[0] if "." in q.cls else None
            for i, e in ev.items():
                e.cls = self.hierarchy.relation(qcls, self.classes[i])
                if e.cls > 0 and root is not None and not self._same_package(root, i):
                    e.cls = 0.0
            custom_class = qcls not in _BUILTIN_PARENTS and qcls in self.by_class
            if custom_class:
                for i in self.by_class[qcls][:200]:
                    if root is None or self._same_package(root, i):
                        ev.setdefault(i, _Evidence()).cls = 1.0
        return {i: e for i, e in ev.items() if _qualifies(e, custom_class)}

    def _same_package(self, root: str, i: int) -> bool:
        """Whether a class qualified under ``root`` can be the one record ``i`` raises."""
        declared = self.records[i].errorClass
        if "." in declared:
            return declared.split(".")[0] == root
        return root in _PACKAGE_ROOTS  # an unqualified errorClass is sglang's own or a builtin

    def match(self, text: str, top: int | None = 10) -> list[Match]:
        """Rank the records that may have raised the error in ``text``, best first."""
        queries = parse_query(text, self.hierarchy)
        best: dict[int, tuple[float, tuple[str, ...]]] = {}
        evidence = [(q, self._evidence(q)) for q in queries]
        for q, found in evidence:
            for i, e in found.items():
                score = e.total(q.weight)
                if score > best.get(i, (-1.0, ()))[0]:
                    why = tuple(x for x in (e.message_why, e.frame_why) if x)
                    if q.cls and e.cls > 0:
                        why += (f"class {last_name(q.cls)} {'matches' if e.cls == 1 else 'is related'}",)
                    best[i] = (score, why)
        ranked = sorted(
            best.items(),
            key=lambda kv: (-round(kv[1][0], 6), -self.infos[kv[0]].specificity, self._sort_key(kv[0])),
        )
        if top is not None:
            ranked = ranked[:top]
        return [Match(round(100 * s, 1), self.records[i], why) for i, (s, why) in ranked]

    def _sort_key(self, i: int) -> tuple[str, int, str]:
        r = self.records[i]
        return (r.filePath, r.lineNumber, r.id)


# -- datasets and benchmark ----------------------------------------------------------------------


def newest_dataset(folder: Path) -> Path:
    """The most recently modified ``*.jsonl`` under ``folder`` (the default ``--dataset``)."""
    try:
        found = [p for p in folder.rglob("*.jsonl") if p.is_file() and not p.name.startswith(".")]
    except OSError as exc:
        raise ExtractorError(str(folder), f"cannot list datasets ({exc.strerror or exc})") from exc
    if not found:
        raise ExtractorError(str(folder), "no dataset (*.jsonl) found; run `extract` or pass --dataset")
    return max(found, key=lambda p: (p.stat().st_mtime, str(p)))


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
        message = _render(record)
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


def _render(record: ErrorRecord) -> str | None:
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


def matches_table(found: Sequence[Match], title: str) -> Any:
    """A rich table of ranked matches: rank, score, class, file:line, message, first solution."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("class", no_wrap=True)
    table.add_column("file:line", overflow="fold")
    table.add_column("message", overflow="fold", ratio=3)
    table.add_column("first solution", overflow="fold", ratio=2)
    for rank, m in enumerate(found, 1):
        r = m.record
        message = r.errorMessage if len(r.errorMessage) <= 300 else r.errorMessage[:297] + "..."
        # Text(): messages hold "[...]" that rich would otherwise read as markup.
        table.add_row(
            str(rank),
            f"{m.score:.1f}",
            Text(r.errorClass),
            Text(f"{r.filePath}:{r.lineNumber}"),
            Text(message or "(no message)"),
            Text(r.solutions[0]),
        )
    return table
