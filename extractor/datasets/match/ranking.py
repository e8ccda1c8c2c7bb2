"""The dataset indexed once, and every record ranked against the exceptions of one input."""

from __future__ import annotations

import gc
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from extractor.datasets.match.classes import BUILTIN_PARENTS, ClassHierarchy, last_name
from extractor.datasets.match.patterns import WORD_RE, WS_RE, analyse_pattern, runs_in_order
from extractor.datasets.match.query import PACKAGE_ROOTS, Frame, QueryException, parse_query, path_parts
from extractor.datasets.match.regex_guard import REGEX_SECONDS, RegexGuard
from extractor.records.jsonl import load_records
from extractor.records.model import ErrorRecord

MAX_REGEX_CHARS = 2000
"""Longest message a candidate regex is run on; longer text is judged by literal runs and words."""

W_MESSAGE, W_CLASS, W_FRAME = 0.55, 0.15, 0.30
MIN_SPECIFICITY = 0.2
"""Below this a pattern (``{a}: {b}``) is too generic to name a site from its message alone."""
FUZZY_MIN_RECALL = 0.6
"""Share of a record's (idf-weighted) literal words the message must hold for a loose match."""


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


class Matcher:
    """A dataset indexed once for many queries."""

    def __init__(self, records: Sequence[ErrorRecord]) -> None:
        self.records = list(records)
        self.hierarchy = ClassHierarchy(self.records)
        self.infos = [analyse_pattern(r.messagePattern) for r in self.records]
        self._lower_runs = [tuple(run.lower() for run in info.runs) for info in self.infos]
        self._norm_runs = [
            tuple(n for n in (WS_RE.sub(" ", run).strip() for run in runs) if n) for runs in self._lower_runs
        ]
        self._compiled: dict[int, re.Pattern[str] | None] = {}
        self._guard = RegexGuard(REGEX_SECONDS)
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
            parts = path_parts(record.filePath)
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

    def _regex(self, i: int) -> re.Pattern[str] | None:
        if i not in self._compiled:
            try:
                self._compiled[i] = re.compile(self.records[i].messagePattern)
            except re.error:
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
                if rx is not None and self._guard.fullmatch(rx, text):
                    return (0.1 if not text else 0.05), "weak"
            return 0.0, ""
        full = 0.15 + 0.85 * info.specificity
        weak = info.specificity < MIN_SPECIFICITY
        runs = self._lower_runs[i]
        in_order = runs_in_order(runs, lower)
        # Cheap necessary conditions first: most failing full matches never reach the regex.
        if (
            in_order
            and (not info.starts_with_run or lower.startswith(runs[0]))
            and (not info.ends_with_run or lower.endswith(runs[-1]))
            and len(text) <= MAX_REGEX_CHARS
        ):
            rx = self._regex(i)
            if rx is not None and self._guard.fullmatch(rx, text):
                return full, "weak" if weak else "full"
        if info.literal_chars < 6 or weak:
            return 0.0, ""
        # Line breaks and spacing differ between how a site builds its text and how a user
        # pastes it (wrapped, joined, a "\n" lost in an issue title): compare it loosely.
        norm_runs = self._norm_runs[i]
        if in_order or (norm_runs and runs_in_order(norm_runs, norm)):
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
            parts = path_parts(fr.path)
            if not parts:
                continue
            # Only a frame inside an sglang package says where sglang raised; its path from the
            # package folder on must end the record's path (site-packages and checkouts alike).
            roots = [k for k, part in enumerate(parts) if part in PACKAGE_ROOTS]
            if not roots:
                continue
            need = parts[roots[-1] :]
            for i in self.by_basename.get(parts[-1], ()):
                rparts = path_parts(self.records[i].filePath)
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
            norm = WS_RE.sub(" ", lower)
            words = set(WORD_RE.findall(lower))
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
            custom_class = qcls not in BUILTIN_PARENTS and qcls in self.by_class
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
        return root in PACKAGE_ROOTS  # an unqualified errorClass is sglang's own or a builtin

    def match(self, text: str, top: int | None = 10) -> list[Match]:
        """Rank the records that may have raised the error in ``text``, best first."""
        queries = parse_query(text, self.hierarchy)
        best: dict[int, tuple[float, tuple[str, ...]]] = {}
        with self._guard:
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
