"""The dataset indexed once, and every record ranked against the exceptions of one input."""

from __future__ import annotations

import gc
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from extractor.datasets.match.choices import named_choices
from extractor.datasets.match.classes import BUILTIN_PARENTS, ClassHierarchy, last_name
from extractor.datasets.match.patterns import WORD_RE, WS_RE, PatternInfo, analyse_pattern, runs_in_order
from extractor.datasets.match.prefix import HEAD_CHARS, head_words, prefix_cover, strip_ellipsis
from extractor.datasets.match.query import PACKAGE_ROOTS, Frame, QueryException, parse_query, path_parts
from extractor.datasets.match.regex_guard import REGEX_SECONDS, RegexGuard
from extractor.datasets.match.results import (
    WHY,
    Evidence,
    Match,
    MatchGroup,
    distinct_groups,
    explain,
    label,
    qualifies,
    reach_explain,
    reach_why,
    why,
)
from extractor.datasets.match.sites import function_name, statement_lines
from extractor.records import message_pattern
from extractor.records.jsonl import load_records
from extractor.records.model import ErrorRecord

MAX_REGEX_CHARS = 2000
"""Longest message a candidate regex is run on; longer text is judged by literal runs and words."""

MIN_SPECIFICITY = 0.2
"""Below this a pattern (``{a}: {b}``) is too generic to name a site from its message alone."""
MAX_EXCEPTIONS = 400
"""Distinct exceptions of one input weighed at most (a log repeating one error costs one)."""
MAX_GROUPS = 100
"""Distinct errors of one input reported at most, the first ones in the input."""
MIN_PREFIX_CHARS = 16
"""Literal characters a cut-short message must reach in a pattern before it names that site."""
PREFIX_WEIGHT = 0.8
"""A cut-short match is worth this share of a full match of the same text (all of it when the
user marked the cut with "…")."""
CUT_UNEXPLAINED = 0.4
"""Share of a full match's level, for a text marked as cut short, that depends on how much of
the text the pattern's literals spell out."""
FUZZY_MIN_RECALL = 0.6
"""Share of a record's (idf-weighted) literal words the message must hold for a loose match."""
CHOICE_POINTS = 0.5
"""Points for each choice the input names (an architecture, a backend) that reaches a site, for
two at most: a tiebreak between sites the rest of the evidence scores alike (two sites sharing a
message), never enough to lift a weaker match over a literal one."""
MAX_CHOICES = 2


def fuzzy_words(words: Iterable[str]) -> frozenset[str]:
    """Words with the parts of each ``snake_case`` identifier among them."""
    out = set(words)
    for w in words:
        if "_" in w:
            out.update(part for part in w.split("_") if len(part) >= 2)
    return frozenset(out)


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
        self._compiled: dict[int, message_pattern.Matcher | None] = {}
        # A bare wildcard or a handful of letters matches nearly anything: such a match is weak.
        self._says_nothing = [message_pattern.identifies_nothing(r.messagePattern) for r in self.records]
        self._guard = RegexGuard(REGEX_SECONDS)
        self.classes = [last_name(r.errorClass) for r in self.records]
        df: dict[str, int] = defaultdict(int)
        for info in self.infos:
            for w in info.safe_words:
                df[w] += 1
        # The loose word match also compares the parts of identifiers: a field renamed between
        # releases (mode= -> run_mode=) keeps most of its parts.
        self.fuzzy_words = [fuzzy_words(info.safe_words) for info in self.infos]
        fuzzy_df: dict[str, int] = defaultdict(int)
        for ws in self.fuzzy_words:
            for w in ws:
                fuzzy_df[w] += 1
        n = max(1, len(self.records))
        self.idf = {w: math.log(1 + n / c) for w, c in fuzzy_df.items()}
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
                    for w in self.fuzzy_words[i]:
                        self.by_word[w].append(i)
            elif info.literal_chars > 0:
                self.unanchored.append(i)
            parts = path_parts(record.filePath)
            if parts:
                self.by_basename[parts[-1]].append(i)
            self.by_class[self.classes[i]].append(i)
        self.functions = [function_name(r) for r in self.records]
        # The choices that reach a site are among its tags (see extractor.records.reach_tags).
        self.tags = [frozenset(r.tags) for r in self.records]
        self._tag_vocabulary = frozenset().union(*self.tags)
        self._statements: dict[int, frozenset[str]] = {}
        # A cut-short message keeps the pattern's first words: each record is found by the rarest.
        self.by_head: dict[str, list[int]] = defaultdict(list)
        for within in HEAD_CHARS:
            heads = [
                [w.lower() for w in head_words(self._lower_runs[i], info.starts_with_run, within)]
                if info.literal_chars >= MIN_PREFIX_CHARS and info.specificity >= MIN_SPECIFICITY
                else []
                for i, info in enumerate(self.infos)
            ]
            head_df: dict[str, int] = defaultdict(int)
            for head in heads:
                for w in set(head):
                    head_df[w] += 1
            for i, head in enumerate(heads):
                if head:
                    key = min(head, key=lambda w: (head_df[w], -len(w), w))
                    if not self.by_head[key] or self.by_head[key][-1] != i:
                        self.by_head[key].append(i)
        self._word_weight = [sum(self.idf[w] for w in ws) for ws in self.fuzzy_words]
        # Words in more than 1 record in 20 say little and cost most: the loose match's prefilter
        # looks at the rarer words only, each record needing most of its own rarer words' weight.
        self._fuzzy_cap = max(50, n // 20)
        self._rare_weight = [
            sum(self.idf[w] for w in ws if fuzzy_df[w] <= self._fuzzy_cap) for ws in self.fuzzy_words
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
        # Linear in the text whatever the pattern: no backtracking engine runs a dataset's patterns.
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
            head = self.by_head.get(w)
            if head:
                cands.update(head)
        return cands

    def statement(self, i: int) -> frozenset[str]:
        found = self._statements.get(i)
        if found is None:
            found = self._statements[i] = statement_lines(self.records[i])
        return found

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

    def _message_level(
        self, i: int, text: str, lower: str, norm: str, cut: bool = False
    ) -> tuple[float, str]:
        """How well the site's pattern explains ``text``: a level in 0..1 and its kind.

        ``lower`` is the text lower-cased, ``norm`` that with every whitespace run made one space;
        ``cut`` says the user marked the text as cut short ("…"), so its end is no message's end.
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
        in_order = runs_in_order(runs, lower)
        # Cheap necessary conditions first: most failing full matches never reach the regex.
        if (
            in_order
            and (not info.starts_with_run or lower.startswith(runs[0]))
            and (not info.ends_with_run or lower.endswith(runs[-1]))
            and len(text) <= MAX_REGEX_CHARS
        ):
            rx = self._regex(i)
            if rx is not None and rx.fullmatch(text):
                if cut:
                    # A text cut short matches any site whose trailing placeholder swallows its
                    # end; one whose literals spell out more of it is likelier the one cut.
                    explained = min(1.0, info.literal_chars / max(1, len(text.strip())))
                    full *= 1 - CUT_UNEXPLAINED + CUT_UNEXPLAINED * explained
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
        return self._prefix_level(i, norm.strip(), cut), "prefix"

    def _prefix_level(self, i: int, norm: str, cut: bool) -> float:
        """A message cut short (title, first line, tail dropped): below any full match of it."""
        info = self.infos[i]
        if info.literal_chars < MIN_PREFIX_CHARS or len(norm) < MIN_PREFIX_CHARS:
            return 0.0
        covered = prefix_cover(self._norm_runs[i], info.starts_with_run, norm)
        explained = covered / len(norm)
        if covered < MIN_PREFIX_CHARS or explained < 0.5:
            return 0.0
        # As specific as the part of the pattern the text reaches, and never a full match's level.
        reached = PatternInfo((), covered, info.placeholders, frozenset(), False).specificity
        weight = 1.0 if cut else PREFIX_WEIGHT
        return weight * (0.15 + 0.85 * reached) * (0.5 + 0.5 * explained)

    def _fuzzy_level(self, i: int, words: set[str], query_weight: float) -> float:
        info = self.infos[i]
        if len(info.safe_words) < 2 or self._word_weight[i] <= 0 or query_weight <= 0:
            return 0.0
        shared = sum(self.idf[w] for w in self.fuzzy_words[i] & words)
        recall = shared / self._word_weight[i]
        precision = shared / query_weight
        if recall < FUZZY_MIN_RECALL or shared <= 0:
            return 0.0
        f2 = 5 * precision * recall / (4 * precision + recall)
        return 0.45 * f2 if f2 >= 0.5 else 0.0

    def _frame_evidence(self, frames: Sequence[tuple[Frame, float]], ev: dict[int, Evidence]) -> None:
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
                moved = len(rparts) < len(need) or rparts[-len(need) :] != need
                d = abs(fr.line - self.records[i].lineNumber)
                # Line numbers drift between releases; the printed source line and the function
                # name do not (unless the statement itself changed).
                same_source = bool(fr.source) and fr.source in self.statement(i)
                same_function = bool(fr.function) and fr.function == self.functions[i]
                if moved and not (same_source and same_function):
                    continue  # another file of that name, unless the same statement moved there
                near = math.exp(-d / 15)
                if same_source:
                    near = max(near, 0.7 + 0.2 * same_function + 0.1 * near)
                score = weight * (0.35 + 0.65 * near) * (0.7 if moved else 1.0)
                e = ev.setdefault(i, Evidence())
                if score > e.frame:
                    e.frame = score
                    how = f"{d} lines away"
                    if same_source:
                        how += ", same source line" + (" in the same function" if same_function else "")
                    where = "/".join(need) + (" (file moved)" if moved else "")
                    e.frame_why = f"traceback frame {where}:{fr.line} ({how})"
                if d <= 2 or (d <= 5 and weight >= 0.8) or (same_source and (same_function or weight >= 0.8)):
                    e.frame_close = True

    def _evidence(self, q: QueryException) -> dict[int, Evidence]:
        ev: dict[int, Evidence] = {}
        qcls = last_name(q.cls) if q.cls else None

        def note(i: int, level: float, kind: str) -> None:
            e = ev.setdefault(i, Evidence())
            if level > e.message:
                e.message, e.message_kind, e.message_why = level, kind, WHY[kind]

        cut_texts = {strip_ellipsis(t) for t, _ in q.variants} - {None}
        for text, vweight in q.variants:
            cut = text in cut_texts
            lower = text.lower()
            norm = WS_RE.sub(" ", lower)
            words = set(WORD_RE.findall(lower))
            for i in self._message_candidates(words):
                level, kind = self._message_level(i, text, lower, norm, cut)
                if level > 0:
                    note(i, level * vweight, kind)
            known = {w for w in fuzzy_words(words) if w in self.idf}
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
                        ev.setdefault(i, Evidence()).cls = 1.0
        return {i: e for i, e in ev.items() if qualifies(e, custom_class)}

    def _same_package(self, root: str, i: int) -> bool:
        """Whether a class qualified under ``root`` can be the one record ``i`` raises."""
        declared = self.records[i].errorClass
        if "." in declared:
            return declared.split(".")[0] == root
        return root in PACKAGE_ROOTS  # an unqualified errorClass is sglang's own or a builtin

    def match(self, text: str, top: int | None = 10) -> list[Match]:
        """Rank the records that may have raised the error in ``text``, best first.

        Every error of the input competes in one list; :meth:`match_groups` ranks each apart.
        """
        return self._rank(self._all_evidence(parse_query(text, self.hierarchy)), top, self._choices(text))

    def match_groups(self, text: str, top: int | None = 10) -> list[MatchGroup]:
        """One ranked list per distinct error of the input (a log may hold several), in input order.

        Errors that read the same (the same traceback printed by two ranks) or whose best site is
        the same are one group; an input with one error gives one group, ranked as :meth:`match`.
        """
        return distinct_groups(self.rank_groups(text, top))

    def rank_groups(self, text: str, top: int | None = 10) -> dict[int, MatchGroup]:
        """Every error of the input (keyed by the line it starts at) with its ranked sites."""
        by_group: dict[int, list[tuple[QueryException, dict[int, Evidence]]]] = defaultdict(list)
        for q, found in self._all_evidence(parse_query(text, self.hierarchy)):
            if q.group in by_group or len(by_group) < MAX_GROUPS:
                by_group[q.group].append((q, found))
        # The launch arguments a log prints hold for every error in it.
        named = self._choices(text) if by_group else frozenset()
        return {
            g: MatchGroup(label(items), self._rank(items, top, named))
            for g, items in sorted(by_group.items())
        }

    def _choices(self, text: str) -> frozenset[str]:
        """The choices ``text`` names that reach some record (as the records' tags spell them)."""
        return named_choices(text) & self._tag_vocabulary

    def _all_evidence(
        self, queries: Sequence[QueryException]
    ) -> list[tuple[QueryException, dict[int, Evidence]]]:
        """Evidence for each exception; one that a log repeats (every rank prints it) is weighed once."""
        done: dict[tuple[object, ...], dict[int, Evidence]] = {}
        out = []
        with self._guard:
            for q in queries:
                key = (q.cls, tuple(q.variants), tuple(q.frames))
                found = done.get(key)
                if found is None:
                    if len(done) >= MAX_EXCEPTIONS:
                        continue
                    found = done[key] = self._evidence(q)
                out.append((q, found))
        return out

    def _rank(
        self,
        evidence: Sequence[tuple[QueryException, dict[int, Evidence]]],
        top: int | None,
        named: frozenset[str] = frozenset(),
    ) -> list[Match]:
        best: dict[int, tuple[float, QueryException, Evidence]] = {}
        for q, found in evidence:
            for i, e in found.items():
                score = e.total(q.weight)
                if i not in best or score > best[i][0]:
                    best[i] = (score, q, e)
        reached: dict[int, list[str]] = {}
        if named:
            for i in best:
                shared = sorted(named & self.tags[i])
                if shared:
                    reached[i] = shared[:MAX_CHOICES]
        points = {i: CHOICE_POINTS / 100 * len(shared) for i, shared in reached.items()}
        ranked = sorted(
            best.items(),
            key=lambda kv: (
                -round(kv[1][0] + points.get(kv[0], 0.0), 6),
                -self.infos[kv[0]].specificity,
                self._sort_key(kv[0]),
            ),
        )
        if top is not None:
            ranked = ranked[:top]
        out = []
        for i, (s, q, e) in ranked:
            reasons, parts = why(q, e), explain(q, e)
            if i in reached:
                reasons = (*reasons, reach_why(reached[i]))
                parts = (*parts, reach_explain(reached[i], points[i]))
            score = round(min(100.0, 100 * (s + points.get(i, 0.0))), 1)
            out.append(Match(score, self.records[i], reasons, parts))
        return out

    def _sort_key(self, i: int) -> tuple[str, int, str]:
        r = self.records[i]
        return (r.filePath, r.lineNumber, r.id)
